package store

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/model"
)

// TestTrustAndSlicesRoundTrip: a case's trust mark, its sched by activity
// and the traced slices' figures survive run.json, and a run.json from
// before them loads with all of them unknown (nil), not trusted.
func TestTrustAndSlicesRoundTrip(t *testing.T) {
	s := Open(filepath.Join(t.TempDir(), "runs"))
	w := newRun(t, s, time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC), "s")
	w.run.Config.Trace = "slices"
	in := model.Case{Name: "variant=a", Variant: "a", Status: model.StatusOK,
		Budget:      map[string]float64{"work": 80, "sched": 20},
		SchedBy:     map[string]float64{"work": 15, "sched": 5},
		BudgetTrust: &model.Trust{Reasons: []model.TrustReason{{Kind: model.TracerEffect, Value: 1.21, Limit: 1.05}, {Kind: model.FewSamples, Value: 31, Limit: 50}}},
		Window: &model.Window{Source: "slices", Slices: 10, NsPerOp: 121,
			Traced:     &model.Stat{N: 10, Median: 121, MedianLo: 118, MedianHi: 125},
			TracedReps: []model.TracedRep{{Round: 1, NsPerOp: 119}, {Round: 3, NsPerOp: 123}},
			Tracer:     &model.Stat{N: 10, Median: 1.21, MedianLo: 1.12, MedianHi: 1.3}}}
	w.run.Cases = []model.Case{in, {Name: "variant=b", Variant: "b", Status: model.StatusOK, Budget: map[string]float64{"work": 1}, BudgetTrust: &model.Trust{}}}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	r, err := s.Load(w.run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Config.Trace != "slices" {
		t.Errorf("config trace %q", r.Config.Trace)
	}
	got := r.Cases[0]
	if !reflect.DeepEqual(got.BudgetTrust, in.BudgetTrust) || !reflect.DeepEqual(got.SchedBy, in.SchedBy) || !reflect.DeepEqual(got.Window, in.Window) {
		t.Errorf("round trip:\n got %+v %+v %+v\nwant %+v %+v %+v", got.BudgetTrust, got.SchedBy, got.Window, in.BudgetTrust, in.SchedBy, in.Window)
	}
	if !got.BudgetTrust.Untrusted() || got.BudgetTrust.Trusted() {
		t.Error("a budget with reasons read back as trusted")
	}
	if b := r.Cases[1].BudgetTrust; b == nil || !b.Trusted() {
		t.Errorf("a judged, trusted budget read back as %+v", b)
	}

	// A run.json from before: no trust, no sched by activity, no slices.
	old := `{"id":"old","scenario":"x","started":"2026-01-02T03:04:05Z","complete":true,` +
		`"env":{"go_version":"go1.26.8"},"config":{"args":null,"count":1,"time":"1s","warmup":"0s","profile":["wall"],"profile_time":"1s","seed":1},` +
		`"cases":[{"name":"variant=a","variant":"a","params":{},"threads":1,"status":"ok","budget":{"work":10},"window":{"seconds":1,"ops":10,"ns_per_op":10,"running":1,"runnable":0,"blocked":0,"occupancy":1,"background_gc_ns_per_op":0,"cpu_samples":100,"goroutines":1}}]}`
	os.MkdirAll(filepath.Join(s.Root, "old"), 0o755)
	if err := os.WriteFile(filepath.Join(s.Root, "old", "run.json"), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err = s.Load("old")
	if err != nil {
		t.Fatal(err)
	}
	c := r.Cases[0]
	if c.BudgetTrust != nil || c.BudgetTrust.Trusted() || c.BudgetTrust.Untrusted() || c.SchedBy != nil {
		t.Errorf("old case read with trust %+v, sched by %v: want unknown", c.BudgetTrust, c.SchedBy)
	}
	if c.Window.Source != "" || c.Window.Tracer != nil || c.Window.Traced != nil || r.Config.Trace != "" {
		t.Errorf("old window read as %+v (trace %q): want no slices", c.Window, r.Config.Trace)
	}
	// And a trusted budget says so in JSON, distinct from an unknown one.
	raw, _ := json.Marshal(model.Case{BudgetTrust: &model.Trust{}})
	if !strings.Contains(string(raw), `"budget_trust":{}`) {
		t.Errorf("a trusted budget's JSON: %s", raw)
	}
}
