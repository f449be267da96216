package truth

import (
	"syscall"
	"unsafe"
)

// clockThreadCPUTime is CLOCK_THREAD_CPUTIME_ID.
const clockThreadCPUTime = 3

// threadCPU returns the calling thread's CPU time in nanoseconds. The
// kernel updates it on every read, so it is exact to the nanosecond, and
// it stands still while the thread waits in the run queue. RawSyscall:
// clock_gettime never blocks, and the scheduler need not hear of it.
func threadCPU() int64 {
	var ts syscall.Timespec
	if _, _, e := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return -1
	}
	return ts.Nano()
}

const haveThreadCPU = true

// cpuClockCost returns the CPU time one read of the thread CPU clock adds
// to an interval measured with two: the least of a few back-to-back pairs.
func cpuClockCost() int64 {
	best := int64(-1)
	for range 16 {
		a := threadCPU()
		b := threadCPU()
		if d := b - a; d >= 0 && (best < 0 || d < best) {
			best = d
		}
	}
	return max(0, best)
}
