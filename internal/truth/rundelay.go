package truth

import "github.com/perflab/perflab/internal/wallclock"

// runDelays returns, for every thread of the process, the nanoseconds it
// has waited in the kernel's run queue: time a thread was ready to run and
// another process, or another thread, had the CPU. It reads the same
// kernel figure as the runner (wallclock.ReadSchedStats), which is nil
// where the kernel does not keep it (outside Linux).
func runDelays() map[int]int64 {
	st := wallclock.ReadSchedStats()
	if st == nil {
		return nil
	}
	out := make(map[int]int64, len(st))
	for tid, s := range st {
		out[int(tid)] = s.Wait.Nanoseconds()
	}
	return out
}
