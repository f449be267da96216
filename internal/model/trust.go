package model

// Trust is the verdict on a case's budget: whether its shares can be read
// as the timed executions', and if not, why. A nil *Trust (runs made
// before budgets were judged) is unknown, not trusted.
type Trust struct {
	// Reasons are why the budget cannot be trusted; none: it can.
	Reasons []TrustReason `json:"reasons,omitempty"`
}

// Trusted reports whether t is known and has no reason against it.
func (t *Trust) Trusted() bool { return t != nil && len(t.Reasons) == 0 }

// Untrusted reports whether t is known and has a reason against it.
func (t *Trust) Untrusted() bool { return t != nil && len(t.Reasons) > 0 }

// Has reports whether t has a reason of kind k.
func (t *Trust) Has(k TrustKind) bool {
	if t == nil {
		return false
	}
	for _, r := range t.Reasons {
		if r.Kind == k {
			return true
		}
	}
	return false
}

// TrustReason is one reason a budget cannot be trusted: a kind and the
// figure behind it, so that every renderer words it its own way.
type TrustReason struct {
	Kind TrustKind `json:"kind"`
	// Value is the figure: a ratio for TracedOff and TracerEffect, a
	// count for FewSamples, a half-width in shares for SampleError, a
	// share of the workers' time for RecordsLost, SharedHelpers,
	// HelpersCharged, WindowContended and WindowCPUWait, a rate per
	// millisecond of running for Handoffs.
	Value float64 `json:"value"`
	// Limit is the threshold Value was judged against.
	Limit float64 `json:"limit,omitempty"`
}

// TrustKind names a reason a budget cannot be trusted.
type TrustKind string

// The reasons a budget cannot be trusted.
const (
	// TracedOff: the traced executions' time/op was Value × the timed
	// median (beyond Limit either way): the budget's shares describe
	// executions that ran differently from the timed ones.
	TracedOff TrustKind = "traced-off"
	// TracerEffect: paired round by round, traced over untraced time/op
	// was Value, beyond Limit either way, its interval clear of 1 (or,
	// slower, where the tracer is known to act: its own functions or
	// system calls held a part of the traced time): the tracer itself
	// slows what the case does (each system call, each park is an event
	// with a stack), so the shares of what emits events are too large.
	TracerEffect TrustKind = "tracer-effect"
	// TracerBusy: the tracer's own functions took Value of the workers'
	// traced time (Window.TracerOwn), beyond Limit. The budget leaves
	// that time out, but where a helper ran the tracer's code beside a
	// sibling's hashing, the untraced operation was not that much
	// shorter, so the shares can be off by up to Value.
	TracerBusy TrustKind = "tracer-busy"
	// FewSamples: the workers' running time was split by Value CPU
	// samples, fewer than Limit.
	FewSamples TrustKind = "few-samples"
	// SampleError: the CPU samples that split running time place the
	// budget's widest share only to ±Value (the half-width of its 95%
	// interval, a share of time/op; Case.BudgetErr), beyond Limit.
	// Runs made before this mark carry only the ± itself.
	SampleError TrustKind = "sample-error"
	// RecordsLost: the kernel's context-switch records were lost while
	// the workers' threads waited for a CPU Value of their time: where
	// that wait goes in the budget is an estimate.
	RecordsLost TrustKind = "records-lost"
	// SharedHelpers: Value of the workers' time was charged to helper
	// goroutines several workers fed (a pool reading a channel), beyond
	// Limit: which worker's job such a goroutine ran is in no trace
	// event, so what it did is charged to whichever worker it woke.
	SharedHelpers TrustKind = "shared-helpers"
	// HelpersCharged: Value of the workers' time is their helpers'
	// running, charged to the workers' waits (the critical path), beyond
	// Limit. Runs made before the helpers' running was split by the CPU
	// samples within the charged time carry it; Judge no longer gives it.
	HelpersCharged TrustKind = "helpers-charged"
	// Handoffs: the workers woke each other Value times per millisecond
	// of their running time, beyond Limit. The CPU samples that split
	// running time land, at such hand-offs, in the code that runs after
	// them, so the budget's work row reads high (issue 22: 15–45% more
	// samples in the hashing than its thread CPU time).
	Handoffs TrustKind = "handoffs"
	// WindowContended: another program kept the workers' threads from a
	// CPU Value of their time in the traced executions (beyond Limit),
	// and not in the timed rounds: the budget's sched is that program's
	// doing, and it describes executions the timed ones were not.
	WindowContended TrustKind = "window-contended"
	// WindowCPUWait: as WindowContended, where whose threads had the CPU
	// is not known (no exact kernel records, or too many switches to
	// keep whose thread had each CPU: Window.OSOwnUnknown): the workers'
	// threads waited for a CPU Value of their time in the traced
	// executions (beyond Limit), and not in the timed rounds, for
	// another program or for the process's own threads.
	WindowCPUWait TrustKind = "window-cpu-wait"
)
