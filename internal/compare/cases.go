package compare

import (
	"math"

	"github.com/perflab/perflab/internal/model"
)

// This file is where stored runs meet the statistics: a stored case
// becomes its per-repetition samples here, and nowhere else.

// Pair is two stored cases to compare, A the baseline.
type Pair struct {
	Label string
	A, B  *model.Case
	// Paired says the two cases were measured in the same rounds of one
	// run, so their repetitions pair by index (perflab interleaves every
	// case once per round): a paired test resists drift in machine load.
	Paired bool
}

// Samples returns c's per-repetition values of unit, in measured order:
// none for a case that was not measured (failed, skipped, n/a).
func Samples(c *model.Case, unit string) []float64 {
	if c.Status != model.StatusOK {
		return nil
	}
	var out []float64
	for _, r := range c.Reps {
		if v, ok := r.Metrics[unit]; ok && !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

// SamplesOf is pairs' samples of unit. A paired pair's samples are its
// rounds where both sides have a value: a round one side lost (NaN,
// missing) is left out of both, so index i is still one round on either
// side. Dropped from each side alone, two values lost in different rounds
// left lengths equal and the signed-rank test pairing different rounds
// (issue 24 review). Paired cases whose repetition counts differ cannot be
// matched round by round: they are compared unpaired.
func SamplesOf(pairs []Pair, unit string) []SamplePair {
	out := make([]SamplePair, len(pairs))
	for i, p := range pairs {
		out[i] = SamplePair{Label: p.Label, A: Samples(p.A, unit), B: Samples(p.B, unit), Paired: p.Paired}
		if !p.Paired || len(out[i].A) == 0 || len(out[i].B) == 0 {
			continue
		}
		if len(p.A.Reps) != len(p.B.Reps) {
			out[i].Paired = false
			continue
		}
		out[i].A, out[i].B = pairedSamples(p.A, p.B, unit)
	}
	return out
}

// pairedSamples returns a's and b's values of unit in the rounds where
// both have one.
func pairedSamples(a, b *model.Case, unit string) (as, bs []float64) {
	for i := range a.Reps {
		x, okA := a.Reps[i].Metrics[unit]
		y, okB := b.Reps[i].Metrics[unit]
		if okA && okB && !math.IsNaN(x) && !math.IsNaN(y) {
			as, bs = append(as, x), append(bs, y)
		}
	}
	return as, bs
}

// Metrics compares pairs on each unit, each unit a comparison of its own
// with its own false-discovery control: units are different questions.
func Metrics(pairs []Pair, units []string, opts Options) []Comparison {
	var out []Comparison
	for _, u := range units {
		c := One(pairs, u, opts)
		if len(c.Results) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// One compares pairs on one unit: Test of their samples.
func One(pairs []Pair, unit string, opts Options) Comparison {
	return Test(unit, SamplesOf(pairs, unit), opts)
}
