package continuous_test

import (
	"crypto/sha256"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/continuous"
	"github.com/perflab/perflab/internal/pyroscope/pyroscopetest"
	"github.com/perflab/perflab/internal/timingtest"
	"github.com/perflab/perflab/profiles"
)

// workload runs goroutines that hash, take a shared lock and sleep until
// stop is closed: a small service. It returns when they have all started.
func workload(stop chan struct{}, wg *sync.WaitGroup) {
	var mu sync.Mutex
	buf := make([]byte, 16<<10)
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go serviceWorker(stop, wg, &mu, buf)
	}
}

//go:noinline
func serviceWorker(stop chan struct{}, wg *sync.WaitGroup, mu *sync.Mutex, buf []byte) {
	defer wg.Done()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		mu.Lock()
		sha256.Sum256(buf)
		mu.Unlock()
		sha256.Sum256(buf)
		if i%20 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
}

// rootsOf returns each sample's root function (below runtime.goexit) with
// its total value.
func rootsOf(p *profile.Profile) map[string]int64 {
	out := map[string]int64{}
	for _, s := range p.Sample {
		root := ""
		for _, l := range s.Location {
			if n := l.Line[0].Function.Name; n != "runtime.goexit" {
				root = n
			}
		}
		out[root] += s.Value[0]
	}
	return out
}

// rootless is the time at CPU samples with no function of their
// goroutine's own at the root: stacks the runtime could not walk to the
// goroutine's (runtime._System, runtime._ExternalCode, and under -race
// racecall and time.now), or taken on g0 as it parked (runtime.mcall).
// Whose running time it is the profile does not say, which is a limit of
// it: in a run beside a Pyroscope server, 53 ms of a 410 ms window's two
// workers' 820 ms was at runtime._System. The tests allow a fifth.
//
// Time at a state frame with no stack (a goroutine first seen runnable,
// or blocked since before the window and woken in it) is under its
// goroutine's root once another stack of it says the root; what is left
// at no root is goroutines the trace never gave a stack, short-lived ones
// here (an HTTP connection's), not the workers, which block with a stack
// every 20 hashes. It used to be counted here, and the httptest server's
// accept loop, woken by an upload, alone put up to a window there.
func rootless(roots map[string]int64) time.Duration {
	var d int64
	for root, v := range roots {
		if unwound(root) {
			d += v
		}
	}
	return time.Duration(d)
}

// unwound reports whether root is where a CPU sample's unwinding stopped
// short of its goroutine's root function (wallclock's tests know the same
// list as truncatedRoot).
func unwound(root string) bool {
	switch root {
	case "runtime.mcall", "racecall", "time.now", "runtime.nanotime", "runtime.nanotime1":
		return true
	}
	return strings.HasPrefix(root, "runtime._")
}

func TestHandler(t *testing.T) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	workload(stop, &wg)
	defer func() { close(stop); wg.Wait() }()
	srv := httptest.NewServer(continuous.Handler())
	defer srv.Close()

	t0 := time.Now()
	resp, err := http.Get(srv.URL + "?seconds=1")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(t0)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %s", resp.Status, data)
	}
	p, err := profile.ParseData(data)
	if err != nil {
		t.Fatal(err)
	}
	if st := p.SampleType[0]; st.Type != "wall" || st.Unit != "nanoseconds" {
		t.Errorf("sample type %s/%s", st.Type, st.Unit)
	}
	roots := rootsOf(p)
	if timingtest.Race {
		// Under -race, beside other load, 2 runs in 20 failed these:
		// the trace covered 830 ms (trace.Start and Stop took 170 ms),
		// and the workers read 1.023× the window (every goroutine's
		// running time is spread over all CPU samples: the HTTP
		// request's goroutines', instrumented, landed on the workers').
		// make test checks them in its line without -race.
		t.Log("window figures not checked under -race")
	} else {
		// It covers the trace, less than the second by trace.Start's
		// and Stop's latency.
		if d := time.Duration(p.DurationNanos); d < 850*time.Millisecond || d > took {
			t.Errorf("profile covers %v of a 1 s request that took %v", d, took)
		}
		const worker = "github.com/perflab/perflab/continuous_test.serviceWorker"
		// Each of the two workers is in the profile for the whole
		// window: at their own root, or at none (rootless), which is
		// at most a fifth.
		if w, d, r := time.Duration(roots[worker]), time.Duration(p.DurationNanos), rootless(roots); w+r < 2*d*95/100 || w > 2*d*101/100 || r > 2*d/5 {
			t.Errorf("workers: %v in a %v window, and %v at no root: want about 2 × the window, at most a fifth of it at no root", w, time.Duration(p.DurationNanos), r)
		}
	}
	for root, v := range roots {
		if strings.HasPrefix(root, "runtime.") && !unwound(root) || strings.HasPrefix(root, "github.com/perflab/perflab/continuous.") {
			t.Errorf("%v at %s: the runtime's or the profiler's own", time.Duration(v), root)
		}
	}
	// The split a lab run has: the workers lock and hash (the request's own
	// goroutine, waiting for the window, is not there).
	by, _ := profiles.Breakdown(p, 0, profiles.DefaultRules())
	if by[profiles.Lock] <= 0 {
		t.Errorf("no lock time in %v", by)
	}
	for _, s := range p.Sample {
		for _, l := range s.Location {
			if n := l.Line[0].Function.Name; strings.Contains(n, "continuous.serveWall") {
				t.Fatalf("the handler's own wait is in the profile: %s", n)
			}
		}
	}

	for _, bad := range []string{"0", "x", "1000"} {
		resp, err := http.Get(srv.URL + "?seconds=" + bad)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("seconds=%s: %s, want 400", bad, resp.Status)
		}
	}
}

func TestStart(t *testing.T) {
	// Under -race the windows counted the two workers 1.5–1.75× the
	// window, not 2× (9 of 12 runs). Two causes were the product's: the
	// upload gave each profile the window's wall time, trace.Start's
	// and Stop's latency (20-60 ms under -race) included, not its
	// trace's span; and a worker first seen runnable, or the test
	// server's accept loop woken by an upload, had its time at no root.
	// With both fixed, -race still fails 1-3 runs in 20 beside other
	// load: every goroutine's running time is spread over all CPU
	// samples, and the fake ingest server parsing uploads in this
	// process under -race put the workers at 1.16× the window.
	timingtest.RequireNoRace(t, "the in-process ingest server's running time, spread over the workers' CPU samples, counts them up to 1.16× the window")
	f := &pyroscopetest.Ingest{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	stopWork := make(chan struct{})
	var wg sync.WaitGroup
	workload(stopWork, &wg)
	defer func() { close(stopWork); wg.Wait() }()

	stop, err := continuous.Start(continuous.Config{
		ApplicationName: "svc", ServerAddress: srv.URL, Tags: map[string]string{"env": "test"},
		UploadRate: time.Second, WallWindow: 400 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Errorf("second stop: %v", err)
	}
	var walls []pyroscopetest.Upload
	kinds := map[string]int{}
	for _, p := range f.All() {
		kinds[p.Kind]++
		if p.Kind == "wall" {
			walls = append(walls, p)
		}
	}
	// Windows at 0, 1 and 2 s, and the one stop cut short.
	if len(walls) < 3 {
		t.Fatalf("%d wall profiles in 2.5 s at one a second (kinds %v)", len(walls), kinds)
	}
	if kinds["samples"] == 0 {
		t.Errorf("no CPU profile from pyroscope-go (kinds %v)", kinds)
	}
	for _, w := range walls {
		if w.Name != "svc{env=test}" {
			t.Errorf("wall profile name %q", w.Name)
		}
		d := time.Duration(w.Profile.DurationNanos)
		if d > 450*time.Millisecond {
			t.Errorf("wall window of %v, want at most 400 ms", d)
		}
		if w.Profile.PeriodType.Type != "wall" {
			t.Errorf("period type %s", w.Profile.PeriodType.Type)
		}
		roots := rootsOf(w.Profile)
		worker, r := time.Duration(roots["github.com/perflab/perflab/continuous_test.serviceWorker"]), rootless(roots)
		if d > 100*time.Millisecond && (worker+r < 2*d*9/10 || worker > 2*d*11/10 || r > 2*d/5) {
			t.Errorf("workers: %v in a %v window, and %v at no root: want about twice the window, at most a fifth of it at no root", worker, d, r)
		}
	}
}

func TestStartErrors(t *testing.T) {
	many := map[string]string{}
	for i := 0; i < 25; i++ {
		many[string(rune('a'+i))+"_tag"] = "v"
	}
	for _, tt := range []struct {
		name string
		cfg  continuous.Config
		want string
	}{
		{"no name", continuous.Config{ServerAddress: "http://x"}, "ApplicationName is required"},
		{"no address", continuous.Config{ApplicationName: "a"}, "ServerAddress is required"},
		{"bad tag", continuous.Config{ApplicationName: "a", ServerAddress: "http://x", Tags: map[string]string{"my-tag": "v"}}, `tag "my-tag"`},
		{"too many tags", continuous.Config{ApplicationName: "a", ServerAddress: "http://x", Tags: many}, "labels per series"},
		{"long tag value", continuous.Config{ApplicationName: "a", ServerAddress: "http://x", Tags: map[string]string{"commit": strings.Repeat("c", 3000)}}, `label "commit"`},
		{"bad address", continuous.Config{ApplicationName: "a", ServerAddress: "ftp://x"}, "want http"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stop, err := continuous.Start(tt.cfg)
			if err == nil {
				stop()
				t.Fatalf("no error, want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestStopReportsFailures: uploads to a server that refuses them are
// counted and returned by stop, not fatal before.
func TestStopReportsFailures(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nope", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	stop, err := continuous.Start(continuous.Config{ApplicationName: "svc", ServerAddress: srv.URL,
		UploadRate: 500 * time.Millisecond, WallWindow: 100 * time.Millisecond, Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1200 * time.Millisecond)
	err = stop()
	if err == nil || !strings.Contains(err.Error(), "failed") || !strings.Contains(err.Error(), "503") {
		t.Errorf("stop: %v, want the failures counted with the server's answer", err)
	}
}

type quiet struct{}

func (quiet) Infof(string, ...any)  {}
func (quiet) Debugf(string, ...any) {}
func (quiet) Errorf(string, ...any) {}

// semWaiter blocks on a channel used as a semaphore: a wait to the
// built-in rules, a lock to a service that says so.
//
//go:noinline
func semWaiter(sem chan struct{}) { sem <- struct{}{} }

// TestHandlerWithRules: the service's rules decide off-CPU categories when
// the profile is recorded, so "this channel is my lock" holds.
func TestHandlerWithRules(t *testing.T) {
	rules, err := profiles.ParseRules(strings.NewReader(`lock ^github\.com/perflab/perflab/continuous_test\.semWaiter$`), "service.rules")
	if err != nil {
		t.Fatal(err)
	}
	sem := make(chan struct{}) // nobody receives: blocked for the window
	go semWaiter(sem)
	defer func() { <-sem }()
	srv := httptest.NewServer(continuous.HandlerWithRules(rules))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "?seconds=1")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	p, err := profile.ParseData(data)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range p.Sample {
		var names []string
		for _, l := range s.Location {
			names = append(names, l.Line[0].Function.Name)
		}
		if slices.Contains(names, "github.com/perflab/perflab/continuous_test.semWaiter") {
			if strings.HasPrefix(names[0], "[lock] ") {
				found = true
			} else {
				t.Errorf("semaphore wait classified %q", names[0])
			}
		}
	}
	if !found {
		t.Error("no sample of the goroutine blocked on the semaphore")
	}
}
