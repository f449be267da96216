package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/store"
)

const realCPU = "../../profiles/testdata/real/cpu.pb.gz"

func TestFlameFormats(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		file string
		want []string
	}{
		{"svg to stdout", []string{"flame", realCPU, "--work", "^crypto/"}, "", []string{"<svg", "work 22.9%", "sha256.blockSHANI"}},
		{"svg file", []string{"flame", realCPU, "-o", filepath.Join(dir, "a.svg")}, "a.svg", []string{"<svg", "cpu (nanoseconds)"}},
		{"html file", []string{"flame", realCPU, "-o", filepath.Join(dir, "a.html"), "--title", "<cpu>"}, "a.html", []string{"<!DOCTYPE html>", "PerflabFlame.mount", "&lt;cpu&gt;"}},
		{"folded", []string{"flame", realCPU, "-o", filepath.Join(dir, "a.folded")}, "a.folded", []string{"main.worker;main.hashWork;crypto/sha256.Sum256"}},
		{"sample type", []string{"flame", realCPU, "--sample-type", "samples"}, "", []string{"samples (count)"}},
		{"diff", []string{"flame", "--diff", realCPU, realCPU, "-o", filepath.Join(dir, "d.svg")}, "d.svg", []string{"scaled to the same total", "other +0.0±", "pt ~", "grey: within noise"}},
		{"diff on the base", []string{"flame", "--diff", "--layout", "base", realCPU, realCPU, "-o", filepath.Join(dir, "b.svg")}, "b.svg", []string{"on the base profile"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := execute(t, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if tt.file != "" {
				b, err := os.ReadFile(filepath.Join(dir, tt.file))
				if err != nil {
					t.Fatal(err)
				}
				out = string(b)
				if !strings.Contains(errs, "wrote ") {
					t.Errorf("stderr: %q", errs)
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q", w)
				}
			}
		})
	}
}

func TestFlameErrors(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.pb.gz")
	os.WriteFile(junk, []byte("this is not a profile"), 0o644)
	rules := filepath.Join(dir, "rules.txt")
	os.WriteFile(rules, []byte("speed ^x\n"), 0o644)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no args", []string{"flame"}, 2, "name a profile to draw"},
		{"missing", []string{"flame", filepath.Join(dir, "nope.pb.gz")}, 2, "no such profile file"},
		{"junk", []string{"flame", junk}, 1, "not a pprof profile"},
		{"two without diff", []string{"flame", realCPU, realCPU}, 2, "two with --diff"},
		{"diff with one", []string{"flame", "--diff", realCPU}, 2, "--diff needs two profiles"},
		{"bad extension", []string{"flame", realCPU, "-o", "x.png"}, 2, "cannot tell the format"},
		{"bad sample type", []string{"flame", realCPU, "--sample-type", "delay"}, 2, `no sample type "delay"`},
		{"bad rules", []string{"flame", realCPU, "--rules", rules}, 2, `rules.txt:1: unknown category "speed"`},
		{"bad work", []string{"flame", realCPU, "--work", "("}, 2, "work pattern"},
		{"diff folded", []string{"flame", "--diff", realCPU, realCPU, "-o", "x.folded"}, 2, "not folded"},
		{"bad layout", []string{"flame", "--diff", "--layout", "old", realCPU, realCPU}, 2, `--layout: unknown layout "old"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs, code := execute(t, tt.args...)
			if code != tt.code || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, want %d; stderr %q, want %q", code, tt.code, errs, tt.want)
			}
		})
	}
}

// TestFlameRunCase draws a case of a stored run, by "run-dir/case name"
// and by case directory, with the scenario's own work patterns.
func TestFlameRunCase(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a scenario")
	}
	dir := filepath.Join(t.TempDir(), "runs")
	_, errs, code := execute(t, "run", "cipher-cache", "--variant", "sum256", "-p", "keys=128",
		"--threads", "1", "--count", "2", "--time", "2ms", "--warmup", "1ms", "--profile", "wall", "--profile-time", "300ms", "-o", dir)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errs)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("store has %d entries", len(entries))
	}
	runDir := filepath.Join(dir, entries[0].Name())
	caseName := "variant=sum256/keys=128/key=ssk/threads=1"
	out, errs, code := execute(t, "flame", filepath.Join(runDir, caseName))
	if code != 0 {
		t.Fatalf("flame run/case: exit %d\n%s", code, errs)
	}
	if !strings.Contains(out, "cipher-cache "+caseName+" (wall)") || !strings.Contains(out, "work ") {
		t.Errorf("SVG lacks the case title or legend:\n%.600s", out)
	}
	cases, _ := os.ReadDir(filepath.Join(runDir, "cases"))
	if len(cases) != 1 {
		t.Fatalf("%d case directories", len(cases))
	}
	// The scenario's work patterns are used: the legend is the one the
	// same profile, outside any run, gets with them given by hand. (How
	// much of this short window is work is whatever the machine did: under
	// -race on a busy CI machine it was once no sample at all.)
	data, err := os.ReadFile(filepath.Join(runDir, "cases", cases[0].Name(), "wall.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	loose := filepath.Join(t.TempDir(), "wall.pb.gz")
	if err := os.WriteFile(loose, data, 0o644); err != nil {
		t.Fatal(err)
	}
	want, werrs, code := execute(t, "flame", loose, "--work", `^crypto/internal/fips140/sha256\.`, "--work", `^crypto/sha256\.`)
	if code != 0 {
		t.Fatalf("flame %s: exit %d\n%s", loose, code, werrs)
	}
	if gl, wl := legend(out), legend(want); len(wl) == 0 || !reflect.DeepEqual(gl, wl) {
		t.Errorf("run case legend %v, want %v (the scenario's work patterns)", gl, wl)
	}
	_, errs, code = execute(t, "flame", filepath.Join(runDir, "cases", cases[0].Name()))
	if code != 0 {
		t.Errorf("flame case-dir: exit %d\n%s", code, errs)
	}
	// The profile file itself, inside the run, gets the scenario's rules too.
	out, errs, code = execute(t, "flame", filepath.Join(runDir, "cases", cases[0].Name(), "wall.pb.gz"))
	if code != 0 || !strings.Contains(out, "cipher-cache "+cases[0].Name()+" (wall.pb.gz)") {
		t.Errorf("flame case file: exit %d, title missing\n%s%.400s", code, errs, out)
	}
	_, errs, code = execute(t, "flame", runDir)
	if code != 2 || !strings.Contains(errs, "is a whole run") {
		t.Errorf("flame run-dir: exit %d\n%s", code, errs)
	}
	_, errs, code = execute(t, "flame", filepath.Join(runDir, "variant=nope"))
	if code != 2 || !strings.Contains(errs, `no case "variant=nope"`) {
		t.Errorf("flame unknown case: exit %d\n%s", code, errs)
	}
}

// storeCase stores a run of scenario with one case whose wall profile is
// the real CPU profile, recording classification (nil: a run stored before
// classifications were recorded), and returns the argument that names the
// case for `perflab flame`.
func storeCase(t *testing.T, scenario string, classification *model.Classification) string {
	t.Helper()
	data, err := os.ReadFile(realCPU)
	if err != nil {
		t.Fatal(err)
	}
	st := store.Open(filepath.Join(t.TempDir(), "runs"))
	started := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	name := "variant=a/threads=1"
	run := &model.Run{ID: store.NewID(started, scenario), Scenario: scenario, Started: started, Complete: true,
		Config: model.Config{Classification: classification},
		Cases: []model.Case{{Name: name, Variant: "a", Threads: 1, Status: model.StatusOK,
			Profiles: map[string]string{"wall": "cases/" + model.Slug(name) + "/wall.pb.gz"}}}}
	w, err := st.Create(run)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile(run.Cases[0].Profiles["wall"], data); err != nil {
		t.Fatal(err)
	}
	dir, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, name)
}

var legendItem = regexp.MustCompile(`>([a-z]+) ([0-9.]+)%<`)

// legend returns a flame SVG's legend: category → share.
func legend(svg string) map[string]string {
	out := map[string]string{}
	for _, m := range legendItem.FindAllStringSubmatch(svg, -1) {
		out[m[1]] = m[2]
	}
	return out
}

// TestFlameStoredClassification: `perflab flame RUN/CASE` classifies a
// stored case with the work patterns and user rules recorded in its
// run.json, exactly as the profile itself is with the same --work and
// --rules, whether or not this binary has the scenario; an old run.json
// falls back to the registry, and a tampered one to the registry with a
// warning, never a failure.
func TestFlameStoredClassification(t *testing.T) {
	dir := t.TempDir()
	rulesFile := filepath.Join(dir, "lock.rules")
	os.WriteFile(rulesFile, []byte("lock ^main\\.hashWork$\nother? ^runtime\\.systemstack$\n"), 0o644)
	userRules := []model.Rule{{Category: "lock", Pattern: `^main\.hashWork$`}, {Category: "other", Pattern: `^runtime\.systemstack$`, Fallback: true}}
	cipherWork := []string{`--work`, `^crypto/internal/fips140/sha256\.`, `--work`, `^crypto/sha256\.`}
	tests := []struct {
		name     string
		scenario string
		c        *model.Classification
		same     []string // flame flags on the profile file that give the same legend
		warning  string   // on stderr, "" for none
	}{
		{"unregistered scenario, recorded work", "my-own", &model.Classification{Work: []string{`^crypto/`}},
			[]string{"--work", "^crypto/"}, ""},
		{"recorded user rules and work", "my-own", &model.Classification{Work: []string{`^crypto/`}, Rules: userRules},
			[]string{"--rules", rulesFile, "--work", "^crypto/"}, ""},
		{"recorded: nothing is work", "cipher-cache", &model.Classification{}, nil, ""},
		{"recorded work wins over the registry", "cipher-cache", &model.Classification{Work: []string{`^runtime\.mallocgc$`}},
			[]string{"--work", `^runtime\.mallocgc$`}, ""},
		{"old run, registered scenario", "cipher-cache", nil, cipherWork, ""},
		{"old run, unregistered scenario", "my-own", nil, nil, "was stored without its classification rules (by a perflab before they were recorded), and my-own is not in this binary"},
		{"tampered: bad regexp", "cipher-cache", &model.Classification{Work: []string{`(`}}, cipherWork,
			"classification recorded in run.json is refused (work pattern: bad pattern"},
		{"tampered: unknown category", "my-own", &model.Classification{Work: []string{`^crypto/`}, Rules: []model.Rule{{Category: "speed", Pattern: "x"}}}, nil,
			`refused (rule 1: unknown category "speed"`},
		{"tampered: too many rules", "cipher-cache", &model.Classification{Rules: make([]model.Rule, model.MaxClassificationRules+1)}, cipherWork,
			"refused (257 rules (at most 256)); frames are classified with this binary's work patterns for cipher-cache"},
		// 15 patterns of 585 bounded repeats: within the byte limits,
		// ~800 MB compiled, which flame did before reading the profile
		// (issue 26); refused before it compiles, as serve refuses it.
		{"tampered: patterns too large compiled", "cipher-cache", &model.Classification{Work: slices.Repeat([]string{strings.Repeat("x{1000}", 585)}, 15)}, cipherWork,
			"MiB compiled, more than 64 MiB); frames are classified with this binary's work patterns for cipher-cache"},
		{"tampered: pattern too long", "my-own", &model.Classification{Work: []string{strings.Repeat("x", model.MaxPatternBytes+1)}}, nil,
			"my-own is not in this binary, so nothing is work"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			arg := storeCase(t, tt.scenario, tt.c)
			got, errs, code := execute(t, "flame", arg)
			if code != 0 {
				t.Fatalf("flame %s: exit %d\n%s", arg, code, errs)
			}
			want, werrs, code := execute(t, append([]string{"flame", realCPU}, tt.same...)...)
			if code != 0 {
				t.Fatalf("flame %s %v: exit %d\n%s", realCPU, tt.same, code, werrs)
			}
			gl, wl := legend(got), legend(want)
			if len(wl) == 0 || !reflect.DeepEqual(gl, wl) {
				t.Errorf("stored case legend %v, want %v (as with %v)", gl, wl, tt.same)
			}
			// The warning is wrapped at 80 columns: read it as words.
			if tt.warning == "" && errs != "" || !containsWords(errs, tt.warning) {
				t.Errorf("stderr %q, want %q", errs, tt.warning)
			}
		})
	}
	// The unregistered scenario's recorded work is work.
	got, _, _ := execute(t, "flame", storeCase(t, "my-own", &model.Classification{Work: []string{`^crypto/`}}))
	if w := legend(got)["work"]; w == "" || w == "0.0" {
		t.Errorf("work %q%% with recorded work patterns", w)
	}
}

// TestRunRecordsClassification: `perflab run --rules` stores the
// scenario's work patterns and the user's rules in run.json, and refuses
// before measuring rules a reader could not read back.
func TestRunRecordsClassification(t *testing.T) {
	dir := t.TempDir()
	rulesFile := filepath.Join(dir, "my.rules")
	os.WriteFile(rulesFile, []byte("# ours\nlock ^example\\.com/spin\\.\nother? ^cgocall$\n"), 0o644)
	runs := filepath.Join(dir, "runs")
	fast := []string{"--variant", "sum256", "-p", "keys=128", "--threads", "1", "--count", "1", "--time", "1ms", "--warmup", "1ms", "--profile", "none", "-o", runs}
	_, errs, code := execute(t, append([]string{"run", "cipher-cache", "--rules", rulesFile}, fast...)...)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errs)
	}
	run, err := store.Open(runs).Load(store.Latest)
	if err != nil {
		t.Fatal(err)
	}
	want := &model.Classification{
		Work:  []string{`^crypto/internal/fips140/sha256\.`, `^crypto/sha256\.`},
		Rules: []model.Rule{{Category: "lock", Pattern: `^example\.com/spin\.`}, {Category: "other", Pattern: `^cgocall$`, Fallback: true}},
	}
	if !reflect.DeepEqual(run.Config.Classification, want) {
		t.Errorf("run.json classification %+v, want %+v", run.Config.Classification, want)
	}

	many := filepath.Join(dir, "many.rules")
	os.WriteFile(many, []byte(strings.Repeat("lock ^x\n", model.MaxClassificationRules+1)), 0o644)
	other := filepath.Join(dir, "other-runs")
	_, errs, code = execute(t, append([]string{"run", "cipher-cache", "--rules", many}, append(fast[:len(fast)-1], other)...)...)
	// Refused while the file is read, at its 257th rule (issue 26).
	if code != 2 || !strings.Contains(errs, "many.rules:257: more than 256 rules") {
		t.Errorf("run with 257 rules: exit %d, stderr %q", code, errs)
	}
	if entries, _ := os.ReadDir(other); len(entries) != 0 {
		t.Errorf("refused run left %d entries in the store", len(entries))
	}
}

// TestFlameRefusesTerminal: without -o, flame would fill a terminal with
// SVG; it says what to do instead. Folded stacks are text and still go.
func TestFlameRefusesTerminal(t *testing.T) {
	path := realCPU
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"flame", path}, 2},
		{[]string{"flame", path, "--format", "html"}, 2},
		{[]string{"flame", path, "--format", "folded"}, 0},
	} {
		var out, errb bytes.Buffer
		root := NewRoot(&IO{Out: &out, Err: &errb, OutIsTerminal: true})
		root.SetArgs(tt.args)
		err := root.ExecuteContext(context.Background())
		if code := exitCode(err); code != tt.code {
			t.Errorf("%v: exit %d (%v), want %d", tt.args, code, err, tt.code)
		}
		if tt.code == 2 && (out.Len() != 0 || !strings.Contains(err.Error(), "-o file.svg")) {
			t.Errorf("%v: wrote %d bytes, error %v", tt.args, out.Len(), err)
		}
	}
}

// TestFlameStdin: a profile of - is read from standard input, with a
// file's limits and errors; only one of a diff's two can be.
func TestFlameStdin(t *testing.T) {
	data, err := os.ReadFile(realCPU)
	if err != nil {
		t.Fatal(err)
	}
	run := func(in []byte, args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		root := NewRoot(&IO{In: bytes.NewReader(in), Out: &out, Err: &errb})
		root.SetArgs(args)
		err := root.ExecuteContext(context.Background())
		if err != nil {
			errb.WriteString("perflab: " + err.Error() + "\n")
		}
		return out.String(), errb.String(), exitCode(err)
	}
	if out, errs, code := run(data, "flame", "-", "--format", "folded"); code != 0 || !strings.Contains(out, "main.worker;main.hashWork;crypto/sha256.Sum256") {
		t.Errorf("folded from stdin: exit %d, stderr %q, output %.200q", code, errs, out)
	}
	if _, errs, code := run([]byte("garbage"), "flame", "-", "--format", "folded"); code != 1 || !strings.Contains(errs, "standard input: not a pprof profile") {
		t.Errorf("garbage on stdin: exit %d, stderr %q", code, errs)
	}
	if _, errs, code := run(data, "flame", "--diff", "-", "-", "--format", "svg"); code != 2 || !strings.Contains(errs, "standard input (-) can be only one") {
		t.Errorf("both from stdin: exit %d, stderr %q", code, errs)
	}
}

// TestFlameStore: flame reads a stored case from the run store --store,
// the directory the other commands take as -o/--out (flame's -o is its
// output file), and they take --store too; a --out given to flame is
// refused, not read as either. flame had no store flag: a store other
// than $PERFLAB_DIR's or ./perflab-runs could only be named by path.
func TestFlameStore(t *testing.T) {
	arg := storeCase(t, "cipher-cache", nil)
	const name = "variant=a/threads=1"
	runDir := strings.TrimSuffix(arg, "/"+name)
	root, id := filepath.Dir(runDir), filepath.Base(runDir)
	empty, other := t.TempDir(), t.TempDir()
	t.Setenv(store.EnvDir, empty)
	out := filepath.Join(t.TempDir(), "a.svg")
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string // in stdout, or the output file, or stderr when code is not 0
	}{
		{"--store, the run by id", []string{"flame", id + "/" + name, "--store", root}, 0, "<svg"},
		{"--store, latest", []string{"flame", "latest/" + name, "--store", root, "-o", out}, 0, "<svg"},
		{"$PERFLAB_DIR's store without --store", []string{"flame", "latest/" + name}, 2, "no such profile file, case directory or run case in the store " + empty + " (another store: --store DIR)"},
		{"an empty --store, named", []string{"flame", "latest/" + name, "--store", other}, 2, "no such profile file, case directory or run case in the store " + other + " "},
		{"--out refused", []string{"flame", "latest/" + name, "--out", root, "-o", out}, 2, "--out " + root + ": flame's output file is -o/--output"},
		{"show takes --store", []string{"show", "latest", "--store", root}, 0, id},
		{"runs takes --store", []string{"runs", "--store", root}, 0, id},
	} {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(out)
			stdout, errs, code := execute(t, tt.args...)
			got := stdout
			if code != 0 {
				got = errs
			} else if slices.Contains(tt.args, "-o") {
				b, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				got = string(b)
			}
			if code != tt.code || !strings.Contains(got, tt.want) {
				t.Errorf("exit %d, want %d; got %.300q, want %q (stderr %q)", code, tt.code, got, tt.want, errs)
			}
		})
	}
}
