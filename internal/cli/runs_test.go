package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/store"
)

// executeIn is execute with stdin: in, a terminal or not.
func executeIn(t *testing.T, in string, terminal bool, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	root := NewRoot(&IO{In: strings.NewReader(in), InIsTerminal: terminal, Out: &out, Err: &errb})
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if err != nil {
		printError(&errb, nil, err)
	}
	return out.String(), errb.String(), exitCode(err)
}

// pruneStore holds a measured run and, newer, two that measured nothing
// (one interrupted before its first repetition, one whose every case
// failed), an interrupted run that measured, and two partial runs, one
// unwritten for two hours (its writer was killed) and one fresh.
func pruneStore(t *testing.T) (dir string, ids map[string]string) {
	t.Helper()
	dir = t.TempDir()
	st := store.Open(dir)
	t0 := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
	cases := map[string][]float64{"variant=mutex/keys=128/threads=1": {100, 101, 99}}
	ids = map[string]string{
		"good":        storeRun(t, st, t0, cases),
		"interrupted": storeRunIncomplete(t, st, t0.Add(time.Hour), cases),
		"empty":       storeRunIncomplete(t, st, t0.Add(2*time.Hour), cases),
		"failed":      storeRun(t, st, t0.Add(3*time.Hour), cases),
	}
	rewriteRun(t, st, ids["empty"], func(r *model.Run) { r.Cases[0].Reps = nil })
	rewriteRun(t, st, ids["failed"], func(r *model.Run) { r.Cases[0].Reps, r.Cases[0].Status = nil, model.StatusFailed })
	for _, p := range []struct {
		name string
		age  time.Duration
	}{{"stale", 2 * time.Hour}, {"fresh", time.Minute}} {
		id := store.NewID(time.Now().Add(-p.age), "cipher-cache") + "-" + p.name
		pd := filepath.Join(dir, "."+id+".partial")
		os.MkdirAll(pd, 0o755)
		os.WriteFile(filepath.Join(pd, "run.json"), []byte("{}"), 0o644)
		mt := time.Now().Add(-p.age)
		os.Chtimes(filepath.Join(pd, "run.json"), mt, mt)
		ids[p.name] = id
	}
	return dir, ids
}

// left lists the store's runs and partial runs by their ids.
func left(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range entries {
		ids = append(ids, strings.TrimSuffix(strings.TrimPrefix(e.Name(), "."), ".partial"))
	}
	slices.Sort(ids)
	return ids
}

func TestRunsPrune(t *testing.T) {
	for _, tt := range []struct {
		name    string
		args    []string
		removed []string // of pruneStore's runs
	}{
		{"empty", []string{"--empty"}, []string{"empty", "failed"}},
		{"incomplete", []string{"--incomplete"}, []string{"interrupted", "empty", "stale"}},
		{"both", []string{"--incomplete", "--empty"}, []string{"interrupted", "empty", "failed", "stale"}},
		{"older than, alone", []string{"--older-than", "46h30m"}, []string{"good", "interrupted"}},
		{"empty and older", []string{"--empty", "--older-than", "45h30m"}, []string{"empty"}},
		{"nothing matches", []string{"--empty", "--older-than", "1000h"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, ids := pruneStore(t)
			before := left(t, dir)
			// --dry-run lists and keeps everything.
			out, errs, code := executeIn(t, "", false, append([]string{"runs", "prune", "-o", dir, "--dry-run"}, tt.args...)...)
			if code != 0 {
				t.Fatalf("--dry-run: exit %d\n%s%s", code, out, errs)
			}
			for _, k := range tt.removed {
				if !strings.Contains(out, ids[k]) {
					t.Errorf("--dry-run does not list %s (%s):\n%s", k, ids[k], out)
				}
			}
			if got := left(t, dir); !slices.Equal(got, before) {
				t.Errorf("--dry-run removed something: %v", got)
			}
			_, errs, code = executeIn(t, "", false, append([]string{"runs", "prune", "-o", dir, "--yes"}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, errs)
			}
			var want []string
			for k, id := range ids {
				if !slices.Contains(tt.removed, k) {
					want = append(want, id)
				}
			}
			slices.Sort(want)
			if got := left(t, dir); !slices.Equal(got, want) {
				t.Errorf("left %v\nwant %v", got, want)
			}
		})
	}
}

// TestRunsPruneKeepsLiveWriter: prune --incomplete leaves a partial run
// whose writer still holds its lock, even one unwritten for two hours (a
// round can take that long): only a killed writer's run is stale.
func TestRunsPruneKeepsLiveWriter(t *testing.T) {
	dir := t.TempDir()
	st := store.Open(dir)
	w, err := st.Create(&model.Run{ID: store.NewID(time.Now().Add(-3*time.Hour), "cipher-cache"), Scenario: "cipher-cache"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Commit()
	mt := time.Now().Add(-2 * time.Hour)
	os.Chtimes(filepath.Join(w.Dir(), "run.json"), mt, mt)
	if _, skipped, _ := st.List(); len(skipped) != 1 || !errors.As(skipped[0], new(*store.Unlisted)) || skipped[0].(*store.Unlisted).Abandoned {
		t.Skipf("the store does not see this writer's lock (%v)", skipped)
	}
	before := left(t, dir)
	out, errs, code := executeIn(t, "", false, "runs", "prune", "-o", dir, "--incomplete", "--yes")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if got := left(t, dir); !slices.Equal(got, before) {
		t.Errorf("prune --incomplete removed a run being written: left %v, had %v\n%s%s", got, before, out, errs)
	}
}

// TestRunsAsk: never removed without a yes: on a terminal the question is
// asked and only y removes; elsewhere, without --yes, a clear refusal.
func TestRunsAsk(t *testing.T) {
	dir, ids := pruneStore(t)
	before := left(t, dir)
	for _, tt := range []struct {
		name     string
		in       string
		terminal bool
		code     int
		errs     string
	}{
		{"pipe", "y\n", false, 2, "not removing 2 runs without asking, and stdin is not a terminal to ask on: add --yes"},
		{"terminal, no", "n\n", true, 0, "remove 2 runs? [y/N] perflab: nothing removed"},
		{"terminal, enter", "\n", true, 0, "nothing removed"},
		{"terminal, end of input", "", true, 0, "nothing removed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, errs, code := executeIn(t, tt.in, tt.terminal, "runs", "prune", "--empty", "-o", dir)
			if code != tt.code || !strings.Contains(errs, tt.errs) {
				t.Errorf("exit %d, stderr:\n%s\nwant %d and %q", code, errs, tt.code, tt.errs)
			}
			if got := left(t, dir); !slices.Equal(got, before) {
				t.Errorf("removed: %v", got)
			}
		})
	}
	out, errs, code := executeIn(t, "y\n", true, "runs", "rm", ids["good"], ids["failed"], "-o", dir)
	if code != 0 || !strings.Contains(out, ids["good"]+"  ") || !strings.Contains(errs, "removed 2 runs") {
		t.Errorf("rm, answered y: exit %d\n%s%s", code, out, errs)
	}
	if got := left(t, dir); slices.Contains(got, ids["good"]) || slices.Contains(got, ids["failed"]) || len(got) != len(before)-2 {
		t.Errorf("after rm: %v", got)
	}
}

func TestRunsErrors(t *testing.T) {
	dir, _ := pruneStore(t)
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"prune what", []string{"runs", "prune", "-o", dir}, "say what to prune: --incomplete, --empty or --older-than"},
		{"rm nothing", []string{"runs", "rm", "-o", dir}, "name the runs to remove"},
		{"rm latest", []string{"runs", "rm", "latest", "-o", dir}, "runs rm takes run ids, not latest"},
		{"rm missing", []string{"runs", "rm", "nope", "-o", dir, "--yes"}, `no run "nope"`},
		{"rm traversal", []string{"runs", "rm", "../x", "-o", dir, "--yes"}, "invalid run id"},
		{"subcommand typo", []string{"runs", "rn"}, `unknown command "rn" for "perflab runs": did you mean rm? (see perflab runs --help)`},
		// With a flag after it, the flag is not the mistake (the root
		// has no -o, no --json).
		{"subcommand typo, then a flag", []string{"runs", "rn", "x", "--yes"}, `unknown command "rn" for "perflab runs": did you mean rm?`},
		{"command typo, then a flag", []string{"runn", "cipher-cache", "-o", dir}, `unknown command "runn" for "perflab": did you mean run or runs?`},
		{"command typo, then a --flag", []string{"shw", "--json"}, `unknown command "shw" for "perflab": did you mean show?`},
		// --help does not hide the typo: cobra answered it before the
		// arguments were checked, printing the root's help, exit 0.
		{"command typo, then --help", []string{"shwo", "--help"}, `unknown command "shwo" for "perflab": did you mean show?`},
		{"-h, then a command typo", []string{"-h", "shwo"}, `unknown command "shwo" for "perflab": did you mean show?`},
		{"subcommand typo, then --help", []string{"runs", "rn", "--help"}, `unknown command "rn" for "perflab runs": did you mean rm?`},
		// Nor does --version (cobra answers it before the arguments
		// too), nor the help command (it found the root and printed
		// its help, exit 0).
		{"command typo, then --version", []string{"shwo", "--version"}, `unknown command "shwo" for "perflab": did you mean show?`},
		{"-v, then a command typo", []string{"-v", "shwo"}, `unknown command "shwo" for "perflab": did you mean show?`},
		{"help, then a command typo", []string{"help", "shwo"}, `unknown command "shwo" for "perflab": did you mean show?`},
		{"help, then a subcommand typo", []string{"help", "runs", "rn"}, `unknown command "rn" for "perflab runs": did you mean rm?`},
		{"negative age", []string{"runs", "prune", "--older-than", "-1h", "-o", dir}, "--older-than -1h0m0s: want a positive duration"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, errs, code := executeIn(t, "", false, tt.args...)
			if code != 2 || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant 2 and %q", code, errs, tt.want)
			}
		})
	}
}

// TestStaleNoteShort: runs that measured nothing, newer than latest, are
// said in one short note that fits 80 columns and says how to remove
// them, not a line naming each (211 columns with three).
func TestStaleNoteShort(t *testing.T) {
	dir, ids := pruneStore(t)
	st := store.Open(dir)
	// Make the good run the oldest, with three empty ones after it.
	third := storeRunIncomplete(t, st, time.Now().Add(-time.Hour).Truncate(time.Second), map[string][]float64{"variant=mutex/keys=128/threads=1": {1}})
	rewriteRun(t, st, third, func(r *model.Run) { r.Cases[0].Reps = nil })
	rewriteRun(t, st, ids["interrupted"], func(r *model.Run) { r.Cases[0].Reps = nil })
	_, errs, code := executeIn(t, "", false, "show", "-o", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	for i, l := range strings.Split(strings.TrimSuffix(errs, "\n"), "\n") {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("line %d is %d columns: %q", i+1, n, l)
		}
	}
	want := "perflab: latest is " + ids["good"] + ", not 6 newer runs: 4 measured nothing, 2 left partial by a killed process (`perflab recover ID` saves one); perflab runs prune --empty removes the empty ones"
	if !containsWords(errs, want) || strings.Count(errs, "latest is") != 1 {
		t.Errorf("stderr:\n%s\nwant once:\n%s", errs, want)
	}
	// Pruned, the note is gone.
	if _, errs, code := executeIn(t, "", false, "runs", "prune", "--empty", "--yes", "-o", dir); code != 0 {
		t.Fatalf("prune: exit %d\n%s", code, errs)
	}
	if _, errs, _ := executeIn(t, "", false, "show", "-o", dir); strings.Contains(errs, "measured nothing") {
		t.Errorf("after prune --empty:\n%s", errs)
	}
}

// TestRunsLists: runs alone lists the store as show --list does (it
// printed its help, and a new user took it for doing nothing).
func TestRunsLists(t *testing.T) {
	dir, ids := pruneStore(t)
	empty := t.TempDir()
	for _, tt := range []struct {
		name  string
		store string
		want  []string
	}{
		{"a store", dir, []string{ids["good"], ids["interrupted"], "`perflab recover " + ids["stale"] + "`"}},
		{"an empty store", empty, []string{"no runs in " + empty}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := executeIn(t, "", false, "runs", "-o", tt.store)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, errs)
			}
			for _, w := range tt.want {
				if !strings.Contains(out+errs, w) {
					t.Errorf("no %q in\n%s%s", w, out, errs)
				}
			}
			lout, lerrs, _ := executeIn(t, "", false, "show", "--list", "-o", tt.store)
			if out != lout || errs != lerrs {
				t.Errorf("runs:\n%s%s\nshow --list:\n%s%s", out, errs, lout, lerrs)
			}
		})
	}
}
