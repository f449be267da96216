package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/profiles"
)

// UntrustedMark is what a budget row carries when its budget cannot be
// trusted, before the reason.
const UntrustedMark = "?"

// TrustReason is the short reason a budget cannot be trusted, as the row
// shows it ("traced 1.35× the timed time/op"); "" for a trusted or unknown
// budget. Several reasons are joined with "; ".
func TrustReason(t *model.Trust) string {
	if !t.Untrusted() {
		return ""
	}
	parts := make([]string, 0, len(t.Reasons))
	for _, r := range t.Reasons {
		parts = append(parts, reasonText(r))
	}
	return strings.Join(parts, "; ")
}

func reasonText(r model.TrustReason) string {
	switch r.Kind {
	case model.TracedOff:
		return fmt.Sprintf("traced time/op %s the timed", factor(r.Value))
	case model.TracerEffect:
		return fmt.Sprintf("traced %s untraced, round by round", factor(r.Value))
	case model.TracerBusy:
		return fmt.Sprintf("the tracer's own functions took %.1f%% of the traced time (want under %.0f%%)", 100*r.Value, 100*r.Limit)
	case model.FewSamples:
		return fmt.Sprintf("%.0f CPU samples (want %.0f)", r.Value, r.Limit)
	case model.SampleError:
		// One decimal below 10, so that a ± just over the limit
		// does not read "±5 points (want ±5)".
		pts := fmt.Sprintf("%.0f", 100*r.Value)
		if 100*r.Value < 9.95 {
			pts = fmt.Sprintf("%.1f", 100*r.Value)
		}
		return fmt.Sprintf("CPU samples split running time only to ±%s points (want ±%.0f)", pts, 100*r.Limit)
	case model.RecordsLost:
		return fmt.Sprintf("context-switch records lost (CPU wait %.0f%%)", 100*r.Value)
	case model.HelpersCharged:
		return fmt.Sprintf("%.0f%% charged to helpers' running", 100*r.Value)
	case model.SharedHelpers:
		return fmt.Sprintf("%.0f%% charged to a pool the workers share", 100*r.Value)
	case model.WindowContended:
		return fmt.Sprintf("another program had the CPUs %.0f%% of the traced time, not of the timed", 100*r.Value)
	case model.WindowCPUWait:
		return fmt.Sprintf("threads waited for a CPU %.0f%% of the traced time, not of the timed (another program's or the process's own had it)", 100*r.Value)
	case model.Handoffs:
		return fmt.Sprintf("workers woke each other %.1f times a ms of running: CPU samples land after hand-offs", r.Value)
	}
	// A kind this binary does not know, from a newer run.json.
	return string(r.Kind)
}

// TracerLeftOut says what a budget leaves out of its trace: the time in
// the execution tracer's own functions, which the timed repetitions did
// not spend (runner.SetBudget).
const TracerLeftOut = "Time in the execution tracer's own functions is left out of the budget: the timed repetitions did not spend it."

// tracerOwn is the share of w's traced time the budget left out in the
// tracer's own functions (model.Window.TracerOwn), and whether there is
// one to say: a share, above 0 and below 1. A tampered run.json's 5 or
// -1 is not said ("took 500.0%").
func tracerOwn(w *model.Window) (float64, bool) {
	if w == nil || !(w.TracerOwn > 0 && w.TracerOwn < 1) {
		return 0, false
	}
	return w.TracerOwn, true
}

// factor writes a ratio as the table does: "1.35×".
func factor(x float64) string {
	// Three decimals where two would round into the threshold's band
	// (1/1.053 to 1.053), so that a factor just beyond it does not read
	// "1.05×" as if it were within.
	s := fmt.Sprintf("%.2f", x)
	if s == "1.05" || s == "0.95" {
		s = fmt.Sprintf("%.3f", x)
	}
	return s + "×"
}

// SchedBy says what the goroutines were doing when they lost their CPU,
// in points of the budget: "sched 23 pts, of which work 20, other 3"; ""
// when the case has no sched breakdown or its sched is under half a point.
// The parts are in profiles.Categories order, those under half a point
// left out, unplaced last; time with no stack to say (a worker released and waiting for
// its first CPU, a helper goroutine the operation started waiting to start) is "unplaced".
func SchedBy(c *model.Case) string {
	var total, sched float64
	for _, v := range c.Budget {
		total += v
	}
	for _, v := range c.SchedBy {
		sched += v
	}
	if total <= 0 || len(c.SchedBy) == 0 || 100*sched/total < 0.5 {
		return ""
	}
	type part struct {
		cat string
		pts float64
	}
	var parts []part
	for cat, v := range c.SchedBy {
		if p := 100 * v / total; p >= 0.5 {
			parts = append(parts, part{cat, p})
		}
	}
	order := func(cat string) int {
		if cat == string(profiles.Sched) {
			return len(profiles.Categories) // unplaced, last
		}
		return profiles.Category(cat).Index()
	}
	sort.Slice(parts, func(i, j int) bool {
		if oi, oj := order(parts[i].cat), order(parts[j].cat); oi != oj {
			return oi < oj
		}
		return parts[i].cat < parts[j].cat
	})
	var b strings.Builder
	fmt.Fprintf(&b, "sched %.0f pts", 100*sched/total)
	for k, p := range parts {
		if k == 0 {
			b.WriteString(", of which ")
		} else {
			b.WriteString(", ")
		}
		name := p.cat
		if name == string(profiles.Sched) {
			name = "unplaced"
		}
		fmt.Fprintf(&b, "%s %.0f", name, p.pts)
	}
	return b.String()
}

// Untrusted reports whether any row of the report has an untrusted budget.
func (rep *Run) Untrusted() bool {
	for _, g := range rep.Groups {
		for _, r := range g.Rows {
			if r.Untrusted {
				return true
			}
		}
	}
	return false
}
