package runner

import (
	"fmt"
	"math"
	"strings"

	"github.com/perflab/perflab/internal/store"
	"golang.org/x/perf/benchmath"
)

// WideCI is the relative half-width of the median's confidence interval
// above which a result gets a warning: differences smaller than that are
// not resolved.
const WideCI = 0.10

// Summarise computes the mean with its 99.9% confidence interval (as JMH
// reports it) and the median with its 95% confidence interval (as benchstat
// does), both from golang.org/x/perf/benchmath. Warnings come back as
// values for the user: too few samples, or an interval too wide to trust.
func Summarise(values []float64) (store.Stat, []string) {
	xs := append([]float64(nil), values...)
	s := benchmath.NewSample(xs, &benchmath.DefaultThresholds)
	st := store.Stat{N: len(xs)}
	if len(xs) == 0 {
		return st, []string{"no samples"}
	}
	st.Min, st.Max = s.Values[0], s.Values[len(s.Values)-1]
	mean := benchmath.AssumeNormal.Summary(s, 0.999)
	st.Mean, st.MeanLo, st.MeanHi = mean.Center, mean.Lo, mean.Hi
	med := benchmath.AssumeNothing.Summary(s, 0.95)
	st.Median, st.MedianLo, st.MedianHi = med.Center, med.Lo, med.Hi
	var warns []string
	for _, w := range med.Warnings {
		msg := w.Error()
		if strings.HasPrefix(msg, "need ") {
			msg += ": run more repetitions (--count)"
		}
		warns = append(warns, msg)
	}
	if len(xs) < 2 {
		st.MeanLo, st.MeanHi = math.Inf(-1), math.Inf(1)
	}
	if hw := st.HalfWidth(); !math.IsInf(hw, 0) && hw > WideCI {
		warns = append(warns, fmt.Sprintf("time/op confidence interval ±%.0f%% is wide: the machine is noisy or the case unstable; use more --count, a quieter machine, or compare cpu/op", 100*hw))
	}
	return st, warns
}
