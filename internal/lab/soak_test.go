package lab

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
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
		}})
}

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
