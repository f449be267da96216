package report

import (
	"reflect"
	"testing"

	"github.com/perflab/perflab/internal/model"
)

func allocCase(variant string, bop, ops float64) *model.Case {
	return &model.Case{Variant: variant, Status: model.StatusOK, Stats: map[string]model.Stat{
		"B/op":       {Median: bop},
		"ops/s":      {Median: ops},
		"alloc-MB/s": {Median: bop * ops / 1e6},
	}}
}

func TestAllocNotes(t *testing.T) {
	tests := []struct {
		name  string
		cases []*model.Case
		want  []string
	}{
		{
			// The cipher-stream review: a faster variant with a little
			// more allocation per operation.
			name:  "rate follows throughput",
			cases: []*model.Case{allocCase("ctr-512", 35584, 10000), allocCase("ctr-8192", 58624, 40000)},
			want:  []string{"g: ctr-8192 vs ctr-512: alloc MB/s ×6.6 but B/op ×1.6, because ops/s ×4"},
		},
		{
			name:  "same throughput, rate and B/op agree",
			cases: []*model.Case{allocCase("a", 1000, 1e6), allocCase("b", 8000, 1.2e6)},
		},
		{
			name:  "slower variant allocating more",
			cases: []*model.Case{allocCase("a", 1000, 1e6), allocCase("b", 91000, 1e5)},
			want:  []string{"g: b vs a: alloc MB/s ×9.1 but B/op ×91, because ops/s ×0.1"},
		},
		{
			name: "the base is the first variant that allocates; failures and zero B/op are skipped",
			cases: []*model.Case{
				{Variant: "failed", Status: "failed"},
				allocCase("none", 0, 5e6),
				allocCase("crumbs", 0.001, 6e6), // a pool refilled after GC
				allocCase("a", 100, 1e6),
				allocCase("b", 100, 3e6),
			},
			want: []string{"g: b vs a: alloc MB/s ×3 but B/op ×1, because ops/s ×3"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := allocNotes("g", tt.cases); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("allocNotes =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
