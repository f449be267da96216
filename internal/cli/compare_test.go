package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/store"
)

// storeRun writes a run whose cases measured the given ns/op repetitions.
func storeRun(t *testing.T, st *store.Store, started time.Time, cases map[string][]float64) string {
	t.Helper()
	run := &model.Run{ID: store.NewID(started, "cipher-cache"), Scenario: "cipher-cache", Started: started, Complete: true}
	for name, ns := range cases {
		variant := strings.TrimPrefix(strings.Split(name, "/")[0], "variant=")
		c := model.Case{Name: name, Variant: variant, Params: map[string]string{"keys": "128"}, Threads: 1, Status: model.StatusOK,
			Stats: map[string]model.Stat{"ns/op": {N: len(ns)}}}
		for _, v := range ns {
			c.Reps = append(c.Reps, model.Rep{Ops: 1000, Metrics: map[string]float64{"ns/op": v, "B/op": 64}})
		}
		run.Cases = append(run.Cases, c)
	}
	w, err := st.Create(run)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return run.ID
}

// storeRunIncomplete is storeRun for a run that was interrupted.
func storeRunIncomplete(t *testing.T, st *store.Store, started time.Time, cases map[string][]float64) string {
	t.Helper()
	id := storeRun(t, st, started, cases)
	rewriteRun(t, st, id, func(run *model.Run) { run.Complete, run.Note = false, "interrupted" })
	return id
}

// rewriteRun changes a stored run's run.json in place.
func rewriteRun(t *testing.T, st *store.Store, id string, change func(*model.Run)) {
	t.Helper()
	run, err := st.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	change(run)
	b, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(st.Root, id, "run.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// storeRunContended is storeRun for a run whose rounds had other programs
// on 1.2 of its machine's 2 CPUs.
func storeRunContended(t *testing.T, st *store.Store, started time.Time, cases map[string][]float64) string {
	t.Helper()
	id := storeRun(t, st, started, cases)
	rewriteRun(t, st, id, func(run *model.Run) {
		others := 1.2
		run.Env.NumCPU = 2
		run.Rounds = []model.Round{{Load1: 2.1}, {Load1: 2.2, Others: &others}}
	})
	return id
}

func TestCompare(t *testing.T) {
	dir := t.TempDir()
	st := store.Open(dir)
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	steady := []float64{100, 101, 99, 100, 102, 98}
	slower := []float64{150, 151, 149, 150, 152, 148}
	old := storeRun(t, st, t0, map[string][]float64{
		"variant=mutex/keys=128/threads=1": steady, "variant=sum256/keys=128/threads=1": steady,
	})
	newer := storeRun(t, st, t0.Add(time.Hour), map[string][]float64{
		"variant=mutex/keys=128/threads=1": slower, "variant=sum256/keys=128/threads=1": steady,
		"variant=only-new/keys=128/threads=1": steady,
	})
	lonely := storeRun(t, st, t0.Add(-time.Hour), map[string][]float64{"variant=other/keys=1/threads=1": steady})
	halfway := storeRunIncomplete(t, st, t0.Add(-2*time.Hour), map[string][]float64{"variant=mutex/keys=128/threads=1": steady})
	contended := storeRunContended(t, st, t0.Add(-3*time.Hour), map[string][]float64{
		"variant=mutex/keys=128/threads=1": steady, "variant=sum256/keys=128/threads=1": steady,
	})
	// A bench run whose benchmarks share no sub-benchmark name: nothing
	// pairs with the base.
	apart := storeRun(t, st, t0.Add(-4*time.Hour), map[string][]float64{
		"variant=Get/sub1=hit/threads=1": steady, "variant=Put/sub1=new/threads=1": steady,
	})
	rewriteRun(t, st, apart, func(run *model.Run) {
		run.Package, run.ParamOrder = "example.com/cache", []string{"sub1"}
		for i := range run.Cases {
			c := &run.Cases[i]
			c.Params = map[string]string{"sub1": strings.TrimPrefix(strings.Split(c.Name, "/")[1], "sub1=")}
		}
	})
	tests := []struct {
		name string
		args []string
		code int
		want []string
		not  []string
	}{
		{"two runs", []string{"compare", old, "latest", "-o", dir}, 0,
			[]string{"variant=mutex/keys=128/threads=1", "+50.0% [", "worse", "variant=sum256/keys=128/threads=1", "Mann–Whitney U", "Benjamini–Hochberg", "only in " + newer + " (1): variant=only-new/keys=128/threads=1"},
			nil},
		{"two cases", []string{"compare", old + "/variant=sum256/keys=128/threads=1", newer + "/variant=mutex,keys=128,threads=1", "-o", dir}, 0,
			[]string{"variant=sum256/keys=128/threads=1 vs variant=mutex/keys=128/threads=1", "+50.0%"}, nil},
		// Within one run the rounds pair the repetitions; at 6 pairs and 2
		// rows the correction cannot resolve one change, and says so.
		{"base variant", []string{"compare", newer, "--base", "sum256", "--metric", "ns/op", "-o", dir}, 0,
			[]string{"keys=128 threads=1  mutex", "+50.0%", "keys=128 threads=1  only-new", "~", "paired by round", "--count 7 or more"}, []string{"B/op"}},
		{"gate on a regression", []string{"compare", old, newer, "--fail-on", "regression", "-o", dir}, 1, []string{"worse", "regressed"}, nil},
		{"gate passes within the threshold", []string{"compare", old, newer, "--fail-on", "regression", "--threshold", "60%", "-o", dir}, 0, []string{"~ (not beyond 60%)"}, nil},
		{"markdown", []string{"compare", old, newer, "--format", "md", "-o", dir}, 0, []string{"| case | " + old + " | " + newer + " |", "**worse**", "variant=mutex/keys=128/threads=1"}, nil},
		{"json", []string{"compare", old, newer, "--json", "-o", dir}, 0, []string{`"regressed": true`, `"verdict": "worse"`, `"p_adjusted":`, `"only_b": [`}, nil},
		{"nothing shared", []string{"compare", old, lonely, "-o", dir}, 3, []string{"share no case names"}, nil},
		{"gate on an incomplete run", []string{"compare", old, halfway, "--fail-on", "regression", "-o", dir}, 3, []string{"incomplete"}, nil},
		{"bad threshold", []string{"compare", old, newer, "--threshold", "lots", "-o", dir}, 2, []string{"--threshold"}, nil},
		{"unknown base", []string{"compare", newer, "--base", "nope", "-o", dir}, 2, []string{`no variant "nope"`}, nil},
		{"base the only variant", []string{"compare", lonely, "--base", "other", "-o", dir}, 3, []string{"has no variant but other to compare with it"}, []string{"no shared case measured"}},
		// Not "no shared case measured any of time/op, …": the metrics
		// were measured; no case pairs with the base's.
		{"base pairs with nothing", []string{"compare", apart, "--base", "Get", "-o", dir}, 3,
			[]string{"no case pairs with one of Get's: run " + apart + " measured no other benchmark at their sub-benchmark names and -cpu (Get at sub1=hit threads=1)"},
			[]string{"no shared case measured"}},
		// Other programs took 1.2 of the 2 CPUs in its rounds: said, in a
		// comparison of its variants and in one with another run.
		{"base variant, contended", []string{"compare", contended, "--base", "sum256", "-o", dir}, 0,
			[]string{"run " + contended + ": other programs or the kernel used up to 1.2"}, nil},
		{"two runs, one contended", []string{"compare", contended, old, "-o", dir}, 0,
			[]string{"run " + contended + ": other programs or the kernel used up to 1.2"}, []string{"run " + old + ": other programs"}},
		{"unknown case", []string{"compare", old + "/variant=x", newer, "-o", dir}, 2, []string{`no case "variant=x"`}, nil},
		{"run with case", []string{"compare", old, newer + "/variant=mutex,keys=128,threads=1", "-o", dir}, 2, []string{"a run with a run"}, nil},
		{"one ref", []string{"compare", old, "-o", dir}, 2, []string{"give two runs"}, nil},
		// A run against itself is refused: +0.0% everywhere would pass a
		// gate whose base and head picked the same run.
		{"run against itself", []string{"compare", newer, "latest", "--fail-on", "regression", "-o", dir}, 3,
			[]string{"both sides are run " + newer, `"latest" name the same`, "--base VARIANT"}, []string{"time/op:", "+0.0%"}},
		{"case against itself", []string{"compare", newer + "/variant=mutex,keys=128,threads=1", newer + "/variant=mutex/keys=128/threads=1", "-o", dir}, 3,
			[]string{"both sides are case variant=mutex/keys=128/threads=1 of run " + newer}, []string{"+0.0%"}},
		{"two cases of one run", []string{"compare", newer + "/variant=sum256/keys=128/threads=1", newer + "/variant=mutex/keys=128/threads=1", "-o", dir}, 0,
			[]string{"paired by round", "+50.0%"}, nil},
		// The tables' names are aliases of run.json's units.
		{"metric as the table names it", []string{"compare", old, newer, "--metric", "time/op", "-o", dir}, 0,
			[]string{"time/op: 2 rows", "+50.0%"}, []string{"B/op"}},
		{"metric alias and unit once", []string{"compare", old, newer, "--metric", "time/op,ns/op", "-o", dir}, 0,
			[]string{"time/op: 2 rows"}, []string{"B/op"}},
		// A typo must not silently drop a metric from a gate.
		{"unknown metric", []string{"compare", old, newer, "--metric", "ns/op,cpu/opp", "--fail-on", "regression", "-o", dir}, 2,
			[]string{`unknown metric "cpu/opp"`, "time/op, cpu/op, ops/s, MB/s, B/op"}, []string{"time/op: 2 rows"}},
		{"no metric", []string{"compare", old, newer, "--metric", "", "-o", dir}, 2, []string{"name at least one metric"}, nil},
		{"known metric nobody measured", []string{"compare", old, newer, "--metric", "time/op,cpu/op", "-o", dir}, 0,
			[]string{"time/op: 2 rows", "--metric cpu/op: no compared case measured it"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := execute(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, out, errs)
			}
			for _, w := range tt.want {
				if !strings.Contains(out+errs, w) {
					t.Errorf("output lacks %q:\n%s%s", w, out, errs)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestLatestSkipsUnmeasured: latest passes by newer runs that measured
// nothing, and says so on stderr; the listing says such a run failed.
func TestLatestSkipsUnmeasured(t *testing.T) {
	dir := t.TempDir()
	st := store.Open(dir)
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	good := storeRun(t, st, t0, map[string][]float64{"variant=mutex/keys=128/threads=1": {100, 101, 99}})
	failed := &model.Run{ID: store.NewID(t0.Add(time.Hour), "cipher-cache"), Scenario: "cipher-cache", Started: t0.Add(time.Hour), Complete: true}
	for _, v := range []string{"mutex", "sum256"} {
		failed.Cases = append(failed.Cases, model.Case{Name: "variant=" + v + "/keys=128/threads=1", Variant: v, Threads: 1, Status: model.StatusFailed, Error: "boom"})
	}
	w, err := st.Create(failed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	note := "perflab: latest is " + good + ", not newer " + failed.ID + ": all 2 cases failed"
	for _, tt := range []struct {
		name      string
		args      []string
		out, errs string
		notInErrs string
		code      int
	}{
		{"show latest", []string{"show", "-o", dir}, good, note, "", 0},
		{"show by id", []string{"show", failed.ID, "-o", dir}, failed.ID, "", "latest is", 0},
		{"compare with latest", []string{"compare", good + "/variant=mutex/keys=128/threads=1", "latest/variant=mutex/keys=128/threads=1", "-o", dir}, "", note, "", 3},
		// Both sides name latest: said once.
		{"compare latest with itself", []string{"compare", "latest/variant=mutex/keys=128/threads=1", "latest/variant=mutex/keys=128/threads=1", "-o", dir}, "", note, "", 3},
		{"list", []string{"show", "--list", "-o", dir}, "failed (all 2 cases)", "", "latest is", 0},
		// flame has no -o for the store (its -o is the output file): it
		// reads PERFLAB_DIR. The stored case has no profile to draw.
		{"flame latest", []string{"flame", "latest/variant=mutex/keys=128/threads=1", "-o", filepath.Join(dir, "f.svg")}, "", note, "", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(store.EnvDir, dir)
			out, errs, code := execute(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, out, errs)
			}
			if !strings.Contains(out, tt.out) {
				t.Errorf("stdout lacks %q:\n%s", tt.out, out)
			}
			if !containsWords(errs, tt.errs) {
				t.Errorf("stderr lacks %q:\n%s", tt.errs, errs)
			}
			if tt.notInErrs != "" && strings.Contains(errs, tt.notInErrs) {
				t.Errorf("stderr has %q:\n%s", tt.notInErrs, errs)
			}
			if n := strings.Count(errs, "latest is"); n > 1 {
				t.Errorf("the note is given %d times:\n%s", n, errs)
			}
		})
	}
}

// TestLatestPassesUnreadable: latest passes by a newer run it cannot read
// (a corrupt run.json) or that is partial, and says so, as for one that
// measured nothing; a gate on latest then refuses (3), where it would have
// judged the run before. An older unreadable run is not mentioned.
func TestLatestPassesUnreadable(t *testing.T) {
	dir := t.TempDir()
	st := store.Open(dir)
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	cases := map[string][]float64{"variant=mutex/keys=128/threads=1": {100, 101, 99, 100, 102, 98}}
	old := storeRun(t, st, t0, cases)
	good := storeRun(t, st, t0.Add(time.Minute), cases)
	corrupt := store.NewID(t0.Add(time.Hour), "cipher-cache")
	older := store.NewID(t0.Add(-time.Hour), "cipher-cache")
	for _, id := range []string{corrupt, older} {
		if err := os.MkdirAll(filepath.Join(dir, id), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, id, "run.json"), []byte("garbage"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	note := "latest is " + good + ", not newer " + corrupt + ": it cannot be read"
	for _, tt := range []struct {
		name string
		args []string
		errs string
		code int
	}{
		{"show", []string{"show", "-o", dir}, note, 0},
		{"compare", []string{"compare", old, "latest", "-o", dir}, note, 0},
		{"gate", []string{"compare", old, "latest", "-o", dir, "--fail-on", "regression"}, "cannot gate on latest: " + note, 3},
		{"gate by id", []string{"compare", old, good, "-o", dir, "--fail-on", "regression"}, "", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := execute(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, out, errs)
			}
			if !containsWords(errs, tt.errs) {
				t.Errorf("stderr lacks %q:\n%s", tt.errs, errs)
			}
			if strings.Contains(errs, older) {
				t.Errorf("stderr names the older unreadable run %s:\n%s", older, errs)
			}
		})
	}
	// Partial: being written now, or its writer was killed.
	if err := os.Rename(filepath.Join(dir, corrupt), filepath.Join(dir, "."+corrupt+".partial")); err != nil {
		t.Fatal(err)
	}
	_, errs, code := execute(t, "show", "-o", dir)
	if want := "not newer " + corrupt + ": it is partial"; code != 0 || !containsWords(errs, want) {
		t.Errorf("exit %d, stderr %q; want 0 and %q", code, errs, want)
	}
}

// TestCompareExitCodes: 1 is a regression and nothing else, so that a CI
// gate never reads a typo or a missing store as one.
func TestCompareExitCodes(t *testing.T) {
	dir := t.TempDir()
	st := store.Open(dir)
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	a := storeRun(t, st, t0, map[string][]float64{"variant=mutex/keys=128/threads=1": {100, 101, 99, 100, 102, 98}})
	b := storeRun(t, st, t0.Add(time.Minute), map[string][]float64{"variant=mutex/keys=128/threads=1": {200, 201, 199, 200, 202, 198}})
	empty := t.TempDir()
	unreadable := t.TempDir()
	bad := filepath.Join(unreadable, store.NewID(t0, "cipher-cache"))
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "run.json"), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		code int
	}{
		{"regression", []string{"compare", a, b, "-o", dir, "--fail-on", "regression"}, 1},
		{"no such run", []string{"compare", "20261130-000000-nope", "latest", "-o", dir, "--fail-on", "regression"}, 2},
		{"invalid id", []string{"compare", "..", "latest", "-o", dir, "--fail-on", "regression"}, 2},
		{"unreadable store", []string{"compare", "latest", "latest", "-o", unreadable, "--fail-on", "regression"}, 3},
		{"no such case", []string{"compare", a + "/variant=nope", b + "/variant=nope", "-o", dir, "--fail-on", "regression"}, 2},
		{"empty store", []string{"compare", "latest", "latest", "-o", empty, "--fail-on", "regression"}, 2},
		{"show no such run", []string{"show", "20261130-000000-nope", "-o", dir}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := execute(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tt.code, out, errs)
			}
		})
	}
}

// TestCompareRefusalSaidOnce: on a terminal, a refused comparison's
// reason is in the table, and stderr does not print it again; redirected,
// stderr has it whole, for a CI log.
func TestCompareRefusalSaidOnce(t *testing.T) {
	dir := t.TempDir()
	st := store.Open(dir)
	storeRun(t, st, time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), map[string][]float64{"variant=mutex/keys=128/threads=1": {100, 101, 99}})
	for _, tt := range []struct {
		name     string
		terminal bool
		errs     string
	}{
		{"terminal", true, "cannot compare (the reason is above)"},
		{"redirected", false, "cannot compare: both sides are run"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			root := NewRoot(&IO{Out: &out, Err: &errb, OutIsTerminal: tt.terminal, ErrIsTerminal: tt.terminal})
			root.SetArgs([]string{"compare", "latest", "latest", "-o", dir})
			err := root.ExecuteContext(context.Background())
			if code := exitCode(err); code != 3 || err == nil {
				t.Fatalf("exit %d, %v", code, err)
			}
			if !strings.Contains(out.String(), "both sides are run") {
				t.Errorf("the table does not say why:\n%s", out.String())
			}
			if !strings.Contains(err.Error(), tt.errs) {
				t.Errorf("error %q, want %q", err, tt.errs)
			}
		})
	}
}

// TestNewerID: runs are ordered by the stamp their ids begin with; the same
// second with another id may be newer; a name with no stamp never is.
func TestNewerID(t *testing.T) {
	const latest = "20261201-120000-cipher-cache"
	for _, tt := range []struct {
		id   string
		want bool
	}{
		{"20261201-120001-cipher-cache", true},
		{"20261201-115959-cipher-cache", false},
		{"20261201-120000-cipher-cache-2", true},
		{"20261201-120000-uuid-hash", true},
		{latest, false},
		{"old-backup-of-a-run", false},
		{"29991399-999999-not-a-time", false},
	} {
		if got := newerID(tt.id, latest); got != tt.want {
			t.Errorf("newerID(%q, latest) = %v, want %v", tt.id, got, tt.want)
		}
	}
}
