// Package truth is the ground-truth suite of perflab's time budget.
//
// Its scenario (Scenario, never registered, so not in `perflab list`)
// hashes 16 KiB with SHA-256 per operation, with and without locks, a
// channel semaphore, allocation and sleeps, and every worker times its own
// pieces with time.Now: how long it spent in Lock and Unlock, in the
// semaphore's send and receive, in a sleep, allocating and hashing. Those
// times are the truth a budget must agree with; TestTruthBudget runs the
// scenario through the real runner and compares every row of every case's
// budget with them, as shares measured in the same profiling window.
//
// What time.Now cannot see is whether a goroutine held a CPU: the time
// around the hashing of four goroutines on two cores includes time spent
// runnable while others hashed, which is sched, not work. A Recorder logs,
// during the profiling window only, when each worker entered and left Run
// and every synchronisation call, and Analyze computes from that timeline
// how much of the workers' demand for CPU the Ps could not serve (see
// Analyze for the model and why it was chosen over thread CPU clocks). The
// collector and, on a loaded machine, the kernel take CPUs too: runtime/
// metrics and the threads' run-queue delays bound how much, and the truth
// becomes a range that is tight on an idle machine. One variant,
// nolock-thread, locks its workers to their threads and reads the thread
// CPU clock around the hashing, which says exactly how much of it was on a
// CPU, whatever the load.
//
// The classes of issue 22 (helpers.go) hand the hashing to goroutines the
// worker starts (fanout-wg, fanout-chan) or feeds (pool-chan, a pool shared
// by the case's workers), where the truth of the worker's wait is the part
// of it during which one of its helpers hashed; take two locks in sequence
// (mutex-pipeline); wait on a sync.Cond (cond); and make system calls
// (pipe). RWMutex readers with a writer are the rwmutex variant. Rows a
// stopwatch cannot split as the budget does are asserted summed
// (combined), and cases whose budget is known to be wrong are shown with
// the measured reason, not failed (knownOff).
//
// The suite takes about three minutes and skips itself under -race and
// -short:
//
//	go test -count=1 -run Truth -v ./internal/truth/
//
// -truth.variants and -truth.threads narrow it, -truth.dump=DIR writes
// every case's profiles for go tool pprof.
package truth
