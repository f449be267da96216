//go:build !linux

package truth

func threadCPU() int64 { return -1 }

const haveThreadCPU = false

func cpuClockCost() int64 { return 0 }
