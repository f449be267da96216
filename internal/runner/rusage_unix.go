//go:build linux || darwin || freebsd || netbsd || openbsd

package runner

import (
	"syscall"
	"time"
)

// processCPU returns the user+system CPU time of the whole process, GC
// workers included.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
