package report

import (
	"testing"

	"github.com/perflab/perflab/internal/model"
)

func TestTrustReason(t *testing.T) {
	for _, tt := range []struct {
		name  string
		trust *model.Trust
		want  string
	}{
		{"unknown (an old run)", nil, ""},
		{"trusted", &model.Trust{}, ""},
		{"traced off", &model.Trust{Reasons: []model.TrustReason{{Kind: model.TracedOff, Value: 0.8}}}, "traced time/op 0.80× the timed"},
		{"just beyond the threshold", &model.Trust{Reasons: []model.TrustReason{{Kind: model.TracerEffect, Value: 1.0541}}}, "traced 1.054× untraced, round by round"},
		{"just beyond it, faster", &model.Trust{Reasons: []model.TrustReason{{Kind: model.TracedOff, Value: 0.9462}}}, "traced time/op 0.946× the timed"},
		{"two reasons", &model.Trust{Reasons: []model.TrustReason{{Kind: model.TracerEffect, Value: 1.214}, {Kind: model.RecordsLost, Value: 0.12}}},
			"traced 1.21× untraced, round by round; context-switch records lost (CPU wait 12%)"},
		{"shared pool", &model.Trust{Reasons: []model.TrustReason{{Kind: model.SharedHelpers, Value: 0.42}}}, "42% charged to a pool the workers share"},
		{"helpers", &model.Trust{Reasons: []model.TrustReason{{Kind: model.HelpersCharged, Value: 0.55}}}, "55% charged to helpers' running"},
		{"tracer busy", &model.Trust{Reasons: []model.TrustReason{{Kind: model.TracerBusy, Value: 0.087, Limit: 0.05}}}, "the tracer's own functions took 8.7% of the traced time (want under 5%)"},
		{"handoffs", &model.Trust{Reasons: []model.TrustReason{{Kind: model.Handoffs, Value: 4.94, Limit: 2}}}, "workers woke each other 4.9 times a ms of running: CPU samples land after hand-offs"},
		{"window contended", &model.Trust{Reasons: []model.TrustReason{{Kind: model.WindowContended, Value: 0.134, Limit: 0.1}}}, "another program had the CPUs 13% of the traced time, not of the timed"},
		{"window CPU wait, whose not known", &model.Trust{Reasons: []model.TrustReason{{Kind: model.WindowCPUWait, Value: 0.134, Limit: 0.1}}}, "threads waited for a CPU 13% of the traced time, not of the timed (another program's or the process's own had it)"},
		{"a wide split", &model.Trust{Reasons: []model.TrustReason{{Kind: model.SampleError, Value: 0.094, Limit: 0.05}}}, "CPU samples split running time only to ±9.4 points (want ±5)"},
		{"just over the limit", &model.Trust{Reasons: []model.TrustReason{{Kind: model.SampleError, Value: 0.0521, Limit: 0.05}}}, "CPU samples split running time only to ±5.2 points (want ±5)"},
		{"a very wide split", &model.Trust{Reasons: []model.TrustReason{{Kind: model.SampleError, Value: 0.1149, Limit: 0.05}}}, "CPU samples split running time only to ±11 points (want ±5)"},
		{"a kind from a newer perflab", &model.Trust{Reasons: []model.TrustReason{{Kind: "gremlins"}}}, "gremlins"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := TrustReason(tt.trust); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSchedByText(t *testing.T) {
	for _, tt := range []struct {
		name string
		c    model.Case
		want string
	}{
		{"old run", model.Case{Budget: map[string]float64{"sched": 50, "work": 50}}, ""},
		{"parts in category order, small ones left out", model.Case{Budget: map[string]float64{"work": 77, "sched": 23},
			SchedBy: map[string]float64{"other": 2, "work": 20, "sched": 0.6, "alloc": 0.4}}, "sched 23 pts, of which work 20, other 2, unplaced 1"},
		{"under half a point", model.Case{Budget: map[string]float64{"work": 1000}, SchedBy: map[string]float64{"work": 1}}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := SchedBy(&tt.c); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
