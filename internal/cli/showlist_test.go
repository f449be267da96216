package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/store"
)

// TestShowListGolden: `perflab show --list` of a store with a run of each
// status a listing says — complete, complete with a failed case, every
// case failed, interrupted, interrupted before measuring — and, on
// stderr, a partial run abandoned by a killed writer.
func TestShowListGolden(t *testing.T) {
	dir := t.TempDir()
	st := store.Open(dir)
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	one := map[string][]float64{"variant=mutex/keys=128/threads=1": {100, 101, 99}}
	storeRun(t, st, t0, one)
	mixed := storeRun(t, st, t0.Add(time.Hour), map[string][]float64{"variant=mutex/keys=128/threads=1": {100, 101, 99}, "variant=sum256/keys=128/threads=1": {90, 91, 89}})
	rewriteRun(t, st, mixed, func(r *model.Run) {
		r.Env.Commit, r.Env.Dirty = "0123456789abcdef0123456789abcdef01234567", true
		r.Cases[1].Reps, r.Cases[1].Status, r.Cases[1].Error = nil, model.StatusFailed, "panic: boom"
	})
	failed := storeRun(t, st, t0.Add(2*time.Hour), one)
	rewriteRun(t, st, failed, func(r *model.Run) { r.Cases[0].Reps, r.Cases[0].Status = nil, model.StatusFailed })
	storeRunIncomplete(t, st, t0.Add(3*time.Hour), one)
	empty := storeRunIncomplete(t, st, t0.Add(4*time.Hour), one)
	rewriteRun(t, st, empty, func(r *model.Run) { r.Cases[0].Reps = nil })
	// A partial run whose writer was killed two days before.
	pd := filepath.Join(dir, "."+store.NewID(t0.Add(5*time.Hour), "cipher-cache")+".partial")
	if err := os.MkdirAll(pd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pd, "run.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour)
	os.Chtimes(filepath.Join(pd, "run.json"), old, old)
	os.Chtimes(pd, old, old)

	out, errs, code := execute(t, "show", "--list", "-o", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	golden(t, "show-list.golden", out+"--- stderr\n"+strings.ReplaceAll(errs, dir, "STORE"))
}

// TestShowCaseGolden: `perflab show RUN/CASE` prints one case as the web's
// case page lays it out (report.BuildCase): every metric with its
// interval, the budget splitting the median time/op, the warnings; with
// --json, that case (it printed the whole run).
func TestShowCaseGolden(t *testing.T) {
	dir := t.TempDir()
	st := store.Open(dir)
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	id := storeRun(t, st, t0, map[string][]float64{"variant=mutex/keys=128/threads=1": {100, 101, 99, 102, 98, 100, 103, 97}})
	rewriteRun(t, st, id, func(r *model.Run) {
		c := &r.Cases[0]
		c.Stats = map[string]model.Stat{
			"ns/op":     {N: 8, Mean: 100, MeanLo: 98, MeanHi: 102, Median: 100, MedianLo: 98, MedianHi: 102, Min: 97, Max: 103},
			"B/op":      {N: 8, Mean: 64, MeanLo: 64, MeanHi: 64, Median: 64, MedianLo: 64, MedianHi: 64, Min: 64, Max: 64},
			"allocs/op": {N: 8, Mean: 1, MeanLo: 1, MeanHi: 1, Median: 1, MedianLo: 1, MedianHi: 1, Min: 1, Max: 1},
		}
		c.Budget = map[string]float64{"work": 60, "lock": 20, "sched": 10, "other": 10}
		c.BudgetErr = map[string]float64{"work": 4.2, "other": 3.1}
		c.SchedBy = map[string]float64{"work": 8, "sched": 2}
		c.BudgetTrust = &model.Trust{Reasons: []model.TrustReason{{Kind: model.TracedOff, Value: 1.31, Limit: 1.053}}}
		c.Warnings = []model.Warning{model.Warn(model.WarnWideCI, 12, "time/op confidence interval ±12% is wide: noisy machine?")}
		c.Window = &model.Window{Source: "slices", Slices: 6, NsPerOp: 131, CPUSamples: 120, TracerOwn: 0.031}
	})
	out, errs, code := execute(t, "show", id+"/variant=mutex/keys=128/threads=1", "-o", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	golden(t, "show-case.golden", out)
	// --json: that case, not the whole run, in the words of a row of the
	// run's JSON.
	out, errs, code = execute(t, "show", id+"/variant=mutex/keys=128/threads=1", "-o", dir, "--json")
	if code != 0 {
		t.Fatalf("--json: exit %d\n%s%s", code, out, errs)
	}
	golden(t, "show-case-json.golden", out)
}

// TestShowListWidth: a bench run's scenario, its package's import path,
// is cut to its last elements so the listing fits 80 columns.
func TestShowListWidth(t *testing.T) {
	dir := t.TempDir()
	st := store.Open(dir)
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	id := storeRun(t, st, t0, map[string][]float64{"variant=mutex/keys=128/threads=1": {100, 101, 99}, "variant=sum256/keys=128/threads=1": {90, 91, 89}})
	const pkg = "github.com/perflab/perflab/internal/lab/testdata/benchfix"
	rewriteRun(t, st, id, func(r *model.Run) {
		r.Scenario, r.Package = pkg, pkg
		r.Env.Commit = "0123456789abcdef0123456789abcdef01234567"
		r.Cases[0].Status, r.Cases[0].Reps = model.StatusFailed, nil
	})
	out, errs, code := execute(t, "show", "--list", "-o", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("%d columns: %q", n, l)
		}
	}
	if !strings.Contains(out, "…/benchfix") {
		t.Errorf("listing does not end the path with its last elements:\n%s", out)
	}
}

func TestShortPath(t *testing.T) {
	for _, tt := range []struct {
		name, s string
		width   int
		want    string
	}{
		{"fits", "a/b/c", 5, "a/b/c"},
		{"last elements", "github.com/x/y/testdata/benchfix", 20, "…/testdata/benchfix"},
		{"last alone", "github.com/x/y/testdata/benchfix", 12, "…/benchfix"},
		{"cut", "github.com/x/averyverylongname", 10, "github.co…"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := shortPath(tt.s, tt.width); got != tt.want || utf8.RuneCountInString(got) > tt.width {
				t.Errorf("shortPath(%q, %d) = %q, want %q", tt.s, tt.width, got, tt.want)
			}
		})
	}
}

// TestShowBenchCase: `perflab show latest/Mutex` finds a bench run's case
// by go test's name; a wrong one says what is close and what there is.
func TestShowBenchCase(t *testing.T) {
	dir := t.TempDir()
	st := store.Open(dir)
	id := storeRun(t, st, time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), map[string][]float64{"variant=Mutex/threads=2": {100, 101, 99}})
	rewriteRun(t, st, id, func(r *model.Run) { r.Cases[0].Threads, r.Cases[0].Bench = 2, "BenchmarkMutex-2" })
	for _, ref := range []string{"latest/Mutex", "latest/BenchmarkMutex-2", "latest/Mutex-2"} {
		if out, errs, code := execute(t, "show", ref, "-o", dir); code != 0 || !strings.Contains(out, "Mutex") {
			t.Errorf("show %s: exit %d\n%s%s", ref, code, out, errs)
		}
	}
	_, errs, code := execute(t, "show", "latest/Mutx", "-o", dir)
	if code == 0 || !strings.Contains(errs, "did you mean Mutex?") || !strings.Contains(errs, "its cases: BenchmarkMutex-2") {
		t.Errorf("show latest/Mutx: exit %d, %s", code, errs)
	}
}
