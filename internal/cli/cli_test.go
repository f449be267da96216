package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/store"
	_ "github.com/perflab/perflab/scenarios/ciphercache"
)

// execute runs the CLI in-process and returns stdout, stderr and the exit
// code Main would return.
func execute(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	root := NewRoot(&IO{Out: &out, Err: &errb, Cmd: "perflab"})
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if err != nil {
		errb.WriteString("perflab: " + err.Error() + "\n")
	}
	return out.String(), errb.String(), exitCode(err)
}

func TestRunShowList(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs")
	out, errs, code := execute(t, "run", "cipher-cache", "--variant", "mutex,sum256", "-p", "keys=128",
		"--threads", "2", "--count", "2", "--time", "2ms", "--warmup", "1ms", "--profile", "none", "-o", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	for _, want := range []string{"keys=128 key=ssk threads=2", "mutex", "sum256", "hits/op", "fastest: "} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, "saved") {
		t.Errorf("stderr lacks the saved line:\n%s", errs)
	}
	// Two repetitions give no interval: said before the rounds, in lines
	// that fit 80 columns.
	if !strings.Contains(errs, "perflab: 2 repetitions are too few for a 95% interval (time/op shows ±∞): use\n  --count 6 or more") {
		t.Errorf("stderr does not say --count 2 is too few:\n%s", errs)
	}
	for _, l := range strings.Split(errs, "\n") {
		if n := utf8.RuneCountInString(l); n > 80 && !strings.Contains(l, dir) {
			t.Errorf("stderr line of %d columns: %q", n, l)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("store has %d entries", len(entries))
	}
	res, err := os.ReadFile(filepath.Join(dir, entries[0].Name(), "results.txt"))
	if err != nil || !strings.Contains(string(res), "BenchmarkCipherCache/variant=mutex/keys=128/key=ssk/threads=2-") {
		t.Errorf("results.txt: %v\n%s", err, res)
	}

	show, _, code := execute(t, "show", "-o", dir)
	if code != 0 || !strings.Contains(show, entries[0].Name()) {
		t.Errorf("show exit %d:\n%s", code, show)
	}
	// The path the "saved" line prints works wherever a run is taken.
	runDir := filepath.Join(dir, entries[0].Name())
	// (A run compared with itself is refused: compare two of its cases.)
	for _, args := range [][]string{{"show", runDir},
		{"compare", runDir + "/variant=mutex/keys=128/key=ssk/threads=2", "latest/variant=sum256/keys=128/key=ssk/threads=2", "-o", dir},
		{"compare", runDir, "--base", "mutex"}} {
		out, errs, code := execute(t, args...)
		if code != 0 || !strings.Contains(out, "sum256") {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errs)
		}
	}
	// The path and latest are one run: refused as such.
	if out, errs, code := execute(t, "compare", runDir, "latest", "-o", dir); code != 3 || !strings.Contains(out, "both sides are run "+entries[0].Name()) {
		t.Errorf("compare %s latest: exit %d\n%s%s", runDir, code, out, errs)
	}
	list, _, code := execute(t, "show", "--list", "-o", dir)
	if code != 0 || !strings.Contains(list, "cipher-cache") || !strings.Contains(list, "complete") {
		t.Errorf("show --list exit %d:\n%s", code, list)
	}
	ls, _, code := execute(t, "list")
	if code != 0 || !strings.Contains(ls, "cipher-cache") || !strings.Contains(ls, "nocache-pool") {
		t.Errorf("list exit %d:\n%s", code, ls)
	}
}

func TestRunErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	fast := []string{"--count", "1", "--time", "1ms", "--warmup", "1ms", "--profile", "none"}
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"unknown scenario", []string{"run", "nope"}, 2, `unknown scenario "nope"`},
		{"unknown variant", []string{"run", "cipher-cache", "--variant", "spinlock"}, 2, `no variant "spinlock"`},
		{"unknown param", []string{"run", "cipher-cache", "-p", "colour=red"}, 2, `no parameter "colour"`},
		{"bad value", []string{"run", "cipher-cache", "-p", "key=md5"}, 2, `unknown value "md5"`},
		{"bad int", []string{"run", "cipher-cache", "-p", "keys=many"}, 2, "not an integer"},
		{"bad threads", []string{"run", "cipher-cache", "--threads", "0"}, 2, "threads=0"},
		{"out of range", []string{"run", "cipher-cache", "-p", "keys=1G"}, 2, "parameter keys: 1G is out of range (1 to 1M)"},
		// Each bad value named, not one sentence for four flags.
		{"bad count", []string{"run", "cipher-cache", "--count", "-1"}, 2, "--count -1: want at least 1"},
		{"bad time", []string{"run", "cipher-cache", "--time", "0s"}, 2, "--time 0s: want a positive duration"},
		{"bad warmup", []string{"run", "cipher-cache", "--warmup", "-1s"}, 2, "--warmup -1s: want 0 or a positive duration"},
		{"bad profile time", []string{"run", "cipher-cache", "--profile-time", "0s"}, 2, "--profile-time 0s: want a positive duration"},
		{"bad profile", []string{"run", "cipher-cache", "--profile", "heap"}, 2, `unknown profile "heap"`},
		{"bad trace", []string{"run", "cipher-cache", "--trace", "everywhere"}, 2, `--trace "everywhere": want slices or window`},
		{"bad flag", []string{"run", "cipher-cache", "--frobnicate"}, 2, "unknown flag"},
		{"no scenario", []string{"run"}, 2, "name a scenario to run"},
		{"scenario twice", []string{"run", "cipher-cache", "test-broken", "cipher-cache"}, 2, "scenario cipher-cache is named twice"},
		// Conflicting or empty selections are errors, not silently one
		// way or every variant.
		{"threads twice", []string{"run", "cipher-cache", "--threads", "2", "-p", "threads=1"}, 2, "--threads 2 and -p threads=1 both give goroutine counts"},
		{"empty variant", []string{"run", "cipher-cache", "--variant", ""}, 2, "--variant is empty"},
		{"empty variant in a list", []string{"run", "cipher-cache", "--variant", "mutex,"}, 2, "--variant mutex,: an empty variant name"},
		// What a user might type after the scenario, as if a scenario.
		{"variant as a scenario", []string{"run", "cipher-cache", "mutex"}, 2, `unknown scenario "mutex": it is a variant of cipher-cache; to run only it, use --variant mutex`},
		{"variant alone", []string{"run", "nocache-pool"}, 2, `unknown scenario "nocache-pool": it is a variant of cipher-cache (perflab run cipher-cache --variant nocache-pool)`},
		{"parameter as a scenario", []string{"run", "cipher-cache", "keys=128"}, 2, `for a parameter, use -p keys=128`},
		{"unwritable store", append([]string{"run", "cipher-cache", "--variant", "sum256", "-p", "keys=128", "--threads", "1", "-o", filepath.Join(file, "runs")}, fast...), 1, "run store"},
		{"show missing run", []string{"show", "nope", "-o", t.TempDir()}, 2, `no run "nope"`},
		{"show traversal", []string{"show", "../etc", "-o", t.TempDir()}, 2, "invalid run id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs, code := execute(t, tt.args...)
			if code != tt.code || !strings.Contains(errs, tt.msg) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", code, errs, tt.code, tt.msg)
			}
		})
	}
}

func init() {
	// A scenario with a broken variant, registered only in this test binary.
	perflab.Register(&perflab.Scenario{Name: "test-broken", Doc: "a panicking and an n/a variant",
		Variants: []perflab.Variant{
			{Name: "ok", New: func(perflab.Params) (perflab.Case, error) {
				return perflab.CaseFunc(func(int) perflab.Worker { return perflab.WorkerFunc(func(int) {}) }), nil
			}},
			{Name: "panics", New: func(perflab.Params) (perflab.Case, error) {
				return perflab.CaseFunc(func(int) perflab.Worker {
					return perflab.WorkerFunc(func(n int) {
						if n > 10 {
							panic("worker exploded")
						}
					})
				}), nil
			}},
			{Name: "absent", New: func(perflab.Params) (perflab.Case, error) {
				return nil, fmt.Errorf("no such lookup: %w", perflab.ErrNotApplicable)
			}},
		}})
}

// TestRunAllFailed: when every case failed, the error does not speak of
// "the others", measured and saved.
func TestRunAllFailed(t *testing.T) {
	_, errs, code := execute(t, "run", "test-broken", "--variant", "panics", "--count", "2", "--time", "2ms", "--warmup", "1ms", "--profile", "none", "-o", t.TempDir())
	if want := "test-broken: its one case failed: variant=panics"; code != 1 || !strings.Contains(errs, want) || strings.Contains(errs, "the others") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and %q", code, errs, want)
	}
}

func TestRunReportsFailedVariant(t *testing.T) {
	dir := t.TempDir()
	out, errs, code := execute(t, "run", "test-broken", "--count", "2", "--time", "2ms", "--warmup", "1ms", "--profile", "none", "-o", dir)
	if code != 1 {
		t.Fatalf("exit %d, want 1 for a failed case\n%s", code, errs)
	}
	for _, want := range []string{"failed: worker panicked: worker exploded", "n/a: no such lookup"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, "1 of 3 cases failed") {
		t.Errorf("stderr:\n%s", errs)
	}
	// The good case is saved all the same.
	show, _, code := execute(t, "show", "-o", dir)
	if code != 0 || !strings.Contains(show, "ok") {
		t.Errorf("show exit %d:\n%s", code, show)
	}
}

// cancelAt is a command's stderr that cancels its context once the
// text at has been written to it.
type cancelAt struct {
	bytes.Buffer
	at     string
	cancel func()
}

func (w *cancelAt) Write(p []byte) (int, error) {
	n, err := w.Buffer.Write(p)
	if strings.Contains(w.String(), w.at) {
		w.cancel()
	}
	return n, err
}

func TestRunInterruptedIsSavedIncomplete(t *testing.T) {
	dir := t.TempDir()
	// Interrupted as round 2 begins, with round 1 measured: a fixed
	// 400 ms fell in the setup, before any round, in 2 runs of 12 under
	// -race at a load of 9 on 2 cores. The minute only bounds a hang.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	errb := &cancelAt{at: "perflab: round 2/1000 ", cancel: cancel}
	root := NewRoot(&IO{Out: &out, Err: errb})
	root.SetArgs([]string{"run", "cipher-cache", "--variant", "sum256", "-p", "keys=128", "--threads", "1",
		"--count", "1000", "--time", "5ms", "--warmup", "1ms", "--profile", "none", "-o", dir})
	err := root.ExecuteContext(ctx)
	if code := exitCode(err); code != 130 {
		t.Fatalf("exit %d (%v), want 130\n%s", code, err, errb.String())
	}
	if !strings.Contains(out.String(), "INCOMPLETE") {
		t.Errorf("table does not say the run is incomplete:\n%s", out.String())
	}
	show, _, code := execute(t, "show", "--json", "-o", dir)
	if code != 0 {
		t.Fatalf("show exit %d", code)
	}
	// show --json is the report; the stored run has the repetitions.
	var rep struct {
		Complete bool   `json:"complete"`
		Status   string `json:"status"`
	}
	if err := json.Unmarshal([]byte(show), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Complete || !strings.HasPrefix(rep.Status, "INCOMPLETE") {
		t.Errorf("show --json: complete=%v status %q, want an incomplete run", rep.Complete, rep.Status)
	}
	stored, lerr := store.Open(dir).Load(store.Latest)
	if lerr != nil {
		t.Fatal(lerr)
	}
	run := *stored
	if run.Complete || len(run.Cases) != 1 || len(run.Cases[0].Reps) == 0 {
		t.Fatalf("stored run complete=%v cases=%d, want incomplete with the measured reps", run.Complete, len(run.Cases))
	}
	// The stored note is short and says where: not the message printed
	// at the interrupt, which says what was kept.
	if !regexp.MustCompile(`^interrupted in round \d+/1000$`).MatchString(run.Note) {
		t.Errorf("note %q, want \"interrupted in round N/1000\"", run.Note)
	}
	if !strings.Contains(err.Error(), "the rounds measured so far are saved") {
		t.Errorf("the interrupt's message %q does not say what was kept", err)
	}
	if !strings.Contains(out.String(), "INCOMPLETE: interrupted in round") {
		t.Errorf("table header:\n%s", out.String())
	}
}

func TestMultiScenarioRuns(t *testing.T) {
	dir := t.TempDir()
	fast := []string{"--count", "1", "--time", "1ms", "--warmup", "1ms", "--profile", "none", "-o", dir}
	// A typo that no scenario accepts is an error, not silently ignored.
	_, errs, code := execute(t, append([]string{"run", "cipher-cache", "test-broken", "-p", "kyes=128"}, fast...)...)
	if code != 2 || !strings.Contains(errs, `has a parameter "kyes"`) {
		t.Errorf("exit %d:\n%s", code, errs)
	}
	// A failed case in the first scenario does not stop the second.
	_, errs, code = execute(t, append([]string{"run", "test-broken", "cipher-cache", "--variant", "ok,panics,sum256", "-p", "keys=128", "--threads", "1"}, fast...)...)
	if code != 1 || !strings.Contains(errs, "test-broken: 1 of") {
		t.Errorf("exit %d:\n%s", code, errs)
	}
	list, _, _ := execute(t, "show", "--list", "-o", dir)
	if !strings.Contains(list, "cipher-cache") || !strings.Contains(list, "test-broken") {
		t.Errorf("both scenarios should be stored:\n%s", list)
	}
}

// TestFlagValueErrors: a bad flag value is a usage error in the user's
// terms, without strconv's words.
func TestFlagValueErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"threads", []string{"--threads", "x"}, `--threads: "x" is not a whole number`},
		{"one of threads", []string{"--threads", "1,x"}, `--threads 1,x: "x" is not a whole number`},
		{"empty threads", []string{"--threads", ""}, `--threads: "" is not a whole number`},
		{"seed", []string{"--seed", "abc"}, `--seed: "abc" is not a whole number (0 or more)`},
		{"negative seed", []string{"--seed", "-1"}, `--seed: "-1" is not a whole number (0 or more)`},
		{"count out of range", []string{"--count", "99999999999999999999"}, `--count: "99999999999999999999" is out of range`},
		{"count", []string{"--count", "2.5"}, `--count: "2.5" is not a whole number`},
		{"duration", []string{"--time", "soon"}, `--time: "soon" is not a duration, such as 200ms, 1.5s or 2m`},
		{"duration in days", []string{"--time", "7d"}, `--time: "7d" is not a duration: hours are the largest unit, so write 168h`},
		{"bool", []string{"--json=maybe"}, `--json: "maybe" is not true or false`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, errs, code := execute(t, append([]string{"run", "cipher-cache", "-o", t.TempDir()}, tt.args...)...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if !strings.Contains(errs, tt.want) || strings.Contains(errs, "strconv") || strings.Contains(errs, "parsing") {
				t.Errorf("stderr %q, want %q", errs, tt.want)
			}
		})
	}
}

// TestNoteWrapped: a note on stderr fits 80 columns, with every word kept.
func TestNoteWrapped(t *testing.T) {
	text := "cipher-cache: 12 cases, 10 rounds of 200ms each, then profiling; about 2m0s; GOMAXPROCS=2 GOGC=100"
	var b strings.Builder
	noteWrapped(&b, text)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "perflab: cipher-cache:") || !strings.HasPrefix(lines[1], "  ") {
		t.Fatalf("not wrapped as a note:\n%s", b.String())
	}
	var words []string
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("line %d is %d columns: %q", i, n, l)
		}
		words = append(words, strings.Fields(l)...)
	}
	if got := strings.Join(words[1:], " "); got != text {
		t.Errorf("words changed:\n%s\nwant\n%s", got, text)
	}
}
