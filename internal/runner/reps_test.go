package runner

import (
	"testing"

	"github.com/perflab/perflab/internal/model"
	"golang.org/x/perf/benchmath"
)

// TestMinIntervalReps: MinIntervalReps is where benchmath starts giving a
// 95% interval of the median, so the warning before a run and the one
// after it speak of the same threshold.
func TestMinIntervalReps(t *testing.T) {
	for n := 2; n <= MinIntervalReps+2; n++ {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(100 + i)
		}
		s := benchmath.AssumeNothing.Summary(benchmath.NewSample(xs, &benchmath.DefaultThresholds), 0.95)
		if warned := len(s.Warnings) > 0; warned != (n < MinIntervalReps) {
			t.Errorf("n=%d: benchmath warned %v (%v), want a warning exactly below %d", n, warned, s.Warnings, MinIntervalReps)
		}
		_, warns := Summarise(xs)
		said := hasWarning(warns, model.WarnFewReps, "too few for a 95% interval")
		if said != (n < MinIntervalReps) {
			t.Errorf("n=%d: Summarise warned %v: %q", n, said, warns)
		}
	}
	if got := TooFewForInterval(1); got != "1 repetition is too few for a 95% interval (time/op shows ±∞): use --count 6 or more" {
		t.Errorf("TooFewForInterval(1) = %q", got)
	}
}
