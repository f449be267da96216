package profiles

import (
	"math"
	"testing"

	"github.com/google/pprof/profile"
)

// TestBreakdownHostileValues: values whose sum overflows int64 saturate
// instead of giving a negative total, and negative values are left out.
func TestBreakdownHostileValues(t *testing.T) {
	fn := &profile.Function{ID: 1, Name: "main.work"}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "wall", Unit: "nanoseconds"}},
		Function: []*profile.Function{fn}, Location: []*profile.Location{loc}}
	for _, v := range []int64{math.MaxInt64 / 2, math.MaxInt64 / 2, math.MaxInt64 / 2, -5, 7} {
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{loc}, Value: []int64{v}})
	}
	by, total := Breakdown(p, 0, DefaultRules())
	if total != math.MaxInt64 {
		t.Errorf("total %d, want saturated at MaxInt64", total)
	}
	for c, v := range by {
		if v < 0 || v > total {
			t.Errorf("%s: %d of %d", c, v, total)
		}
	}
	// Negative values alone: nothing, not a negative budget.
	p.Sample = p.Sample[3:4]
	if by, total := Breakdown(p, 0, DefaultRules()); total != 0 || by[Other] != 0 {
		t.Errorf("negative sample counted: %v, %d", by, total)
	}
}
