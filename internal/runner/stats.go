package runner

import (
	"fmt"
	"math"
	"strings"

	"github.com/perflab/perflab/internal/model"
	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchunit"
)

// WideCI is the relative half-width of the median's confidence interval
// above which a result gets a warning: differences smaller than that are
// not resolved.
const WideCI = 0.10

// Summarise computes the mean with its 99.9% confidence interval (as JMH
// reports it) and the median with its 95% confidence interval (as benchstat
// does), both from golang.org/x/perf/benchmath. Warnings come back as
// values for the user: too few samples, or an interval too wide to trust.
func Summarise(values []float64) (model.Stat, []model.Warning) {
	xs := append([]float64(nil), values...)
	s := benchmath.NewSample(xs, &benchmath.DefaultThresholds)
	st := model.Stat{N: len(xs)}
	if len(xs) == 0 {
		return st, []model.Warning{model.Warn(model.WarnFewReps, 0, "no samples")}
	}
	st.Min, st.Max = s.Values[0], s.Values[len(s.Values)-1]
	mean := benchmath.AssumeNormal.Summary(s, 0.999)
	st.Mean, st.MeanLo, st.MeanHi = mean.Center, mean.Lo, mean.Hi
	med := benchmath.AssumeNothing.Summary(s, 0.95)
	st.Median, st.MedianLo, st.MedianHi = med.Center, med.Lo, med.Hi
	var warns []model.Warning
	for _, w := range med.Warnings {
		msg := w.Error()
		if strings.HasPrefix(msg, "need ") {
			// benchmath's "need >= 6 samples for confidence interval
			// at level 0.95", said as the CLI says it before the run
			// (TestMinIntervalReps holds the two thresholds together).
			msg = TooFewForInterval(len(xs))
		}
		warns = append(warns, model.Warn(model.WarnFewReps, float64(len(xs)), msg))
	}
	if len(xs) < 2 {
		st.MeanLo, st.MeanHi = math.Inf(-1), math.Inf(1)
	}
	if lo, hi, ok := twoSpeeds(s.Values); ok {
		// Before the wide-interval warning, which it explains.
		warns = append(warns, model.Warn(model.WarnTwoSpeeds, math.Round(10*hi.center/lo.center)/10, fmt.Sprintf("time/op ran at two speeds: %d repetitions near %s and %d near %s, none between (a lock or scheduler state that flips between repetitions); its median and a comparison mix them: compare the repetitions in results.txt",
			lo.n, nsText(lo.center), hi.n, nsText(hi.center))))
	}
	if hw := st.HalfWidth(); !math.IsInf(hw, 0) && hw > WideCI {
		warns = append(warns, model.Warn(model.WarnWideCI, math.Round(100*hw), fmt.Sprintf("time/op confidence interval ±%.0f%% is wide: the machine is noisy or the case unstable; use more --count, a quieter machine, or compare cpu/op", 100*hw)))
	}
	return st, warns
}

// Two speeds: a gap in the sorted repetitions where the next is at least
// minSpeedGap times the last, with at least minSpeedGroup repetitions
// (and a fifth of them) on each side. cipher-cache's sharded at 128 keys
// and four goroutines ran near 45 and near 115 ns/op in one run, its
// median interval ±154%.
const (
	minSpeedGap   = 1.5
	minSpeedGroup = 2
)

type speedGroup struct {
	n      int
	center float64 // the group's median
}

// twoSpeeds finds two groups of repetitions with a gap between them (xs
// sorted ascending, all positive).
func twoSpeeds(xs []float64) (lo, hi speedGroup, ok bool) {
	n := len(xs)
	least := max(minSpeedGroup, (n+4)/5)
	best, at := 0.0, -1
	for i := least; i <= n-least; i++ {
		if xs[i-1] <= 0 {
			return lo, hi, false
		}
		if r := xs[i] / xs[i-1]; r >= minSpeedGap && r > best {
			best, at = r, i
		}
	}
	if at < 0 {
		return lo, hi, false
	}
	med := func(ys []float64) float64 {
		if m := len(ys); m%2 == 1 {
			return ys[m/2]
		} else {
			return (ys[m/2-1] + ys[m/2]) / 2
		}
	}
	return speedGroup{at, med(xs[:at])}, speedGroup{n - at, med(xs[at:])}, true
}

// nsText is a time per operation scaled as the table writes it (benchunit,
// as report.Value does; report's tests import this package, so it cannot
// be imported here).
func nsText(ns float64) string { return benchunit.Scale(ns*1e-9, benchunit.Decimal) + "s" }
