package lab

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/pyroscope"
	"github.com/perflab/perflab/internal/pyroscope/pyroscopetest"
	"github.com/perflab/perflab/internal/runner"
	"github.com/perflab/perflab/internal/store"
)

// events records what Measure tells its caller, and can end the context
// at a phase or a step, as a signal would.
type events struct {
	got    []string
	cancel func(error) // called with "by SIGTERM" at stopAt
	stopAt string      // "phase NAME", or "step NAME": the first step of phase NAME
	phase  string
}

func (e *events) Phase(name string, total int) {
	e.got = append(e.got, "phase "+name)
	e.phase = name
	if e.stopAt == "phase "+name {
		e.cancel(errors.New("by SIGTERM"))
	}
}

func (e *events) Step(string) {
	if e.stopAt == "step "+e.phase {
		e.cancel(errors.New("by SIGTERM"))
		e.stopAt = ""
	}
}
func (e *events) Warn(string)                           {}
func (e *events) Started(*model.Run)                    { e.got = append(e.got, "started") }
func (e *events) Finished()                             { e.got = append(e.got, "finished") }
func (e *events) Stored(_ *model.Run, dir string) error { e.got = append(e.got, "stored"); return nil }
func (e *events) Pushing(_ *model.Run, url string)      { e.got = append(e.got, "pushing") }
func (e *events) Pushed(s pyroscope.Summary)            { e.got = append(e.got, "pushed") }

// TestMeasure: Measure stores the run whatever happens, pushes it unless
// it was interrupted, and says which cases failed; an interrupted run
// (issue 14: "loses nothing measured") is stored with a note that says
// by what and where.
func TestMeasure(t *testing.T) {
	ingest := &pyroscopetest.Ingest{}
	srv := httptest.NewServer(ingest)
	defer srv.Close()
	for _, tt := range []struct {
		name     string
		variants []string
		profile  []string
		stopAt   string
		wantErr  string // "" for none
		wantNote string
		want     []string // the events other than the runner's phases
	}{
		{"a failed case, pushed", []string{"spin", "boom"}, []string{"wall"}, "", "1 of 2 cases failed (the others are measured and saved): variant=boom", "",
			[]string{"started", "finished", "stored", "pushing", "pushed"}},
		{"every case failed", []string{"boom"}, []string{"none"}, "", "its one case failed: variant=boom", "",
			[]string{"started", "finished", "stored"}},
		{"interrupted in a round", []string{"spin"}, []string{"wall"}, "step round 1/3", runner.ErrInterrupted.Error(), "interrupted by SIGTERM in round 1/3",
			[]string{"started", "finished", "stored"}},
		{"interrupted in setup", []string{"spin"}, []string{"wall"}, "phase setup and warmup", "interrupted by SIGTERM before any case was measured: the run is saved, empty", "interrupted by SIGTERM before any case was measured",
			[]string{"started", "finished", "stored"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := request("test-lab-soak")
			req.Variants, req.Profile, req.Count = tt.variants, tt.profile, 3
			req.ProfileTime = 200 * time.Millisecond
			plan, err := PlanMeasure(req)
			if err != nil {
				t.Fatal(err)
			}
			var push *Pusher
			if len(plan.Profile) > 0 { // as perflab run --push refuses --profile none
				if push, err = PlanPush(PushRequest{URL: srv.URL}); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithCancelCause(t.Context())
			defer cancel(nil)
			ev := &events{cancel: cancel, stopAt: tt.stopAt}
			st := store.Open(t.TempDir())
			before := ingest.Count("wall")
			res, err := plan.Measure(ctx, st, 0, ev, MeasureOptions{Push: push})
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
			if res == nil || res.Dir == "" {
				t.Fatalf("not stored: %+v", res)
			}
			if interrupted := tt.stopAt != ""; res.Interrupted != interrupted || errors.Is(err, runner.ErrInterrupted) != interrupted {
				t.Errorf("Interrupted = %v, err %v; want interrupted %v", res.Interrupted, err, interrupted)
			}
			var got []string
			for _, e := range ev.got {
				if !strings.HasPrefix(e, "phase ") {
					got = append(got, e)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("events %v, want %v", got, tt.want)
			}
			if sent := ingest.Count("wall") - before; slices.Contains(tt.want, "pushed") != (sent > 0) {
				t.Errorf("%d wall profiles pushed, events %v", sent, got)
			}
			stored, err := st.Load(res.Run.ID)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantNote != "" && stored.Note != tt.wantNote {
				t.Errorf("stored note %q, want %q", stored.Note, tt.wantNote)
			}
			if stored.Complete == (tt.stopAt != "") {
				t.Errorf("stored complete = %v", stored.Complete)
			}
		})
	}
}

// TestPhasesWhere: the stored note of an interrupted run says the phase
// it was in.
func TestPhasesWhere(t *testing.T) {
	for _, tt := range []struct {
		phase       string
		done, total int
		want        string
	}{
		{"setup and warmup", 1, 4, "during setup"},
		{"round 3/10", 2, 4, "in round 3/10"},
		{"round 12 (until ±3%)", 0, 4, "in round 12 (until ±3%)"},
		{"profiling", 1, 4, "while profiling case 2/4"},
		{"", 0, 0, ""},
	} {
		t.Run(fmt.Sprint(tt.phase), func(t *testing.T) {
			p := &phases{Progress: quiet{}}
			if tt.phase != "" {
				p.Phase(tt.phase, tt.total)
			}
			for range tt.done {
				p.Step("case")
			}
			if got := p.where(); got != tt.want {
				t.Errorf("where() = %q, want %q", got, tt.want)
			}
		})
	}
}
