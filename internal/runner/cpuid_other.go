//go:build !amd64

package runner

// cpuidName is "" where perflab does not read CPUID: the testing package
// reads it on 386 too, where /proc/cpuinfo's name is taken instead.
func cpuidName() string { return "" }
