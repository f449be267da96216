package model

// Window is what the profiling window of a case measured, from the
// execution trace of its worker goroutines. The budget's shares come from
// this window and are applied to the timed median, so the window's own
// time/op is kept to show whether profiling changed the behaviour.
type Window struct {
	// Source is "slices" when the trace was taken in short traced
	// repetitions interleaved with the timed ones, each beside a timed
	// repetition of the same round ("" or "window": one window after
	// the rounds). Seconds, Ops and the shares are then the slices'
	// together.
	Source string `json:"source,omitempty"`
	// Slices is how many traced slices the budget was taken from, each
	// weighing the same in it; NsPerOp is then their median time/op.
	Slices int `json:"slices,omitempty"`
	// Traced summarises the traced slices' time/op, one per slice (nil
	// for a window); TracedReps are those time/ops and their rounds, in
	// the order taken, to set beside the timed repetitions.
	Traced     *Stat       `json:"traced,omitempty"`
	TracedReps []TracedRep `json:"traced_reps,omitempty"`
	// Tracer is the tracer's own effect on time/op: each round's traced
	// slice over that round's timed repetition, summarised (median and
	// its 95% interval). Paired by round, so the machine's drift between
	// rounds is out of it. Nil for a window, and in older runs: unknown.
	Tracer *Stat `json:"tracer,omitempty"`
	// TracerOwn is the share of the workers' traced time (with the
	// helpers' time charged to them) at stacks in the tracer's own
	// functions (profiles.TracerFrame): time the traced executions spent
	// that the timed ones did not. The budget leaves it out; the
	// tracer's effect (Tracer) is judged as measured, with it, and from
	// 1% (runner's minTracerOwn), as from 5% in system calls (Syscall),
	// marks without a significant interval. 0 in older runs.
	TracerOwn float64 `json:"tracer_own,omitempty"`
	// Seconds is how long the window ran; Ops how many operations it did.
	Seconds float64 `json:"seconds"`
	Ops     int64   `json:"ops"`
	// NsPerOp is the window's wall time per operation.
	NsPerOp float64 `json:"ns_per_op"`
	// Running, Runnable, Blocked and Syscall are the shares of the worker
	// goroutines' time in each scheduling state (they add up to 1).
	Running  float64 `json:"running"`
	Runnable float64 `json:"runnable"`
	Blocked  float64 `json:"blocked"`
	Syscall  float64 `json:"syscall,omitempty"`
	// HelpedRunning is the share of the workers' time (in Blocked and
	// Runnable) that helper goroutines were running while the workers
	// waited for them: the budget splits it by the helpers' CPU samples,
	// as it splits Running by the workers' (wallclock's critical path).
	HelpedRunning float64 `json:"helped_running,omitempty"`
	// HelpedOSWait is the share of the workers' time charged to helpers
	// whose threads waited for a CPU while they ran to Go (the kernel
	// preempted them; known only with its context-switch records): sched
	// in the budget, at the stacks the helpers' samples say they ran, as
	// a worker's OSWait is (that part is in HelpedRunning), or at no
	// stack where the preemption began as a helper began to run (not in
	// HelpedRunning).
	HelpedOSWait float64 `json:"helped_os_wait,omitempty"`
	// SharedHelped is the share of the workers' time charged to helpers
	// that several workers fed (a shared pool), whose jobs the trace
	// cannot tell apart (trust: SharedHelpers).
	SharedHelped float64 `json:"shared_helped,omitempty"`
	// HelperSamples is the number of the helpers' CPU samples taken
	// within HelpedRunning, each at the share of its instant charged
	// (two helpers running at once: a half each), which split it as
	// CPUSamples split Running.
	HelperSamples int `json:"helper_samples,omitempty"`
	// Occupancy is the workers' time over threads × Seconds: below 1 when
	// workers start late or finish early (a Mutex that lets its holder
	// barge makes workers finish unevenly), time that is in the wall time
	// per operation but in no category of the budget.
	Occupancy float64 `json:"occupancy"`
	// BackgroundGCNsPerOp is the CPU time of the runtime's background GC
	// mark workers per operation: GC work that is in cpu/op but in no
	// worker's wall time, so it is shown beside the budget, not in it.
	BackgroundGCNsPerOp float64 `json:"background_gc_ns_per_op"`
	// GCPerOp is the GC cycles that ended during the window per operation,
	// to compare with the timed repetitions' gc/op: a small heap's GC
	// runs as often as the heap's size makes it, profilers' buffers
	// included.
	GCPerOp float64 `json:"gc_per_op,omitempty"`
	// OSWait is the share of the workers' time their thread waited for a
	// CPU while Go had them running or in a system call (another process
	// on the cores); it is in Runnable and in sched.
	OSWait float64 `json:"os_wait,omitempty"`
	// Handoffs is how many times a worker woke another worker from a wait
	// (an Unlock, a send) per millisecond of the workers' running time
	// (trust: Handoffs).
	Handoffs float64 `json:"handoffs,omitempty"`
	// OSWake is the share their thread waited for a CPU that a thread of
	// the process, just woken by the worker's own call (an Unlock, a send,
	// a pipe's write), had taken: in Runnable, and in the waking call's
	// category (lock, wait), not in sched or in OSWait.
	OSWake float64 `json:"os_wake,omitempty"`
	// OSOwn is the part of OSWait during which another thread of the
	// process had the CPU (the process's own threads taking turns, the
	// runtime's woken for a hand-off), from the kernel's records; the rest
	// of OSWait another program had. Only with OSWaitExact.
	OSOwn float64 `json:"os_own,omitempty"`
	// OSUnseen is the CPU time of the process's threads that ran without
	// the recorder seeing them (started during the window, until found;
	// and the whole life of one whose records could not be opened), over
	// the workers' time: up to that much of the rest of OSWait may have
	// been the process's own too. Only with OSWaitExact.
	OSUnseen float64 `json:"os_unseen,omitempty"`
	// OSOwnUnknown says the records were too many to tell whose thread
	// had each CPU (OSOwn is then 0, and says nothing).
	OSOwnUnknown bool `json:"os_own_unknown,omitempty"`
	// OSWaitExact says OSWait is the sum of the kernel's records of each
	// preemption of the workers' threads (perf_event_open's context-switch
	// records), each charged to what its goroutine was doing then; false,
	// it is estimated from per-thread totals (/proc schedstat), which
	// cannot tell a wait in a system call from one while running.
	OSWaitExact bool `json:"os_wait_exact,omitempty"`
	// OtherCPUs is how many CPUs, on average over the window, the machine
	// spent on anything but this process (/proc/stat's busy ticks less the
	// process's CPU time): whether another program can have been what kept
	// the workers' threads from a CPU (OSWait), or the process's own
	// threads were. Nil where the system does not say.
	OtherCPUs *float64 `json:"other_cpus,omitempty"`
	// Steal is the share of the machine's CPU time in the window that the
	// hypervisor gave to other guests (/proc/stat): time the workers'
	// threads lost while, to the guest's kernel, they were running. Nil
	// where the system does not say.
	Steal *float64 `json:"steal,omitempty"`
	// CPUSamples is the number of the workers' CPU samples that split
	// their running time between categories.
	CPUSamples int `json:"cpu_samples"`
	// Goroutines is the number of worker goroutines traced (each timed
	// repetition starts its own).
	Goroutines int `json:"goroutines"`
	// Counts are the scenario's own counters (perflab.Counter) over the
	// window, per operation, by name ("hits/op"): what a self-timing
	// scenario measured of itself in the window the budget comes from,
	// to check the budget against.
	Counts map[string]float64 `json:"counts,omitempty"`
}

// TracedRep is one traced slice's time/op and the round it was taken in
// (0-based; the timed repetitions of a case are one a round, in order).
type TracedRep struct {
	Round   int     `json:"round"`
	NsPerOp float64 `json:"ns_per_op"`
}
