// Package truth is the ground-truth suite of perflab's time budget.
//
// Its scenario (Scenario, never registered, so not in `perflab list`)
// hashes 16 KiB with SHA-256 per operation, with and without locks, a
// channel semaphore, allocation and sleeps, and every worker times its own
// pieces with time.Now: how long it spent in Lock and Unlock, in the
// semaphore's send and receive, in a sleep, allocating and hashing. Those
// times are the truth a budget must agree with; TestTruthBudget runs the
// scenario through the real runner, in perflab's default mode (traced
// slices beside the timed rounds; -truth.trace=window for the other), and
// compares every row of every case's budget with what the workers timed
// in the traced executions themselves (Recorder.TracedOnly), slice by
// slice.
//
// Each case is held three ways:
//
//   - The hashing against the thread's CPU clock: a worker that hashes
//     locks its goroutine to its thread for the hashing and reads
//     CLOCK_THREAD_CPUTIME_ID around it (hashOnCPU), so the truth knows
//     the hashing's on-CPU time whatever took the CPU — another goroutine
//     or another program. The budget's work row must equal it.
//   - "Where the wall time went" (the wall rows): each budget row plus the
//     sched the budget says was taken from it (runner.SchedBy) against the
//     workers' stopwatches, with no model; the sched with no stack
//     against the start-up wait.
//   - The model (Analyze) of how much of the workers' demand for CPU the
//     Ps could not serve, for the pieces no clock splits.
//
// What time.Now cannot see is whether a goroutine held a CPU: the time
// around the hashing of four goroutines on two cores includes time spent
// runnable while others hashed, which is sched, not work. A Recorder logs,
// during the traced executions only, when each worker entered and left Run
// and every synchronisation call, and Analyze computes from that timeline
// how much of the workers' demand for CPU the Ps could not serve (see
// Analyze for the model). The collector and, on a loaded machine, the
// kernel take CPUs too: runtime/metrics and the threads' run-queue delays
// bound how much, and the model's truth becomes a range that is tight on
// an idle machine.
//
// make truth runs the suite quiet, make truth-loaded beside one process
// spinning on a CPU (-truth.spin=1: the test binary itself, which exits
// when the suite's process does); make test runs both.
//
// The classes of issue 22 (helpers.go) hand the hashing to goroutines the
// worker starts (fanout-wg, fanout-chan) or feeds (pool-chan, a pool shared
// by the case's workers), where the truth of the worker's wait is the part
// of it during which one of its helpers hashed; take two locks in sequence
// (mutex-pipeline); wait on a sync.Cond (cond); and make system calls
// (pipe). RWMutex readers with a writer are the rwmutex variant. Rows a
// stopwatch cannot split as the budget does are asserted summed
// (combined). A row off the truth fails the suite unless the budget is
// marked untrusted (model.Case.BudgetTrust) with its reason: at two goroutines
// with a lock, the workers' hand-offs put more CPU samples in the hashing
// than its thread CPU time, and the runner marks such budgets
// (model.Handoffs) by how often the workers woke each other.
//
// The suite takes about four minutes on the 2-core VM and skips itself
// under -race and -short:
//
//	go test -count=1 -run Truth -v ./internal/truth/
//
// -truth.variants and -truth.threads narrow it, -truth.spin=N runs it
// beside N spinning processes, -truth.dump=DIR writes every case's
// profiles for go tool pprof. BenchmarkTracerCost measures the tracer's
// cost per class (traced vs untraced time/op, paired windows).
package truth
