package runner

import (
	"math"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/wallclock"
	"github.com/perflab/perflab/profiles"
)

// labelled is a wall profile of stacks as fakeProfile makes them, each
// labelled as internal/wallclock labels its samples: running, blocked
// under a state frame, or a helper's ("helper" in the stack) charged to
// a worker's wait.
func labelled(stacks map[string]int64) *profile.Profile {
	p := fakeProfile(stacks)
	p.SampleType[1].Type = "wall"
	for _, s := range p.Sample {
		s.Label = map[string][]string{"state": {"running"}}
		if stateFrame(s.Location[0]) {
			s.Label["state"] = []string{"blocked"}
		}
		for _, l := range s.Location {
			if l.Line[0].Function.Name == "helper" {
				s.Label = map[string][]string{"state": {"blocked"}, "helped": {"true"}}
			}
		}
	}
	return p
}

// TestSetBudgetErrKeptSamples: the ± of a budget that leaves the
// tracer's own time out is from the samples that place the time kept.
// The workers' 100 samples placed 100 ns of running, 20 of it in the
// tracer: the 80 left are placed by 80 samples, not 100; the helpers'
// 40, 10 of their 40 ns in the tracer, by 30.
func TestSetBudgetErrKeptSamples(t *testing.T) {
	rules, err := profiles.DefaultRules().WithWork(`^sha$`)
	if err != nil {
		t.Fatal(err)
	}
	traced := labelled(map[string]int64{
		"sha;run":   60,
		"after;run": 20,
		"runtime.(*traceBuf).varint;runtime.traceLocker.GoCreate;runtime.newproc1;run":                  20,
		"sha;helper;[wait] in goroutines it waited for;run":                                             20,
		"runtime.mallocgc;helper;[wait] in goroutines it waited for;run":                                10,
		"runtime.traceStack;runtime.traceLocker.GoUnpark;helper;[wait] in goroutines it waited for;run": 10,
		"[lock] blocked (sync);run": 60,
	})
	untraced := labelled(map[string]int64{
		"sha;run":   60,
		"after;run": 20,
		"sha;helper;[wait] in goroutines it waited for;run":              20,
		"runtime.mallocgc;helper;[wait] in goroutines it waited for;run": 10,
		"[lock] blocked (sync);run":                                      60,
	})
	sc := &model.Case{Window: &model.Window{CPUSamples: 100, HelperSamples: 40}}
	SetBudget(sc, traced, rules, 1000)
	if got, want := sc.Window.TracerOwn, 30.0/200; math.Abs(got-want) > 1e-9 {
		t.Fatalf("TracerOwn = %v, want %v", got, want)
	}
	want := BudgetErr(untraced, rules, 1000, 80, 30)
	for cat, w := range want {
		if math.Abs(sc.BudgetErr[cat]-w) > 1e-9 {
			t.Errorf("± %s = %.3f, want %.3f (80 and 30 samples placed what is kept)", cat, sc.BudgetErr[cat], w)
		}
	}
	if len(sc.BudgetErr) != len(want) {
		t.Errorf("± %v, want %v", sc.BudgetErr, want)
	}

	// Without the tracer's frames every sample counts.
	sc = &model.Case{Window: &model.Window{CPUSamples: 100, HelperSamples: 40}}
	SetBudget(sc, untraced, rules, 1000)
	for cat, w := range BudgetErr(untraced, rules, 1000, 100, 40) {
		if math.Abs(sc.BudgetErr[cat]-w) > 1e-9 {
			t.Errorf("no tracer frames: ± %s = %.3f, want %.3f", cat, sc.BudgetErr[cat], w)
		}
	}
}

// TestSlicesErrIsTheBudgets: the extra slices are planned on the budget
// the case will have, the tracer's own time left out, not on the whole
// traced profile: a split the stored budget does not have planned them.
func TestSlicesErrIsTheBudgets(t *testing.T) {
	rules, err := profiles.DefaultRules().WithWork(`^sha$`)
	if err != nil {
		t.Fatal(err)
	}
	p := labelled(map[string]int64{
		"sha;run":   50,
		"after;run": 10,
		"runtime.(*traceBuf).varint;runtime.traceLocker.GoCreate;runtime.newproc1;run": 30,
		"[wait] blocked (chan receive);run":                                            10,
	})
	w := &wallclock.Result{Profile: p, CPUSamples: 60}
	for _, scale := range []float64{1, 2.5} {
		n := int(math.Round(scale * 60))
		sc := &model.Case{Window: &model.Window{CPUSamples: n}}
		SetBudget(sc, p, rules, 1)
		want := widestErr(sc.Budget, sc.BudgetErr)
		if got := slicesErr(w, rules, scale); math.Abs(got-want) > 1e-12 {
			t.Errorf("scale %v: slicesErr %.4f, the budget's widest ± %.4f", scale, got, want)
		}
	}
}
