package runner

import (
	"io"
	"runtime"
	"runtime/pprof"
)

// CPUProfileHz is the CPU profiler's rate while a case is traced, in
// perflab run's slices and in perflab bench's traced run. Its
// samples, tagged by goroutine in the trace, split the workers' running
// time between categories, and the split's ± narrows as the square root
// of their number. runtime/pprof fixes 100 Hz: one goroutine got about
// 120 samples in the default 1.2 s of slices, which split cipher-cache's
// running time only to ±3 to ±12 points, and most one-goroutine budgets
// were marked for it (issue 22). Linux's per-thread CPU timers (Go 1.18
// and later) fire at the kernel's clock tick at most, 250 Hz on common
// kernels (CONFIG_HZ=250, this project's 2-core VM among them): a higher
// rate would give no more samples there.
const CPUProfileHz = 250

// startCPUProfile starts the CPU profiler at hz, writing to w, as
// pprof.StartCPUProfile does at its fixed 100 Hz. runtime/pprof has no
// option for the rate (golang/go#42502); the way, the one Go's own
// issues and other profilers use, is to set it with
// runtime.SetCPUProfileRate first. pprof.StartCPUProfile's own
// SetCPUProfileRate(100) then fails, leaving hz in force and in the
// profile's header, and the runtime prints "cannot set cpu profile rate
// until previous profile has finished" to standard error
// (golang/go#79900), which quietStderr keeps from the user's terminal.
// Where the rate cannot be set first, the profile runs at 100 Hz.
func startCPUProfile(w io.Writer, hz int) error {
	if hz <= 0 || hz == 100 {
		return pprof.StartCPUProfile(w)
	}
	var err error
	quietStderr(func() {
		runtime.SetCPUProfileRate(hz)
		err = pprof.StartCPUProfile(w)
	})
	return err
}
