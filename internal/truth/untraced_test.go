package truth

import (
	"math"
	"testing"
)

// TestUntraced: the truth restated for a budget without the tracer's own
// time (5% here) allows a row to have held that time only where the
// budget can have left some of it out. Work and the stackless sched of
// the wall rows hold none; sched only what of the wait for a CPU (1%
// here) was spread over the tracer's samples; lock all of it.
func TestUntraced(t *testing.T) {
	const own, osw = 0.05, 0.01
	k := 1 / (1 - own)
	rows := []row{
		{name: "work", truth: 0.5, lo: 0.48, hi: 0.5},
		{name: "wall work", truth: 0.5, lo: 0.45, hi: 0.55},
		{name: "sched", truth: 0.1, lo: 0.1, hi: 0.12},
		{name: "wall sched", truth: 0.05, lo: 0.05, hi: 0.06},
		{name: "lock", truth: 0.2, lo: 0.2, hi: 0.2},
		{name: "wall wait+sched+other", truth: 0.3, lo: 0.28, hi: 0.32},
		{name: "other", truth: 0.02, lo: 0.02, hi: 0.02},
		{name: "alloc+gc+sched", truth: math.NaN(), lo: 0.1, hi: 0.1},
	}
	want := []struct{ truth, lo, hi float64 }{
		{k * 0.5, k * 0.48, k * 0.5},
		{k * 0.5, k * 0.45, k * 0.55},
		{k * 0.1, k * (0.1 - osw), k * 0.12},
		{k * 0.05, k * 0.05, k * 0.06},
		{k * 0.2, k * (0.2 - own), k * 0.2},
		{k * 0.3, k * (0.28 - own), k * 0.32},
		{k * 0.02, 0, k * 0.02},
		{math.NaN(), 0.1, 0.1}, // no truth: left alone
	}
	untraced(rows, own, osw)
	for i, r := range rows {
		w := want[i]
		if !(near(r.truth, w.truth) && near(r.lo, w.lo) && near(r.hi, w.hi)) {
			t.Errorf("%s: truth %.4f [%.4f, %.4f], want %.4f [%.4f, %.4f]", r.name, r.truth, r.lo, r.hi, w.truth, w.lo, w.hi)
		}
	}

	// Nothing left out, or nonsense (a tampered figure): rows unchanged.
	for _, own := range []float64{0, -0.1, 1, 2, math.NaN()} {
		rs := []row{{name: "lock", truth: 0.2, lo: 0.2, hi: 0.2}}
		untraced(rs, own, osw)
		if r := rs[0]; r.truth != 0.2 || r.lo != 0.2 || r.hi != 0.2 {
			t.Errorf("own %v: lock %v [%v, %v], want 0.2 unchanged", own, r.truth, r.lo, r.hi)
		}
	}
}

func near(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) < 1e-12
}
