package runner

import (
	"math"
	"testing"

	"github.com/perflab/perflab/internal/live"
)

// TestRetimeBounded: a re-timed count stays within 1..live.MaxCount and
// grows at most live.MaxGrowth times however short the repetition was. A
// no-op worker's repetition once timed at a few nanoseconds and its count
// overflowed int (ops -4.9e18 in TestExactGoroutineCount).
func TestRetimeBounded(t *testing.T) {
	const target = 1e6 // 1 ms
	for _, tc := range []struct {
		name  string
		n     int
		perOp float64
		want  int
	}{
		{"on target", 1000, 1000, 1000},
		{"within 5%", 1000, 1040, 1000},
		{"twice as slow", 1000, 2000, 500},
		{"twice as fast", 1000, 500, 2000},
		{"a nanosecond a rep", 1000, 1e-6, 1000 * live.MaxGrowth},
		{"at the cap", live.MaxCount, 1e-9, live.MaxCount},
		{"near the cap", live.MaxCount / 2, 1e-9, live.MaxCount},
		{"far too slow", 10, 1e9, 1},
		{"zero", 1000, 0, 1000},
		{"not a number", 1000, math.NaN(), 1000},
		{"infinitely slow", 1000, math.Inf(1), 1},
	} {
		c := &liveCase{n: tc.n}
		c.retime(target, tc.perOp)
		if c.n != tc.want {
			t.Errorf("%s: n %d at %g ns/op → %d, want %d", tc.name, tc.n, tc.perOp, c.n, tc.want)
		}
	}
}

func TestScaleCount(t *testing.T) {
	for _, tc := range []struct {
		n     int
		ratio float64
		want  int
	}{
		{100, 2.5, 250},
		{100, 300, 30000}, // a long mutex window is not capped in growth
		{1 << 39, 1e30, live.MaxCount},
		{5, 0, 1},
		{5, -1, 1},
		{5, math.NaN(), 5},
		{live.MaxCount, math.NaN(), live.MaxCount},
		{5, math.Inf(1), live.MaxCount},
	} {
		if got := scaleCount(tc.n, tc.ratio); got != tc.want {
			t.Errorf("scaleCount(%d, %g) = %d, want %d", tc.n, tc.ratio, got, tc.want)
		}
	}
}
