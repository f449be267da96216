package flame

// Significance of a diff's changes (issue 13: "colour is not evidence"). A
// frame's share of a profile moves from run to run by sampling noise alone:
// a share p of n independent samples has a standard error of √(p(1−p)/n).
// Every frame of a diff is tested against that noise, and only the changes
// that survive false-discovery control are coloured.
//
// The test is a two-proportion z-test on each frame's share, generalised to
// weighted samples. A profile is a set of stacks s with values v_s, each
// resting on c_s independent observations (CPU samples, contentions, ...;
// see observations). Treating the observations of a stack as equal parts of
// its value, the share p = Σ_{s∋f} v_s / Σ v_s of frame f has, by the delta
// method, the variance
//
//	V(p) = (a(1−2p) + p²) / n,  a = Σ_{s∋f} q_s / Q,  n = (Σ v_s)² / Q,
//	q_s = v_s² / c_s,  Q = Σ q_s.
//
// For unit weights (a sample count) a = p and V = p(1−p)/n, the binomial
// variance; for weighted samples (contention delays) n is Kish's effective
// sample size and heavy stacks count for less than their number. The test
// statistic uses the pooled share under the null, z = (p₂−p₁)/√(V₁(p̂)+V₂(p̂));
// the interval in the tooltip is the unpooled Wald interval p₂−p₁ ±
// 1.96·√(V₁(p₁)+V₂(p₂)).
//
// Why this test and not a bootstrap over repetitions: a run has one
// profiling window per case, not one profile per repetition, so there is
// nothing to resample; the sampling noise of the window itself is what the
// profile can tell us about.
//
// Multiplicity: a tree of thousands of frames would colour dozens by chance
// at α=0.05 each. The p-values are controlled with Benjamini–Hochberg at a
// false-discovery rate of 5% (nested frames are positively dependent, where
// BH keeps its guarantee). Frames with too few observations to reach
// |z| ≥ 1.96 even if all of them were on one side cannot be discoveries and
// are left out of the family (Tarone's reduction), so that the long tail
// of one-sample frames does not dilute the test of the frames that matter.

import (
	"fmt"
	"math"
	"slices"
)

const (
	// fdr is the false-discovery rate of the colour.
	fdr = 0.05
	// z95 is the normal quantile of two-sided 95% intervals.
	z95 = 1.959963984540054
	// minEvidence is the least effective number of observations a frame
	// needs to be tested: √e is about the largest |z| it could reach.
	minEvidence = z95 * z95
	// defaultCPUPeriod is the runtime's CPU sampling period (100 Hz), for
	// a trace-made wall profile whose window had no CPU samples.
	defaultCPUPeriod = 10_000_000
)

// observer returns how many independent observations sample k, of value
// v, rests on (any positive number; fractions are fine).
type observer func(k int, v int64) float64

// observations decides what the n of the test is for sample type idx of
// src, and names it for the graph's subtitle.
func observations(src *Source, idx int) (observer, string) {
	unit := src.sampleTypes[idx].Unit
	pt := src.periodType
	// Wall-clock profiles made from the execution trace (internal/
	// wallclock) hold exact nanoseconds, one sample per (state, stack), and
	// no counts. Their running time is split over stacks by CPU samples,
	// each worth the same share of it (running time / CPU samples), so for
	// running stacks value/share is the number of CPU samples: the noise is
	// the CPU profiler's. Off-CPU intervals are exact for the window, but
	// the window is one draw of a process whose waits are strongly
	// autocorrelated (a goroutine that waited on a lock a microsecond ago
	// will wait again; thousands of short waits in a row are one episode
	// of contention, not thousands of independent observations), so their
	// count would overstate n by orders of magnitude. We charge off-CPU
	// time at the same rate as running time, one observation per CPU
	// sample's worth of wall time (10 ms at 100 Hz), as a sampling
	// wall-clock profiler at the CPU profiler's rate would have seen it. This
	// understates n for many short waits (conservative: less colour) and
	// overstates it for one long wait (a 1 s sleep counts as 100); the
	// profile does not record interval counts, which would let us take the
	// smaller of the two.
	if unit == "nanoseconds" && src.period <= 1 && src.allState {
		per := runningShare(src, idx)
		return func(_ int, v int64) float64 { return float64(v) / per },
			fmt.Sprintf("traced wall time, one observation per %s (the CPU samples' share of running time)", formatValue(int64(per), unit))
	}
	// CPU (cpu/nanoseconds, 10 ms a sample), fgprof (wallclock/nanoseconds)
	// and heap profiles (bytes, one sample per 512 KiB on average) have a
	// period in the drawn unit: value/period is the samples.
	if pt.Unit == unit && src.period > 1 {
		per := float64(src.period)
		return func(_ int, v int64) float64 { return float64(v) / per },
			fmt.Sprintf("samples of %s", formatValue(src.period, unit))
	}
	// Counts are the observations (Go's mutex profile scales its counts by
	// the sampling rate, its period: that case is the one above).
	if unit == "count" {
		return func(_ int, v int64) float64 { return float64(v) }, "sample counts"
	}
	rate := 1.0
	if pt.Unit == "count" && src.period > 1 {
		rate = float64(src.period)
	}
	// Delays (block, mutex): the events are counted in a sample type of
	// their own; each stack's delay is a sum of that many events.
	for j, st := range src.sampleTypes {
		if st.Unit == "count" {
			return func(k int, v int64) float64 {
				if c := src.value(k, j); c > 0 {
					return float64(c) / rate
				}
				return 1
			}, st.Type + " (each stack's " + src.sampleTypes[idx].Type + " a sum of that many events)"
		}
	}
	return func(int, int64) float64 { return 1 }, "one observation per stack (the profile has no counts)"
}

// runningShare estimates the wall time one CPU sample stands for in a
// trace-made wall profile: the smallest running stack, which in any
// window of more than a few samples is a stack seen once. If every stack
// was seen at least twice this overestimates the share, which only makes
// the test more conservative.
func runningShare(src *Source, idx int) float64 {
	per := int64(0)
	for k := range src.Samples() {
		if v := src.value(k, idx); src.state[k] == stateRunning && v > 0 && (per == 0 || v < per) {
			per = v
		}
	}
	if per <= 0 {
		return defaultCPUPeriod
	}
	return float64(per)
}

// diffStats is the outcome of the tests of one diff.
type diffStats struct {
	ok              bool    // both profiles have samples: tests were made
	n, nBase        float64 // effective numbers of observations
	sig             []int8  // per node: +1 significantly larger share, -1 smaller
	p               []float64
	pcut            float64 // BH threshold: p <= pcut is a discovery (-1: none)
	tested          int     // frames in the family
	model, baseMode string  // what the observations are, per side
	catSig          [numCategories]int8
}

// shares returns node i's base and new shares and their square fractions.
func (t *Tree) shares(i int32) (p1, p2, a1, a2 float64) {
	return float64(t.base[i]) / float64(t.base[0]), float64(t.value[i]) / float64(t.value[0]),
		t.baseSq[i] / t.baseSq[0], t.sq[i] / t.sq[0]
}

// variance is V(p) above.
func variance(p, a, n float64) float64 { return max(a*(1-2*p)+p*p, 0) / n }

// zTest returns the two-sided p-value of the pooled test and the evidence
// (effective observations) behind it.
func (st *diffStats) zTest(p1, p2, a1, a2 float64) (pv, evidence float64) {
	n1, n2 := st.nBase, st.n
	if a1 > 0 {
		evidence += p1 * p1 * n1 / a1
	}
	if a2 > 0 {
		evidence += p2 * p2 * n2 / a2
	}
	pp := (p1*n1 + p2*n2) / (n1 + n2)
	v := variance(pp, a1, n1) + variance(pp, a2, n2)
	if v <= 0 {
		return 1, evidence
	}
	z := (p2 - p1) / math.Sqrt(v)
	return math.Erfc(math.Abs(z) / math.Sqrt2), evidence
}

// interval returns the change in share and the half-width of its 95%
// interval.
func (st *diffStats) interval(p1, p2, a1, a2 float64) (d, h float64) {
	return p2 - p1, z95 * math.Sqrt(variance(p1, a1, st.nBase)+variance(p2, a2, st.n))
}

// frameDelta returns node i's change in share and its interval.
func (st *diffStats) frameDelta(t *Tree, i int32) (d, h float64) {
	return st.interval(t.shares(i))
}

// catDelta returns category c's change in share (by self value) and its
// interval.
func (st *diffStats) catDelta(t *Tree, c int) (d, h float64) {
	p1, p2, a1, a2 := t.catShares(c)
	return st.interval(p1, p2, a1, a2)
}

func (t *Tree) catShares(c int) (p1, p2, a1, a2 float64) {
	return float64(t.baseByCat[c]) / float64(t.base[0]), float64(t.byCat[c]) / float64(t.value[0]),
		t.baseCatSq[c] / t.baseSq[0], t.catSq[c] / t.sq[0]
}

// test tests every frame and every category of the diff.
func (t *Tree) test(baseModel, model string) {
	n := len(t.name)
	st := &diffStats{sig: make([]int8, n), p: make([]float64, n), pcut: -1, model: model, baseMode: baseModel}
	t.stat = st
	for i := range st.p {
		st.p[i] = 2 // not tested
	}
	if t.base[0] <= 0 || t.value[0] <= 0 || t.baseSq[0] <= 0 || t.sq[0] <= 0 {
		return
	}
	st.ok = true
	st.nBase = float64(t.base[0]) * float64(t.base[0]) / t.baseSq[0]
	st.n = float64(t.value[0]) * float64(t.value[0]) / t.sq[0]
	var ps []float64
	for i := int32(1); i < int32(n); i++ {
		p1, p2, a1, a2 := t.shares(i)
		pv, ev := st.zTest(p1, p2, a1, a2)
		if ev < minEvidence {
			continue
		}
		st.p[i] = pv
		ps = append(ps, pv)
	}
	st.tested = len(ps)
	st.pcut = bhThreshold(ps, fdr)
	for i := int32(1); i < int32(n); i++ {
		if st.p[i] <= st.pcut {
			st.sig[i] = sign(t.shares(i))
		}
	}
	// The categories are a family of their own.
	var cp [numCategories]float64
	for c := range cp {
		p1, p2, a1, a2 := t.catShares(c)
		cp[c], _ = st.zTest(p1, p2, a1, a2)
	}
	cut := bhThreshold(slices.Clone(cp[:]), fdr)
	for c := range cp {
		if cp[c] <= cut {
			st.catSig[c] = sign(t.catShares(c))
		}
	}
}

func sign(p1, p2, _, _ float64) int8 {
	switch {
	case p2 > p1:
		return 1
	case p2 < p1:
		return -1
	}
	return 0
}

// bhThreshold returns the Benjamini–Hochberg threshold of ps at rate q:
// the largest p_(k) with p_(k) <= k·q/m, or -1 if there is none. It sorts
// ps.
func bhThreshold(ps []float64, q float64) float64 {
	slices.Sort(ps)
	m := float64(len(ps))
	cut := -1.0
	for k, p := range ps {
		if p <= float64(k+1)*q/m {
			cut = p
		}
	}
	return cut
}
