package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/model"
)

// caseWith makes a measured case whose repetitions measured ns/op and
// B/op as given.
func caseWith(ns, bytes []float64) *model.Case {
	c := &model.Case{Status: model.StatusOK, Stats: map[string]model.Stat{"ns/op": {N: len(ns)}, "B/op": {N: len(bytes)}}}
	for i := range ns {
		c.Reps = append(c.Reps, model.Rep{Metrics: map[string]float64{"ns/op": ns[i], "B/op": bytes[i]}})
	}
	return c
}

// TestMetricRows: a comparison of two cases of two runs, a row per
// metric, with the advice on repetitions given once for the metrics it
// holds for.
func TestMetricRows(t *testing.T) {
	tests := []struct {
		name     string
		a, b     *model.Case
		verdicts []string // time/op, B/op
		warnings []string
	}{
		{
			name:     "slower, enough samples",
			a:        caseWith([]float64{100, 101, 99, 100, 102, 98}, []float64{64, 64, 64, 64, 64, 64}),
			b:        caseWith([]float64{150, 151, 149, 150, 152, 148}, []float64{64, 64, 64, 64, 64, 64}),
			verdicts: []string{"worse", "~"},
		},
		{
			name:     "faster",
			a:        caseWith([]float64{150, 151, 149, 150, 152, 148}, []float64{64, 64, 64, 64, 64, 64}),
			b:        caseWith([]float64{100, 101, 99, 100, 102, 98}, []float64{32, 32, 32, 32, 32, 32}),
			verdicts: []string{"better", "better"},
		},
		{
			// Three repetitions a side: the U test's smallest p is 0.1,
			// so nothing can be significant; "~" alone would read as
			// "the same" though the second case is 50% slower.
			name:     "too few samples",
			a:        caseWith([]float64{100, 101, 99}, []float64{64, 64, 64}),
			b:        caseWith([]float64{150, 151, 149}, []float64{64, 65, 66}),
			verdicts: []string{"cannot tell", "cannot tell"},
			// The comparison's own advice, as the CLI says it: two runs'
			// U test resolves at 4+4, not the 6 once written here.
			warnings: []string{"every metric: with n=3+3 no difference can be significant (the smallest possible p is 0.1): rerun both r1 and r2 with --count 4 or more", "GOGC differs: 100 vs off"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Comparison{A: "r1", B: "r2", Warnings: []Warning{{Kind: KindEnvDiffers, Message: "GOGC differs: 100 vs off"}},
				Metrics: compare.Metrics([]compare.Pair{{Label: "x", A: tt.a, B: tt.b}}, SharedUnits(tt.a, tt.b), compare.Options{})}
			rows, typed := c.MetricRows()
			var warnings []string
			for _, w := range typed {
				warnings = append(warnings, w.Message)
			}
			var got, labels []string
			for _, r := range rows {
				got, labels = append(got, r.Verdict), append(labels, r.Label)
			}
			if !slices.Equal(got, tt.verdicts) || !slices.Equal(labels, []string{"time/op", "B/op"}) {
				t.Errorf("rows %q %q, want %q for time/op, B/op", labels, got, tt.verdicts)
			}
			if tt.warnings != nil && !slices.Equal(warnings, tt.warnings) {
				t.Errorf("warnings\n%q\nwant\n%q", warnings, tt.warnings)
			}
			for _, w := range warnings {
				if strings.Count(strings.Join(warnings, "\n"), w) > 1 {
					t.Errorf("warning %q given twice", w)
				}
			}
		})
	}
}
