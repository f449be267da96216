package cli

import (
	"bytes"
	"context"
	"encoding/json"
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

// TestBenchTableGolden renders a stored perflab bench run of the lab's
// fixture (testdata/bench-run.json: its sub-benchmarks as the matrix, a
// failed and a panicking benchmark) as the command prints it.
func TestBenchTableGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/bench-run.json")
	if err != nil {
		t.Fatal(err)
	}
	var run model.Run
	if err := json.Unmarshal(data, &run); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	writeBenchTable(&buf, &run, false, false)
	golden := filepath.Join("testdata", "bench-table.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != string(want) {
		t.Errorf("table differs from %s (go test -run TestBenchTableGolden -update to accept):\n%s", golden, got)
	}
	for _, l := range strings.Split(buf.String(), "\n") {
		if n := utf8.RuneCountInString(l); n > 80 && !strings.Contains(l, " failed: ") {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
}

// TestBenchFlags: go test's one-dash spellings parse as perflab's flags.
func TestBenchFlags(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want BenchOptions
	}{
		{"defaults", []string{"bench"}, BenchOptions{Bench: ".", Count: 10, Time: time.Second, Profile: []string{"wall", "cpu"}, ProfileTime: time.Second}},
		{"go test spelling", []string{"bench", "./cache", "-bench", "Get/keys=128", "-count=20", "-benchtime", "2s", "-cpu", "1,4"},
			BenchOptions{Packages: []string{"./cache"}, Bench: "Get/keys=128", Count: 20, Time: 2 * time.Second, CPU: []int{1, 4}, Profile: []string{"wall", "cpu"}, ProfileTime: time.Second}},
		{"perflab spelling", []string{"bench", "./a", "./b", "--bench=X", "--work", "^a\\.", "--work", "^b\\.", "--profile", "none", "-o", "runs", "--json"},
			BenchOptions{Packages: []string{"./a", "./b"}, Bench: "X", Count: 10, Time: time.Second, Work: []string{`^a\.`, `^b\.`}, Profile: []string{"none"}, ProfileTime: time.Second, Out: "runs", JSON: true}},
		{"build flags, go test spelling", []string{"bench", "-tags", "a,b", "-race", "-gcflags=all=-N -l", "./c"},
			BenchOptions{Packages: []string{"./c"}, Bench: ".", Count: 10, Time: time.Second, Profile: []string{"wall", "cpu"}, ProfileTime: time.Second, Tags: "a,b", Race: true, GCFlags: "all=-N -l"}},
		{"build flags, perflab spelling", []string{"bench", "--tags=a", "--gcflags", "-N", "./c"},
			BenchOptions{Packages: []string{"./c"}, Bench: ".", Count: 10, Time: time.Second, Profile: []string{"wall", "cpu"}, ProfileTime: time.Second, Tags: "a", GCFlags: "-N"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got *BenchOptions
			root := NewRoot(&IO{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}})
			for _, c := range root.Commands() {
				if c.Name() == "bench" {
					root.RemoveCommand(c)
				}
			}
			root.AddCommand(newBenchCmd(&IO{}, func(_ context.Context, _ *IO, o *BenchOptions) error { got = o; return nil }))
			root.SetArgs(tt.args)
			if err := root.ExecuteContext(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Fatal("not run")
			}
			g := *got
			if g.Bench != tt.want.Bench || g.Count != tt.want.Count || g.Time != tt.want.Time || !slices.Equal(g.CPU, tt.want.CPU) ||
				!slices.Equal(g.Packages, tt.want.Packages) || !slices.Equal(g.Work, tt.want.Work) || !slices.Equal(g.Profile, tt.want.Profile) ||
				g.Out != tt.want.Out || g.JSON != tt.want.JSON || g.Tags != tt.want.Tags || g.Race != tt.want.Race || g.GCFlags != tt.want.GCFlags {
				t.Errorf("parsed %+v\nwant   %+v", g, tt.want)
			}
		})
	}
}

// TestBenchErrors: what cannot be benchmarked exits 2 with a message that
// says why; a bad flag too.
func TestBenchErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds test binaries")
	}
	fix := filepath.Join("..", "lab", "testdata")
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"does not build", []string{"bench", filepath.Join(fix, "broken")}, "does not build"},
		{"no benchmarks", []string{"bench", filepath.Join(fix, "nobench")}, "no benchmarks"},
		{"pattern matches none", []string{"bench", filepath.Join(fix, "benchfix"), "-bench", "Nope"}, `-bench "Nope" matches no benchmark`},
		{"bad count", []string{"bench", "-count", "0"}, "--count 0"},
		{"bad profile", []string{"bench", "--profile", "mutex"}, "--profile mutex"},
		{"unknown flag", []string{"bench", "--nope"}, "unknown flag --nope"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append(slices.Clone(tt.args), "-o", t.TempDir())
			_, errs, code := execute(t, args...)
			if code != 2 || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, want 2 saying %q:\n%s", code, tt.want, errs)
			}
		})
	}
}

// TestBenchUnbuilt: of two packages, the one that does not build is
// reported with the compiler's message and exit 1; the other is measured
// and saved.
func TestBenchUnbuilt(t *testing.T) {
	if testing.Short() {
		t.Skip("runs benchmarks")
	}
	dir := t.TempDir()
	fix := filepath.Join("..", "lab", "testdata")
	out, errs, code := execute(t, "bench", "./"+filepath.Join(fix, "broken"), "./"+filepath.Join(fix, "benchfix"), "-bench", "Hash/size=64/^loop$",
		"-count", "1", "-benchtime", "10ms", "-cpu", "1", "--profile", "none", "-o", dir)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, want := range []string{"broken does not build", "undefined: undefined", "1 of 2 packages did not build (the others are measured and saved"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if !strings.Contains(out, "size=64 sub2=loop") {
		t.Errorf("benchfix not measured:\n%s", out)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d runs stored, want benchfix's", len(entries))
	}
}

// TestBenchCommand runs the fixture's benchmarks through the command: the
// table, the note of what counted as work, exit 1 for its failing
// benchmark, and a stored run that perflab show reads.
func TestBenchCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs benchmarks")
	}
	dir := t.TempDir()
	fix := filepath.Join("..", "lab", "testdata", "benchfix")
	out, errs, code := execute(t, "bench", "./"+fix, "-bench", "Hash/size=64/^loop$|Fail", "-count", "2", "-benchtime", "10ms", "-cpu", "1",
		"--profile-time", "200ms", "-o", dir)
	if code != 1 || !strings.Contains(errs, "1 of 2 benchmarks failed (the others are measured and saved): BenchmarkFail") {
		t.Errorf("exit %d, want 1 for BenchmarkFail:\n%s", code, errs)
	}
	// The work: line is wrapped at 80 columns: its words are looked for
	// with the line breaks and indents read as single spaces.
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"size=64 sub2=loop threads=1", "budget", "work: functions matching", "(the package's own code; --work to change)",
		"BenchmarkFail failed: fix_test.go:"} {
		if !strings.Contains(flat, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	show, errs, code := execute(t, "show", "latest", "-o", dir)
	if code != 0 || !strings.Contains(show, "Hash") {
		t.Errorf("show: exit %d\n%s\n%s", code, show, errs)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("%d runs stored", len(entries))
	}
	res, err := os.ReadFile(filepath.Join(dir, entries[0].Name(), store.ResultsFile))
	if err != nil || !strings.Contains(string(res), "BenchmarkHash/size=64/loop ") {
		t.Errorf("results.txt lacks go test's name (no -1 at -cpu 1): %v\n%s", err, res)
	}
}

// TestBenchLog: on a pipe, progress is a line per phase: each package
// built and listed once, each round once (not named for the benchmark
// that ran first in it), each profiling run.
func TestBenchLog(t *testing.T) {
	var buf bytes.Buffer
	log := benchLog(&IO{Err: &buf})
	for _, l := range []string{
		"building example.com/a", "listing a.BenchmarkX", "listing a.BenchmarkY",
		"round 1/2: BenchmarkX", "round 1/2: BenchmarkY", "round 2/2: BenchmarkY", "round 2/2: BenchmarkX",
		"profiling 1/2: BenchmarkX", "profiling 2/2: BenchmarkY",
	} {
		log(l)
	}
	want := []string{
		"perflab: building example.com/a", "perflab: listing the benchmarks of a",
		"perflab: round 1/2 (0s so far)", "perflab: round 2/2 (0s so far)",
		"perflab: profiling 1/2: BenchmarkX", "perflab: profiling 2/2: BenchmarkY",
	}
	if got := strings.Split(strings.TrimSpace(buf.String()), "\n"); !slices.Equal(got, want) {
		t.Errorf("progress on a pipe:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
