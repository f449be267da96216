package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/pyroscope"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/profiles"
)

// quickRun stores a small real run of cipher-cache (mutex and sum256, one
// case each) with the profile kinds given, and returns the store directory.
func quickRun(t *testing.T, profiles string, extra ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "runs")
	args := append([]string{"run", "cipher-cache", "--variant", "mutex,sum256", "-p", "keys=128", "--threads", "2",
		"--count", "2", "--time", "5ms", "--warmup", "1ms", "--profile", profiles, "--profile-time", "300ms", "-o", dir}, extra...)
	_, errs, code := execute(t, args...)
	if code != 0 {
		t.Fatalf("perflab run: exit %d\n%s", code, errs)
	}
	return dir
}

func TestPushErrors(t *testing.T) {
	t.Setenv(envPyroscopeURL, "")
	empty := t.TempDir()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	dir := quickRun(t, "cpu")
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no url", []string{"push", "-o", dir}, 2, "no Pyroscope server: pass --url"},
		{"bad url", []string{"push", "-o", dir, "--url", "localhost:4040"}, 2, "want http://host:port"},
		{"bad label", []string{"push", "-o", dir, "--url", down.URL, "--label", "novalue"}, 2, `--label "novalue": want name=value`},
		{"bad timestamp", []string{"push", "-o", dir, "--url", down.URL, "--timestamp", "yesterday"}, 2, "want profile or now"},
		{"label perflab sets", []string{"push", "-o", dir, "--url", down.URL, "--label", "variant=x"}, 2, `label "variant": perflab labels every profile with variant`},
		{"label the server sets", []string{"push", "-o", dir, "--url", down.URL, "--label", "service_name=x"}, 2, "--service-name"},
		{"label named like a parameter", []string{"push", "-o", dir, "--url", down.URL, "--label", "keys=x"}, 2, `label "keys": perflab labels every profile with keys`},
		{"long label", []string{"push", "-o", dir, "--url", down.URL, "--label", "note=" + strings.Repeat("n", 3000)}, 2, `label "note"`},
		{"negative timeout", []string{"push", "-o", dir, "--url", down.URL, "--timeout", "-1s"}, 2, "--timeout -1s"},
		{"bad kind", []string{"push", "-o", dir, "--url", down.URL, "--profile", "heap"}, 2, `--profile "heap"`},
		{"bad service", []string{"push", "-o", dir, "--url", down.URL, "--service-name", "a b"}, 2, "--service-name: invalid service name"},
		{"no runs", []string{"push", "-o", empty, "--url", down.URL}, 2, "no runs in"},
		{"no profiles", []string{"push", "-o", dir, "--url", down.URL, "--profile", "wall"}, 1, "no stored profiles to push"},
		{"server down", []string{"push", "-o", dir, "--url", down.URL}, 1, "(the run is still stored; `perflab push"},
		{"run --push checks the url first", []string{"run", "cipher-cache", "--push", "ftp://x", "-o", empty}, 2, "want http://host:port"},
		{"run --push negative timeout", []string{"run", "cipher-cache", "--push", down.URL, "--push-timeout", "-1s", "-o", empty}, 2, "--push-timeout -1s"},
		{"run --push without profiles", []string{"run", "cipher-cache", "--push", down.URL, "--profile", "none", "-o", empty}, 2, "--profile none captures none"},
		{"flame from pyroscope and a file", []string{"flame", "--from-pyroscope", down.URL, "x.pb.gz"}, 2, "give no profile file"},
		{"flame from pyroscope bad type", []string{"flame", "--from-pyroscope", down.URL, "--profile-type", "heap"}, 2, `unknown profile type "heap"`},
		{"flame from pyroscope down", []string{"flame", "--from-pyroscope", down.URL}, 1, "connection refused"},
		{"flame from pyroscope no range", []string{"flame", "--from-pyroscope", down.URL, "--since", "0s"}, 2, "--since 0s: give how far back"},
		{"flame without input", []string{"flame"}, 2, "or read one with --from-pyroscope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs, code := execute(t, tt.args...)
			if code != tt.code || !strings.Contains(errs, tt.msg) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", code, errs, tt.code, tt.msg)
			}
			if code == 2 && strings.Contains(errs, "pushing run") {
				t.Errorf("a usage error after the push began:\n%s", errs)
			}
		})
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("run --push with a bad URL measured anyway: %v", entries)
	}
}

var pushSink uint64

func init() {
	// A scenario with a case that fails and one whose wall profile is
	// sure to have samples (a push with only empty profiles sends nothing
	// and so cannot fail), registered only in this test binary.
	perflab.Register(&perflab.Scenario{Name: "test-broken-push", Doc: "a spinning and a panicking variant",
		Variants: []perflab.Variant{
			{Name: "spins", New: func(perflab.Params) (perflab.Case, error) {
				return perflab.CaseFunc(func(int) perflab.Worker {
					return perflab.WorkerFunc(func(n int) {
						x := pushSink
						for i := 0; i < n*1000; i++ {
							x = x*6364136223846793005 + 1442695040888963407
						}
						pushSink = x
					})
				}), nil
			}},
			{Name: "panics", New: func(perflab.Params) (perflab.Case, error) {
				return perflab.CaseFunc(func(int) perflab.Worker {
					return perflab.WorkerFunc(func(n int) { panic("worker exploded") })
				}), nil
			}},
		}})
}

// TestRunPushFailureKeepsFailedCases: when the push fails too, the exit
// error still names the failed case (it used to say only that the push
// failed), and the run is stored.
func TestRunPushFailureKeepsFailedCases(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	dir := t.TempDir()
	_, errs, code := execute(t, "run", "test-broken-push", "--count", "2", "--time", "5ms", "--warmup", "1ms",
		"--profile", "wall", "--profile-time", "200ms", "-o", dir, "--push", down.URL)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, errs)
	}
	for _, want := range []string{"1 of 2 cases failed", "not sent to " + down.URL, "the run is still stored"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if _, err := store.Open(dir).Load(store.Latest); err != nil {
		t.Errorf("run not stored: %v", err)
	}
}

// TestRunInterruptedDuringPush: Ctrl-C while a run is being pushed ends
// the command with 130 and starts no further scenario (it used to go on
// to the next one and store it empty).
func TestRunInterruptedDuringPush(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // so the server notices the client leave
		cancel()                    // the user presses Ctrl-C during the upload
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	var out, errb strings.Builder
	root := NewRoot(&IO{Out: &out, Err: &errb})
	root.SetArgs([]string{"run", "test-broken-push", "cipher-cache", "--variant", "spins,sum256", "-p", "keys=128", "--threads", "1",
		"--count", "2", "--time", "5ms", "--warmup", "1ms", "--profile", "wall", "--profile-time", "200ms", "-o", dir, "--push", srv.URL})
	err := root.ExecuteContext(ctx)
	if code := exitCode(err); code != 130 {
		t.Fatalf("exit %d (%v), want 130\n%s", code, err, errb.String())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || !strings.HasSuffix(entries[0].Name(), "test-broken-push") {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("stored runs %v, want only the pushed test-broken-push run", names)
	}
}

// pyroscopeURL returns the Pyroscope server for integration tests: skipped
// without one on a developer's machine, a failure in CI (.ci/run starts one).
func pyroscopeURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv(envPyroscopeURL)
	if u == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set but CI is: .ci/run must start the server with scripts/pyroscope.sh start", envPyroscopeURL)
		}
		t.Skipf("no Pyroscope server: run `scripts/pyroscope.sh start` and set %s=http://127.0.0.1:4040", envPyroscopeURL)
	}
	return u
}

// hasFunction reports whether any sample of p has a function whose name
// contains sub.
func hasFunction(p *profile.Profile, sub string) bool {
	for _, f := range p.Function {
		if strings.Contains(f.Name, sub) {
			return true
		}
	}
	return false
}

// storedProfile returns the stored kind profile of variant's case in run.
func storedProfile(t *testing.T, st *store.Store, run *model.Run, variant, kind string) *profile.Profile {
	t.Helper()
	for _, c := range run.Cases {
		if c.Variant != variant || c.Profiles[kind] == "" {
			continue
		}
		path, err := st.Path(run.ID, c.Profiles[kind])
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		p, err := profile.Parse(f)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Fatalf("run has no %s profile for variant %s", kind, variant)
	return nil
}

// sampledFunctions returns the names of the functions in the stacks of
// p's samples with a non-zero value.
func sampledFunctions(p *profile.Profile) map[string]bool {
	names := map[string]bool{}
	for _, s := range p.Sample {
		if slices.ContainsFunc(s.Value, func(v int64) bool { return v != 0 }) {
			for _, l := range s.Location {
				for _, ln := range l.Line {
					names[ln.Function.Name] = true
				}
			}
		}
	}
	return names
}

// serverName is a function's name as Pyroscope stores it: a generic
// instantiation's type arguments as "[...]" ("offHeap[go.shape.struct {
// … }]).add" comes back as "offHeap[...]).add"; seen in CI, when a CPU
// sample landed in the context-switch recorder's generic ring, and checked
// against the server by pushing such names).
func serverName(name string) string {
	var b strings.Builder
	depth := 0
	for _, r := range name {
		switch {
		case r == '[':
			if depth == 0 {
				b.WriteString("[...")
			}
			depth++
		case r == ']' && depth > 0:
			depth--
			if depth == 0 {
				b.WriteByte(']')
			}
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// containing reports whether a name in names contains sub.
func containing(names map[string]bool, sub string) bool {
	for n := range names {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}

// TestPushIntegration measures a real cipher-cache run, pushes it with
// `perflab run --push` and again with `perflab push`, and reads it back
// from the server by its labels.
func TestPushIntegration(t *testing.T) {
	url := pyroscopeURL(t)
	// A service name of our own, so runs against a long-lived server do
	// not mix.
	service := fmt.Sprintf("perflab-it-%d", time.Now().UnixNano())
	dir := quickRun(t, "wall,cpu,mutex,block", "--push", url)
	st := store.Open(dir)
	run, err := st.Load(store.Latest)
	if err != nil {
		t.Fatal(err)
	}
	out, errs, code := execute(t, "push", run.ID, "-o", dir, "--url", url, "--service-name", service, "--label", "ci-job=push-it")
	if code != 0 {
		t.Fatalf("perflab push: exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, fmt.Sprintf(`profiles sent to %s as {service_name=%q,run_id=%q}`, strings.TrimSuffix(url, "/"), service, run.ID)) {
		t.Errorf("push summary:\n%s", out)
	}

	c, err := pyroscope.New(url, pyroscope.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start, end := time.Now().Add(-10*time.Minute), time.Now().Add(time.Minute)
	sel := fmt.Sprintf(`{service_name=%q,run_id=%q,scenario="cipher-cache"`, service, run.ID)
	var series []map[string]string
	for i := 0; i < 50 && len(series) == 0; i++ {
		if series, err = c.Series(ctx, sel+"}", start, end); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(series) == 0 {
		t.Fatalf("no series match %s}", sel)
	}
	for _, s := range series {
		for k, want := range map[string]string{
			"keys": "128", "key": "ssk", "threads": "2", "goos": runtime.GOOS, "goarch": runtime.GOARCH, "ci_job": "push-it",
		} {
			if s[k] != want {
				t.Errorf("series %v: %s = %q, want %q", s, k, s[k], want)
			}
		}
	}
	// Each profile comes back whole: every function its samples name is
	// in the profile read back. What the run caught is the machine's
	// doing, not the push's: a mutex profile is empty when no contention
	// happened, and a short window under -race on a busy machine can
	// catch few CPU samples (the flame's window once caught no work
	// sample in CI), so a function the stored profile lacks is not looked
	// for.
	for _, tt := range []struct{ variant, kind, fn string }{
		// With 128 keys the mutex variant's cache always hits, so it locks
		// and looks up; sum256 hashes with crypto/sha256 every call.
		{"mutex", "wall", "ciphercache.(*mutexCache).get"},
		{"mutex", "cpu", "ciphercache.(*lru).get"},
		{"mutex", "mutex", "Unlock"},
		{"sum256", "wall", "sha256"},
		{"sum256", "cpu", "sha256"},
	} {
		stored := sampledFunctions(storedProfile(t, st, run, tt.variant, tt.kind))
		if !containing(stored, tt.fn) {
			t.Logf("the stored %s profile of %s has no sample in %s (%d functions sampled); nothing of it to read back", tt.kind, tt.variant, tt.fn, len(stored))
			continue
		}
		p, err := c.SelectMergeProfile(ctx, pyroscope.Query{ProfileType: tt.kind, Selector: sel + fmt.Sprintf(",variant=%q}", tt.variant), Start: start, End: end})
		if err != nil {
			t.Errorf("%s %s: %v", tt.variant, tt.kind, err)
			continue
		}
		back := map[string]bool{}
		for _, f := range p.Function {
			back[f.Name] = true
		}
		var lost []string
		for name := range stored {
			if !back[name] && !back[serverName(name)] {
				lost = append(lost, name)
			}
		}
		if !containing(back, tt.fn) || len(lost) > 0 {
			sort.Strings(lost)
			t.Errorf("%s %s profile read back: %s found %v; functions of the stored profile missing: %v", tt.variant, tt.kind, tt.fn, containing(back, tt.fn), lost)
		}
	}
	// Read back, the profiles get the categories of a lab run: each
	// variant's wall time splits as its stored profile does with the same
	// rules, to the nanosecond — the mutex variant's shows lock, sum256's
	// work where its window caught any (how much work a short window
	// caught is the machine's doing: running time is split by CPU
	// samples, and without one in the hashing it is no work at all).
	sc, err := perflab.Lookup("cipher-cache")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := profiles.DefaultRules().WithWork(sc.Work...)
	if err != nil {
		t.Fatal(err)
	}
	for variant, cat := range map[string]profiles.Category{"mutex": "lock", "sum256": "work"} {
		p, err := c.SelectMergeProfile(ctx, pyroscope.Query{ProfileType: "wall", Selector: sel + fmt.Sprintf(",variant=%q}", variant), Start: start, End: end})
		if err != nil {
			t.Fatal(err)
		}
		by, total := profiles.Breakdown(p, 0, rules)
		sby, stotal := profiles.Breakdown(storedProfile(t, st, run, variant, "wall"), 0, rules)
		t.Logf("%s read back: %s %.0f%% of %v", variant, cat, 100*float64(by[cat])/float64(total), time.Duration(total))
		if total == 0 || total != stotal || !maps.Equal(by, sby) {
			t.Errorf("%s: read back %v of %d ns, stored %v of %d ns", variant, by, total, sby, stotal)
		}
	}

	// perflab flame draws the same from the server, with the scenario's
	// work patterns found through the selector.
	folded := filepath.Join(t.TempDir(), "mutex.folded")
	_, errs, code = execute(t, "flame", "--from-pyroscope", url, "--query", sel+`,variant="sum256"}`, "--profile-type", "cpu", "--since", "10m", "-o", folded)
	if code != 0 {
		t.Fatalf("flame --from-pyroscope: exit %d\n%s", code, errs)
	}
	data, err := os.ReadFile(folded)
	if err != nil {
		t.Fatal(err)
	}
	if containing(sampledFunctions(storedProfile(t, st, run, "sum256", "cpu")), "sha256") && !strings.Contains(string(data), "sha256") {
		t.Errorf("folded stacks from Pyroscope lack sha256, which the stored CPU profile has:\n%.2000s", data)
	}

	// The run pushed by `perflab run --push` is there too, as "perflab".
	p, err := c.SelectMergeProfile(ctx, pyroscope.Query{ProfileType: "wall",
		Selector: fmt.Sprintf(`{service_name="perflab",run_id=%q}`, run.ID), Start: start, End: end})
	if err != nil || !hasFunction(p, "ciphercache") {
		t.Errorf("run --push: %v", err)
	}
}

func TestServerName(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"main.plain", "main.plain"},
		{"main.generic[go.shape.int]", "main.generic[...]"},
		{"x.(*offHeap[go.shape.struct { x.p x.P; x.cpu uint32 }]).add", "x.(*offHeap[...]).add"},
		{"x.f[go.shape.map[string]int,go.shape.int].g", "x.f[...].g"},
	} {
		if got := serverName(tt.in); got != tt.want {
			t.Errorf("serverName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
