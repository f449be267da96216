package lab

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/runner"
	"github.com/perflab/perflab/internal/store"
	_ "github.com/perflab/perflab/scenarios/all"
)

func request(scenarios ...string) MeasureRequest {
	return MeasureRequest{Scenarios: scenarios, Count: 2, Time: 5 * time.Millisecond, Warmup: 0,
		Profile: []string{"none"}, ProfileTime: time.Second, Trace: runner.TraceSlices}
}

// TestPlanMeasureRefuses: what the user typed is checked before anything
// runs, and every refusal is a PlanError (exit 2) that says what to type.
func TestPlanMeasureRefuses(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(*MeasureRequest)
		want string
	}{
		{"unknown scenario", func(r *MeasureRequest) { r.Scenarios = []string{"cipher-cach"} }, "cipher-cache"},
		{"a variant for a scenario", func(r *MeasureRequest) { r.Scenarios = []string{"mutex"} }, "--variant mutex"},
		{"a parameter for a scenario", func(r *MeasureRequest) { r.Scenarios = []string{"keys=128"} }, "use -p keys=128"},
		{"named twice", func(r *MeasureRequest) { r.Scenarios = []string{"uuid-hash", "uuid-hash"} }, "named twice"},
		{"empty variant list", func(r *MeasureRequest) { r.VariantsSet = true }, "--variant is empty"},
		{"unknown variant of two", func(r *MeasureRequest) {
			r.Scenarios = []string{"uuid-hash", "cipher-cache"}
			r.Variants = []string{"mutx"}
		}, "did you mean mutex"},
		{"unknown parameter of two", func(r *MeasureRequest) {
			r.Scenarios = []string{"uuid-hash", "cipher-cache"}
			r.Params = []string{"kyes=1"}
		}, "did you mean keys"},
		{"threads twice", func(r *MeasureRequest) {
			r.Scenarios = []string{"cipher-cache"}
			r.Threads = []int{1}
			r.Params = []string{"threads=2"}
		}, "give them once"},
		{"none and wall", func(r *MeasureRequest) { r.Profile = []string{"none", "wall"} }, "none cannot be combined"},
		{"count", func(r *MeasureRequest) { r.Count = 0 }, "--count 0"},
		{"trace", func(r *MeasureRequest) { r.Trace = "both" }, `--trace "both"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := request("uuid-hash")
			tt.edit(&req)
			_, err := PlanMeasure(req)
			var pe *PlanError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want a PlanError saying %q", err, tt.want)
			}
		})
	}
}

// TestPlanMeasureOnce: the plan's cases are the runner's: the matrix is
// expanded once, and Start stores a run of exactly those cases.
func TestPlanMeasureOnce(t *testing.T) {
	req := request("cipher-cache")
	req.Variants = []string{"mutex", "sum256"}
	req.Params = []string{"keys=128"}
	req.Threads = []int{1}
	p, err := PlanMeasure(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Scenarios) != 1 {
		t.Fatalf("%d scenarios", len(p.Scenarios))
	}
	sp := p.Scenarios[0]
	m, err := p.Start(store.Open(t.TempDir()), 0, quiet{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(m.Runner.Opts.Cases); got != len(sp.Cases) || got == 0 {
		t.Fatalf("the runner has %d cases, the plan %d", got, len(sp.Cases))
	}
	// The runner measures the planned cases, not a matrix of its own: a
	// plan narrowed after the fact is what runs.
	m.Runner.Opts.Cases = sp.Cases[:1]
	if err := m.Runner.Execute(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(m.Run.Cases) != 1 {
		t.Errorf("measured %d cases, want the 1 planned", len(m.Run.Cases))
	}
	if _, err := m.Writer.Commit(); err != nil {
		t.Fatal(err)
	}
}

type quiet struct{}

func (quiet) Phase(string, int) {}
func (quiet) Step(string)       {}
func (quiet) Warn(string)       {}

// TestPlanEstimate: the plan's estimate is the runner's for the options
// the runner gets: --profile none estimates no profiling, --trace window
// a window in place of slices, and every case of the matrix counts.
func TestPlanEstimate(t *testing.T) {
	for _, tt := range []struct {
		name    string
		profile []string
		trace   string
		want    runner.Options
	}{
		{"none", []string{"none"}, runner.TraceSlices, runner.Options{Profile: []string{}, Trace: runner.TraceSlices}},
		{"wall in slices", []string{"wall"}, runner.TraceSlices, runner.Options{Profile: []string{"wall"}, Trace: runner.TraceSlices}},
		{"wall in a window", []string{"wall"}, runner.TraceWindow, runner.Options{Profile: []string{"wall"}, Trace: runner.TraceWindow}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := request("cipher-cache")
			req.Profile, req.Trace = tt.profile, tt.trace
			p, err := PlanMeasure(req)
			if err != nil {
				t.Fatal(err)
			}
			o := tt.want
			o.Count, o.Time, o.ProfileTime = req.Count, req.Time, req.ProfileTime
			cases := len(p.Scenarios[0].Cases)
			if got, want := p.Estimate(0), o.Estimate(cases); got != want || cases < 2 {
				t.Errorf("estimate %v for %d cases, want %v", got, cases, want)
			}
		})
	}
}
