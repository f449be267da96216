// Package compare decides whether two measured cases differ, metric by
// metric, the way benchstat does: the median with its 95% confidence
// interval, and the Mann–Whitney U test on the per-repetition samples, from
// golang.org/x/perf/benchmath. The CLI's `perflab compare` and the web
// UI's compare page both format its results.
package compare

import (
	"math"

	"github.com/perflab/perflab/internal/store"
	"golang.org/x/perf/benchmath"
)

// HigherIsBetter lists units where a bigger number is an improvement.
var HigherIsBetter = map[string]bool{"ops/s": true, "hits/op": true, "MB/s": true}

// Metric is the comparison of one metric between two cases.
type Metric struct {
	Unit string
	// A and B summarise each side: Center is the median, Lo and Hi its
	// 95% confidence interval (±Inf with too few samples).
	A, B benchmath.Summary
	// AValues and BValues are the per-repetition samples.
	AValues, BValues []float64
	// Cmp is the U test; Cmp.P < Cmp.Alpha means a significant difference.
	Cmp benchmath.Comparison
	// Verdict is "~" (no significant difference), "~ cannot tell" (too
	// few samples for any difference to be significant), or "lower,
	// better", "higher, worse" and so on; Class is same, better or worse.
	Verdict, Class string
}

// Delta is the change from A to B as benchstat prints it: "+12.34%", or
// "~" when the difference is not significant.
func (m Metric) Delta() string { return m.Cmp.FormatDelta(m.A.Center, m.B.Center) }

// Warnings are benchmath's warnings for both summaries and the test
// (typically: too few samples).
func (m Metric) Warnings() []error {
	return append(append(append([]error(nil), m.A.Warnings...), m.B.Warnings...), m.Cmp.Warnings...)
}

// Cases compares every unit in units that both cases measured in every
// repetition; units either case lacks are left out.
func Cases(a, b *store.Case, units []string) []Metric {
	var out []Metric
	for _, unit := range units {
		sa, sb := Samples(a, unit), Samples(b, unit)
		if len(sa) == 0 || len(sb) == 0 {
			continue
		}
		thr := benchmath.DefaultThresholds
		smA, smB := benchmath.NewSample(sa, &thr), benchmath.NewSample(sb, &thr)
		m := Metric{Unit: unit, AValues: sa, BValues: sb,
			A:   benchmath.AssumeNothing.Summary(smA, 0.95),
			B:   benchmath.AssumeNothing.Summary(smB, 0.95),
			Cmp: benchmath.AssumeNothing.Compare(smA, smB)}
		m.Verdict, m.Class = verdict(unit, m.Cmp, m.A.Center, m.B.Center)
		out = append(out, m)
	}
	return out
}

func verdict(unit string, cmp benchmath.Comparison, a, b float64) (string, string) {
	if cmp.P >= cmp.Alpha || a == b {
		if len(cmp.Warnings) > 0 && a != b {
			// benchmath warns when no difference could have been
			// significant (too few samples): "~" would read as "the
			// same", when the test cannot tell.
			return "~ cannot tell", "same"
		}
		return "~", "same"
	}
	better := b < a
	if HigherIsBetter[unit] {
		better = b > a
	}
	word := "lower"
	if b > a {
		word = "higher"
	}
	if better {
		return word + ", better", "better"
	}
	return word + ", worse", "worse"
}

// Samples returns c's per-repetition values of unit, in measured order.
func Samples(c *store.Case, unit string) []float64 {
	var out []float64
	for _, r := range c.Reps {
		if v, ok := r.Metrics[unit]; ok && !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}
