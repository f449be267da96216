package report

import (
	"math"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/model"
)

// TestTracerLeftOutHostile: the share of the traced time the budget left
// out in the tracer's functions is said only where it is a share. A
// run.json edited to 5 or -0.5 (JSON holds no NaN; a float can still be
// anything) must not read "took 500.0%", in the case view nor in the
// table's legend.
func TestTracerLeftOutHostile(t *testing.T) {
	for _, tt := range []struct {
		name string
		own  float64
		want string // "" for nothing said
	}{
		{name: "a share", own: 0.055, want: "took 5.5% of the workers' traced time"},
		{name: "none", own: 0},
		{name: "negative", own: -0.5},
		{name: "all of it", own: 1},
		{name: "more than all", own: 5},
		{name: "huge", own: 1e300},
		{name: "infinite", own: math.Inf(1)},
		{name: "NaN", own: math.NaN()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := model.Case{Name: "variant=a", Variant: "a", Status: model.StatusOK,
				Stats:  map[string]model.Stat{"ns/op": {N: 6, Median: 100, MedianLo: 95, MedianHi: 105}},
				Budget: map[string]float64{"work": 80, "other": 20},
				Window: &model.Window{Source: "slices", Slices: 6, NsPerOp: 104, CPUSamples: 200, TracerOwn: tt.own}}
			rc := BuildCase(&c)
			rep := Build(&model.Run{ID: "r", Scenario: "s", Cases: []model.Case{c}})
			if tt.want == "" {
				if rc.TracerLeftOut != "" || rep.TracerLeftOut {
					t.Errorf("tracer_own %v: case says %q, legend %v; want nothing said", tt.own, rc.TracerLeftOut, rep.TracerLeftOut)
				}
				return
			}
			if !strings.Contains(rc.TracerLeftOut, tt.want) || !rep.TracerLeftOut {
				t.Errorf("tracer_own %v: case says %q, legend %v; want %q and the legend", tt.own, rc.TracerLeftOut, rep.TracerLeftOut, tt.want)
			}
		})
	}
}
