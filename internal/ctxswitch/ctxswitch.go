// Package ctxswitch reads what the kernel says of this process's threads'
// scheduling: the context-switch records (perf_event_open,
// PERF_RECORD_SWITCH; Recorder) — when each thread was preempted, for how
// long, and whose thread took its CPU — and each thread's schedstat totals
// (ReadSchedStats). Package wallclock charges the preempted intervals to
// the goroutines Go had on the threads; this package knows nothing of
// goroutines or traces.
package ctxswitch

import "time"

// Preemption is an interval thread TID was taken off its CPU while still
// runnable, waiting for one: From and To are CLOCK_MONOTONIC nanoseconds
// (Go's nanotime, which the trace's clock snapshots relate to its own).
//
// ByWoken is how long, from From, the CPU went to another thread of this
// process that had just been woken from a sleep (it came on the CPU within
// 20 µs of this one leaving it): Go woke a thread (to run a goroutine this
// one readied, or its network poller) and the kernel ran it here. Zero
// when another program, or a thread of the process only having its turn,
// took the CPU.
type Preemption struct {
	TID, From, To int64
	ByWoken       time.Duration
	// ByOwn is how much of it the process's other threads had the CPU
	// the thread left, ByWoken included; the rest another program had.
	ByOwn time.Duration
}

// SchedStat is one thread's kernel scheduling figures
// (/proc/self/task/TID/schedstat): time on a CPU, and time waiting in the
// run queue for one.
type SchedStat struct{ Run, Wait time.Duration }
