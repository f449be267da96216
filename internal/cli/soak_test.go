package cli

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/internal/pyroscope"
	"github.com/perflab/perflab/internal/pyroscope/pyroscopetest"
	"github.com/perflab/perflab/internal/timingtest"
	"github.com/perflab/perflab/profiles"
)

func TestSoak(t *testing.T) {
	// Under -race a 500 ms slice's wall profile held half its two
	// workers' time (24.2 ms of 49.8), or covered 730–860 ms; on
	// aa69a34 too. Without it, 3 of 3 at a load of 11.
	timingtest.RequireNoRace(t, "a slice's wall profile held half its workers' time")
	f := &pyroscopetest.Ingest{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	out, errs, code := execute(t, "soak", "cipher-cache", "--variant", "mutex,sum256", "-p", "keys=128", "--threads", "2",
		"--duration", "2500ms", "--slice", "500ms", "--upload-rate", "1s", "--url", srv.URL, "--label", "ci-job=unit")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	t.Logf("stdout:\n%s\nstderr:\n%s", out, errs)
	for _, want := range []string{"soak cipher-cache: 2 cases round-robin", "variant=mutex/keys=128", "variant=sum256/keys=128", "sent "} {
		if !strings.Contains(errs, want) {
			t.Errorf("progress lacks %q:\n%s", want, errs)
		}
	}
	if !strings.Contains(out, "0 failed, 0 dropped") || !strings.Contains(out, `query: {service_name="perflab",run_id=`) {
		t.Errorf("summary:\n%s", out)
	}
	walls := map[string]int{}
	cpuVariants := map[string]bool{}
	for _, u := range f.All() {
		switch u.Kind {
		case "wall":
			for _, v := range []string{"mutex", "sum256"} {
				if strings.Contains(u.Name, "variant="+v+",") || strings.Contains(u.Name, "variant="+v+"}") {
					walls[v]++
				}
			}
			for _, want := range []string{"perflab{", "scenario=cipher-cache", "keys=128", "threads=2", "ci_job=unit", "run_id="} {
				if !strings.Contains(u.Name, want) {
					t.Errorf("wall profile name %q lacks %q", u.Name, want)
				}
			}
			// (The last slice is cut short by --duration.)
			if d := time.Duration(u.Profile.DurationNanos); d <= 0 || d > 700*time.Millisecond {
				t.Errorf("wall profile of a 500 ms slice covers %v", d)
			}
			var total int64
			for _, s := range u.Profile.Sample {
				total += s.Value[0]
			}
			// Two workers busy through the slice.
			if got, want := time.Duration(total), 2*time.Duration(u.Profile.DurationNanos); got < want*8/10 || got > want*105/100 {
				t.Errorf("wall profile total %v, want about %v (2 workers × the slice)", got, want)
			}
		case "samples":
			// pyroscope-go's CPU profile: TagWrapper labels per sample.
			for _, s := range u.Profile.Sample {
				if v := s.Label["variant"]; len(v) == 1 {
					cpuVariants[v[0]] = true
					if s.Label["scenario"][0] != "cipher-cache" || s.Label["threads"][0] != "2" || s.Label["keys"][0] != "128" {
						t.Errorf("CPU sample labels %v", s.Label)
					}
				}
			}
			if !strings.Contains(u.Name, "run_id=") || !strings.Contains(u.Name, "scenario=cipher-cache") {
				t.Errorf("pyroscope-go's profile name %q lacks the session labels", u.Name)
			}
		}
	}
	if walls["mutex"] < 2 || walls["sum256"] < 2 {
		t.Errorf("wall profiles per variant %v, want ≥ 2 each (5 slices round-robin)", walls)
	}
	if !cpuVariants["mutex"] || !cpuVariants["sum256"] {
		t.Errorf("CPU samples labelled with variants %v, want both", cpuVariants)
	}
}

func TestSoakErrors(t *testing.T) {
	t.Setenv(envPyroscopeURL, "")
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	for _, tt := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no scenario", []string{"soak"}, 2, "name one scenario"},
		{"unknown scenario", []string{"soak", "nope", "--url", downURL}, 2, "nope"},
		{"no url", []string{"soak", "cipher-cache"}, 2, "no Pyroscope server"},
		{"bad duration", []string{"soak", "cipher-cache", "--url", downURL, "--duration", "0s"}, 2, "--duration"},
		{"bad label", []string{"soak", "cipher-cache", "--url", downURL, "--label", "x"}, 2, `--label "x"`},
		{"clashing label", []string{"soak", "cipher-cache", "--url", downURL, "--label", "variant=x"}, 2, "perflab labels every profile with variant"},
		{"long label", []string{"soak", "cipher-cache", "--url", downURL, "--label", "note=" + strings.Repeat("n", 3000)}, 2, `label "note"`},
		{"server down", []string{"soak", "cipher-cache", "--variant", "sum256", "-p", "keys=128", "--threads", "1", "--url", downURL, "--duration", "300ms", "--slice", "300ms", "--upload-rate", "1s"}, 1, "no profile reached"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, errs, code := execute(t, tt.args...)
			if code != tt.code || !strings.Contains(errs, tt.msg) {
				t.Errorf("exit %d, want %d with %q:\n%s", code, tt.code, tt.msg, errs)
			}
		})
	}
}

// TestSoakInterrupted: Ctrl-C during a soak prints the summary and exits
// 130, saying whether anything reached the server; with the server down
// it exited 1 ("no profile reached"), as if the soak had failed.
func TestSoakInterrupted(t *testing.T) {
	up := httptest.NewServer(&pyroscopetest.Ingest{})
	defer up.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	for _, tt := range []struct {
		name, url, msg string
	}{
		{"server up", up.URL, "the profiles made so far are uploaded"},
		{"server down", down.URL, "interrupted before any profile reached the server"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// Cancelled once profiling started (its line is on stderr),
			// in the middle of the first slice.
			errb := &startedWriter{started: func() { time.AfterFunc(300*time.Millisecond, cancel) }}
			err := soakRun(ctx, &IO{Out: &out, Err: errb}, &SoakOptions{Scenario: "cipher-cache", Variants: []string{"sum256"},
				Params: []string{"keys=128"}, Threads: []int{1}, Duration: time.Minute, Slice: 30 * time.Second,
				UploadRate: time.Second, URL: tt.url, ServiceName: "perflab"})
			if code := exitCode(err); code != exitInterrupted || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("exit %d (%v), want %d with %q\nstderr:\n%s", code, err, exitInterrupted, tt.msg, errb.String())
			}
			if !strings.Contains(out.String(), "soak of cipher-cache") {
				t.Errorf("no summary after the interruption:\n%s", out.String())
			}
		})
	}
}

// startedWriter is a soak's stderr that calls started at the line saying
// profiling has started.
type startedWriter struct {
	bytes.Buffer
	started func()
}

func (w *startedWriter) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("(Ctrl-C stops)")) {
		w.started()
	}
	return w.Buffer.Write(p)
}

// TestIntegrationSoak soaks two cases of cipher-cache for 30 s into the real
// server and reads back, by each case's labels, pyroscope-go's CPU profiles
// and the wall-clock ones, whose total must be the case's two workers over
// the time it ran.
func TestIntegrationSoak(t *testing.T) {
	url := pyroscopeURL(t)
	service := fmt.Sprintf("perflab-soak-it-%d", time.Now().UnixNano())
	const period, slice, duration = 5 * time.Second, 2 * time.Second, 30 * time.Second
	start := time.Now()
	out, errs, code := execute(t, "soak", "cipher-cache", "--variant", "mutex,sum256", "-p", "keys=128", "--threads", "2",
		"--duration", duration.String(), "--slice", slice.String(), "--upload-rate", period.String(),
		"--url", url, "--service-name", service)
	end := time.Now()
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	t.Logf("%s", out)
	if !strings.Contains(out, " 0 failed, 0 dropped") {
		t.Errorf("summary:\n%s", out)
	}
	c, err := pyroscope.New(url, pyroscope.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sel := func(variant string) string {
		return fmt.Sprintf(`{service_name=%q,scenario="cipher-cache",variant=%q,keys="128",threads="2"}`, service, variant)
	}
	query := func(kind, variant string, from, to time.Time) (*profile.Profile, error) {
		var p *profile.Profile
		var err error
		for i := 0; i < 25; i++ { // the ingester may need a moment
			if p, err = c.SelectMergeProfile(ctx, pyroscope.Query{ProfileType: kind, Selector: sel(variant), Start: from, End: to}); err == nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		return p, err
	}
	total := func(p *profile.Profile) time.Duration {
		var n int64
		for _, s := range p.Sample {
			n += s.Value[0]
		}
		return time.Duration(n)
	}
	for _, variant := range []string{"mutex", "sum256"} {
		// The whole soak: each case ran about half of it, on two workers.
		wall, err := query("wall", variant, start.Add(-time.Minute), end.Add(time.Minute))
		if err != nil {
			t.Fatalf("%s: wall: %v", variant, err)
		}
		if got := total(wall); got < 2*duration/2*75/100 || got > 2*duration/2*105/100 {
			t.Errorf("%s: wall total %v over the soak, want about %v (2 workers × half of %v)", variant, got, duration, duration)
		}
		if variant == "mutex" {
			if by, _ := profiles.Breakdown(wall, 0, profiles.DefaultRules()); by[profiles.Lock] <= 0 {
				t.Errorf("mutex: no lock time in the wall profile read back: %v", by)
			}
		}
		// pyroscope-go's CPU profiles of the case over the whole soak.
		// (Each upload period used to be checked for both kinds: the
		// server stores a profile at its start, pyroscope-go's ticker
		// drifts, and under -race a slice's window starts late, so
		// periods without one were seen for both kinds in CI and make
		// test while the soak's totals were right.)
		if _, err := query("cpu", variant, start.Add(-time.Minute), end.Add(time.Minute)); err != nil {
			t.Errorf("%s: cpu: %v", variant, err)
		}
	}
}
