package model

import (
	"encoding/json"
	"math"
	"testing"
)

// TestWarnNonFinite: --until's warning on a case with too few repetitions
// has an interval of ±Inf; the run must still save (json refuses Inf).
func TestWarnNonFinite(t *testing.T) {
	for _, f := range []float64{math.Inf(1), math.Inf(-1), math.NaN()} {
		c := Case{Warnings: []Warning{Warn(WarnUntil, f, "time/op ±Inf% after 3 rounds")}}
		if _, err := json.Marshal(c); err != nil {
			t.Errorf("figure %v: %v", f, err)
		}
	}
}
