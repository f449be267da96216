package lab

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/pyroscope/pyroscopetest"
)

func init() {
	spin := func(perflab.Params) (perflab.Case, error) {
		return perflab.CaseFunc(func(int) perflab.Worker {
			sum := new([8]uint64) // a cache line of its own
			return perflab.WorkerFunc(func(n int) {
				for i := 0; i < n; i++ {
					sum[0] += uint64(i)
				}
			})
		}), nil
	}
	perflab.Register(&perflab.Scenario{Name: "test-lab-soak", Doc: "a spinning, a panicking and an n/a variant",
		Variants: []perflab.Variant{
			{Name: "spin", New: spin},
			{Name: "na", New: func(perflab.Params) (perflab.Case, error) {
				return nil, perflab.ErrNotApplicable
			}},
			{Name: "boom", New: func(perflab.Params) (perflab.Case, error) { panic("no config") }},
			{Name: "closer", New: func(p perflab.Params) (perflab.Case, error) {
				c, err := spin(p)
				return &closingCase{Case: c}, err
			}},
		}})
}

// soakClosed counts the Close calls of the closer variant's cases.
var soakClosed atomic.Int32

// closingCase is a case that counts its Close calls in soakClosed.
type closingCase struct{ perflab.Case }

func (*closingCase) Close() error { soakClosed.Add(1); return nil }

func soakRequest(url string, variants ...string) SoakRequest {
	return SoakRequest{Scenario: "test-lab-soak", Variants: variants, Threads: []int{2},
		Duration: 1500 * time.Millisecond, Slice: 200 * time.Millisecond, UploadRate: time.Second,
		URL: url, ServiceName: "perflab-lab-test", Labels: []string{"ci-job=lab"}}
}

// TestSoak: the cases run their turns under the continuous package's
// session, which uploads a wall-clock profile per slice labelled with the
// case; a variant that does not apply is skipped, with an event.
func TestSoak(t *testing.T) {
	f := &pyroscopetest.Ingest{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	var events []SoakEvent
	res, err := Soak(context.Background(), soakRequest(srv.URL, "spin", "na"), func(e SoakEvent) { events = append(events, e) })
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[SoakEventKind]int{}
	for _, e := range events {
		kinds[e.Kind]++
		if e.Kind == SoakSlice && e.Err != nil {
			t.Errorf("slice of %s: wall-clock profile: %v", e.Case, e.Err)
		}
	}
	if kinds[SoakSkipped] != 1 || kinds[SoakStarted] != 1 || kinds[SoakSlice] != res.Slices || res.Slices < 1 {
		t.Errorf("events %v for %d slices: want one skipped (na), one started, one per slice, ≥ 1 slice", kinds, res.Slices)
	}
	if res.UploadErr != nil || res.Stats.Sent["wall"] != int64(res.Slices) {
		t.Errorf("uploads %s (%v): want a wall-clock profile per slice", res.Stats, res.UploadErr)
	}
	if !strings.Contains(res.Selector, `service_name="perflab-lab-test",run_id=`) {
		t.Errorf("selector %s", res.Selector)
	}
	walls := 0
	for _, u := range f.All() {
		if u.Kind != "wall" {
			continue
		}
		walls++
		for _, want := range []string{"perflab-lab-test{", "scenario=test-lab-soak", "variant=spin", "threads=2", "ci_job=lab", "run_id="} {
			if !strings.Contains(u.Name, want) {
				t.Errorf("wall profile %q lacks %q", u.Name, want)
			}
		}
	}
	if walls != res.Slices {
		t.Errorf("%d wall profiles received for %d slices", walls, res.Slices)
	}
}

// TestSoakRefusesAndFails: what the user got wrong is a PlanError found
// before any case runs; a panic in a variant's New is the soak's error,
// not a crash (it was, under soak, before internal/live).
func TestSoakRefusesAndFails(t *testing.T) {
	f := &pyroscopetest.Ingest{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	for _, tt := range []struct {
		name string
		edit func(*SoakRequest)
		plan bool
		want string
	}{
		{"no server", func(r *SoakRequest) { r.URL = "" }, true, "no Pyroscope server"},
		{"unknown variant", func(r *SoakRequest) { r.Variants = []string{"spn"} }, true, "spn"},
		{"bad slice", func(r *SoakRequest) { r.Slice = 0 }, true, "--slice 0s"},
		{"clashing label", func(r *SoakRequest) { r.Labels = []string{"variant=x"} }, true, "variant"},
		{"panicking New", func(r *SoakRequest) { r.Variants = []string{"spin", "boom"} }, false, "case variant=boom/threads=2: setup panicked: no config"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := soakRequest(srv.URL, "spin")
			tt.edit(&req)
			res, err := Soak(context.Background(), req, nil)
			var pe *PlanError
			if err == nil || !strings.Contains(err.Error(), tt.want) || errors.As(err, &pe) != tt.plan {
				t.Errorf("err %v (plan error: %v), want %q (plan error: %v)", err, errors.As(err, &pe), tt.want, tt.plan)
			}
			if res != nil {
				t.Errorf("result %+v for a soak that never started", res)
			}
		})
	}
	if n := len(f.All()); n != 0 {
		t.Errorf("%d uploads from soaks that never started", n)
	}
}

// TestSoakInterrupted: a soak whose ctx ends in the middle of a slice
// returns its result and no error of its own, even when no profile reached
// the server (it said "no profile reached" though its doc said no error);
// the slice cut short still uploads its wall-clock profile, and the case is
// closed (the interrupted RunUntil abandoned it, so it never was).
func TestSoakInterrupted(t *testing.T) {
	up := httptest.NewServer(&pyroscopetest.Ingest{})
	defer up.Close()
	down := httptest.NewServer(nil)
	down.Close()
	for _, tt := range []struct {
		name  string
		url   string
		walls int64
	}{
		{"server up", up.URL, 1},
		{"server down", down.URL, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			soakClosed.Store(0)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req := soakRequest(tt.url, "closer")
			req.Duration, req.Slice = time.Minute, 30*time.Second
			progress := func(e SoakEvent) {
				if e.Kind == SoakStarted {
					time.AfterFunc(300*time.Millisecond, cancel)
				}
			}
			start := time.Now()
			res, err := Soak(ctx, req, progress)
			if err != nil {
				t.Fatalf("interrupted soak: %v, want no error of its own", err)
			}
			if took := time.Since(start); took > 20*time.Second {
				t.Errorf("interrupted soak took %v", took)
			}
			if res == nil {
				t.Fatal("no result from a soak that started")
			}
			if got := res.Stats.Sent["wall"]; got != tt.walls {
				t.Errorf("%d wall profiles sent, want %d (the slice cut short): %s", got, tt.walls, res.Stats)
			}
			if got := soakClosed.Load(); got != 1 {
				t.Errorf("the case was closed %d times, want 1", got)
			}
		})
	}
}
