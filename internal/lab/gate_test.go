package lab

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/store"
)

// gateRun is a complete run of one case per name, each with n repetitions
// of ns/op at the value given (and a little spread, as measured).
func gateRun(id string, n int, cases map[string]float64) *model.Run {
	run := &model.Run{ID: id, Scenario: "cipher-cache", Complete: true}
	for _, name := range slices.Sorted(maps.Keys(cases)) {
		c := model.Case{Name: name, Variant: strings.TrimPrefix(name, "variant="), Status: model.StatusOK}
		for i := range n {
			c.Reps = append(c.Reps, model.Rep{Ops: 1000, Metrics: map[string]float64{"ns/op": cases[name] * (1 + float64(i%3)/100)}})
		}
		run.Cases = append(run.Cases, c)
	}
	return run
}

// TestJudgeGate: each way a gate ends is a verdict with its reasons; what
// it cannot judge never passes (issue 26), and what it refuses whole
// judges no row.
func TestJudgeGate(t *testing.T) {
	for _, tt := range []struct {
		name       string
		a, b       *model.Run
		req        GateRequest
		want       GateVerdict
		refusal    string   // the Refusal's kind, "" for none
		wantKinds  []string // the reasons' kinds
		wantDetail string   // in some reason's detail
	}{
		{"pass", gateRun("a", 6, map[string]float64{"variant=x": 100}), gateRun("b", 6, map[string]float64{"variant=x": 100}),
			GateRequest{}, GatePass, "", nil, ""},
		{"regression", gateRun("a", 6, map[string]float64{"variant=x": 100}), gateRun("b", 6, map[string]float64{"variant=x": 300}),
			GateRequest{}, GateRegression, "", []string{"regressed"}, "beyond the threshold"},
		// No relative change from nothing: the reason says the rise as the
		// table does, not "+Inf% [+Inf%, +Inf%]".
		{"up from nothing", gateRun("a", 6, map[string]float64{"variant=x": 0}), gateRun("b", 6, map[string]float64{"variant=x": 64}),
			GateRequest{}, GateRegression, "", []string{"regressed"}, "(from 0), beyond the threshold"},
		{"too few repetitions", gateRun("a", 2, map[string]float64{"variant=x": 100}), gateRun("b", 2, map[string]float64{"variant=x": 300}),
			GateRequest{}, GateCannotJudge, "", []string{"too few repetitions"}, ""},
		{"a metric named and not measured", gateRun("a", 6, map[string]float64{"variant=x": 100}), gateRun("b", 6, map[string]float64{"variant=x": 100}),
			GateRequest{Unmeasured: []string{"cpu-ns/op"}}, GateCannotJudge, "", []string{"not measured"}, "named by --metric"},
		{"a case gone", gateRun("a", 6, map[string]float64{"variant=x": 100, "variant=y": 100}), gateRun("b", 6, map[string]float64{"variant=x": 100}),
			GateRequest{}, GateCannotJudge, "", []string{"missing"}, ""},
		{"nothing in common", gateRun("a", 6, map[string]float64{"variant=x": 100}), gateRun("b", 6, map[string]float64{"variant=y": 100}),
			GateRequest{}, GateCannotJudge, RefusedUnusable, []string{"unusable"}, "share no case names"},
		{"incomplete", gateRun("a", 6, map[string]float64{"variant=x": 100}), func() *model.Run {
			r := gateRun("b", 6, map[string]float64{"variant=x": 300})
			r.Complete, r.Note = false, "interrupted"
			return r
		}(), GateRequest{}, GateCannotJudge, RefusedIncomplete, []string{"incomplete"}, "run b (interrupted)"},
		{"latest passed by", gateRun("a", 6, map[string]float64{"variant=x": 100}), gateRun("b", 6, map[string]float64{"variant=x": 300}),
			GateRequest{Passed: []string{"newest failed", "next unreadable"}}, GateCannotJudge, RefusedLatest, []string{"latest", "latest"}, "next unreadable"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, pr, err := CompareRefs(&store.Ref{Run: tt.a}, &store.Ref{Run: tt.b}, [2]string{"a", "b"})
			if err != nil {
				t.Fatal(err)
			}
			tt.req.Units = []string{"ns/op"}
			Measure(c, pr, tt.req.Units, 0)
			g := JudgeGate(c, pr, tt.req)
			if g.Verdict != tt.want {
				t.Errorf("verdict %q, want %q", g.Verdict, tt.want)
			}
			switch {
			case tt.refusal == "" && g.Refusal != nil:
				t.Errorf("refused: %+v", g.Refusal)
			case tt.refusal != "" && (g.Refusal == nil || g.Refusal.Kind != tt.refusal || len(g.Regressions)+len(g.Problems) > 0):
				t.Errorf("refusal %+v (regressions %d, problems %d), want %s judging nothing", g.Refusal, len(g.Regressions), len(g.Problems), tt.refusal)
			}
			var kinds []string
			found := tt.wantDetail == ""
			for _, r := range g.Reasons() {
				kinds = append(kinds, r.Kind)
				found = found || strings.Contains(r.Detail, tt.wantDetail)
			}
			if !slices.Equal(kinds, tt.wantKinds) || !found {
				t.Errorf("reasons %+v, want kinds %v, one saying %q", g.Reasons(), tt.wantKinds, tt.wantDetail)
			}
		})
	}
}

// TestMetricUnits: the tables' names are aliases of run.json's units, a
// metric a compared case measured is known, and a typo is an error that
// lists what is valid.
func TestMetricUnits(t *testing.T) {
	a := gateRun("a", 1, map[string]float64{"variant=x": 100})
	a.Cases[0].Reps[0].Metrics["hits/op"] = 1
	_, pr, _ := CompareRefs(&store.Ref{Run: a}, &store.Ref{Run: gateRun("b", 1, map[string]float64{"variant=x": 100})}, [2]string{})
	got, err := MetricUnits([]string{"time/op", "cpu/op", "ns/op", "hits/op"}, pr.Pairs)
	if err != nil || !slices.Equal(got, []string{"ns/op", "cpu-ns/op", "hits/op"}) {
		t.Errorf("MetricUnits = %v, %v", got, err)
	}
	if _, err := MetricUnits([]string{"time/opp"}, pr.Pairs); err == nil || !strings.Contains(err.Error(), "hits/op") {
		t.Errorf("a typo: %v, want an error listing the valid names", err)
	}
	if _, err := MetricUnits(nil, pr.Pairs); err == nil {
		t.Error("no metric: no error")
	}
}
