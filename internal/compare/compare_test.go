package compare

import (
	"testing"

	"github.com/perflab/perflab/internal/store"
)

func caseOf(unit string, xs ...float64) *store.Case {
	c := &store.Case{}
	for _, x := range xs {
		c.Reps = append(c.Reps, store.Rep{Metrics: map[string]float64{unit: x}})
	}
	return c
}

func TestVerdicts(t *testing.T) {
	lo := []float64{100, 101, 99, 100, 102, 98}
	hi := []float64{150, 151, 149, 150, 152, 148}
	tests := []struct {
		name, unit string
		a, b       []float64
		verdict    string
		delta      string
	}{
		{"slower", "ns/op", lo, hi, "higher, worse", "+50.00%"},
		{"faster", "ns/op", hi, lo, "lower, better", "-33.33%"},
		{"more throughput is better", "ops/s", lo, hi, "higher, better", "+50.00%"},
		{"same", "ns/op", lo, lo, "~", "~"},
		{"too few samples", "ns/op", lo[:3], hi[:3], "~ cannot tell", "~"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms := Cases(caseOf(tt.unit, tt.a...), caseOf(tt.unit, tt.b...), []string{tt.unit, "absent/op"})
			if len(ms) != 1 {
				t.Fatalf("%d metrics, want 1 (units either side lacks are left out)", len(ms))
			}
			if ms[0].Verdict != tt.verdict || ms[0].Delta() != tt.delta {
				t.Errorf("verdict %q delta %q, want %q %q (p=%v)", ms[0].Verdict, ms[0].Delta(), tt.verdict, tt.delta, ms[0].Cmp.P)
			}
		})
	}
}
