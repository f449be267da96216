package profiles

// Off-CPU time. A wall-clock profile made from an execution trace knows, for
// every interval a goroutine spent off the CPU, its state (blocked, runnable,
// in a system call), the runtime's reason and the stack where it stopped.
// The category of such an interval is decided once, when it is recorded, and
// carried by a leaf frame named by StateFrame, so that a flame graph of the
// profile and its Breakdown agree with the budget frame by frame.

// StateFrame returns the name of the synthetic leaf frame that carries the
// category of an off-CPU interval: "[lock] blocked (sync)". The built-in
// rules classify such a frame by the category in its brackets.
func StateFrame(c Category, state string) string {
	return "[" + string(c) + "] " + state
}

// gcReasons are the tracer's block reasons (runtime.traceBlockReasonStrings,
// Go 1.26) that mean the garbage collector stopped the goroutine: an assist
// waiting for mark work, a wait for the cycle to end, or a suspension to scan
// its stack ("preempted" as a block reason, not as a GoStop reason).
var gcReasons = map[string]bool{
	"GC mark assist wait for work": true,
	"wait until GC ends":           true,
	"GC weak to strong wait":       true,
	"preempted":                    true,
}

// OffCPU returns the category of time a goroutine spent blocked, with stack
// (function names, leaf first) where it blocked and the tracer's reason.
//
// A user rule that matches any frame of the stack decides, leaf-most first:
// it is how a user says "this channel is my lock", which the leaf-most rule
// (runtime.chansend1, a wait) would otherwise overrule. Otherwise the
// built-in and work rules classify the stack as usual and a lock stays lock
// and GC stays GC; everything else a blocked goroutine does is Wait. It is
// never Work (a goroutine off the CPU does no work) and never Sched (it is
// not waiting for a CPU).
func (r *Rules) OffCPU(stack []string, reason string) Category {
	for _, name := range stack {
		for i := range r.user {
			if ru := &r.user[i]; !ru.Fallback && ru.match(name) {
				return ru.Category
			}
		}
	}
	if gcReasons[reason] {
		return GC
	}
	switch c := r.Classify(stack); c {
	case Lock, GC:
		return c
	}
	return Wait
}

// Yielded returns the category of time a goroutine spent runnable, wanting
// a CPU it did not have, after it was stopped at stack without blocking: a
// preemption, a yield, or the kernel taking its thread off the core. Inside
// a synchronisation call it is that call's: Lock when it yielded inside a
// lock (sync.Mutex's handoff to a starving waiter yields the unlocker's P,
// a spinning waiter is preempted in lockSlow), Wait inside a wait (waking a
// receiver's thread in a send); the call's time is what the caller waited.
// Anywhere else it is Sched.
func (r *Rules) Yielded(stack []string) Category {
	switch c := r.Classify(stack); c {
	case Lock, Wait:
		return c
	}
	return Sched
}
