package lab

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/store"
)

const realCPU = "../../profiles/testdata/real/cpu.pb.gz"

// flameStore stores a run of scenario with one case whose wall profile
// is realCPU, classified as c records, and returns the store and run.
func flameStore(t *testing.T, scenario string, c *model.Classification) (*store.Store, *model.Run) {
	t.Helper()
	data, err := os.ReadFile(realCPU)
	if err != nil {
		t.Fatal(err)
	}
	st := store.Open(filepath.Join(t.TempDir(), "runs"))
	started := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	name := "variant=a/threads=1"
	run := &model.Run{ID: store.NewID(started, scenario), Scenario: scenario, Started: started, Complete: true,
		Config: model.Config{Classification: c},
		Cases: []model.Case{{Name: name, Variant: "a", Threads: 1, Status: model.StatusOK,
			Profiles: map[string]string{"wall": "cases/" + model.Slug(name) + "/wall.pb.gz"}}}}
	w, err := st.Create(run)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile(run.Cases[0].Profiles["wall"], data); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return st, run
}

// bareStore stores a run of one measured case with no profiles, made
// with --profile kinds and complete or interrupted.
func bareStore(t *testing.T, kinds []string, complete bool) (*store.Store, string) {
	t.Helper()
	st := store.Open(filepath.Join(t.TempDir(), "runs"))
	started := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	run := &model.Run{ID: store.NewID(started, "my-own"), Scenario: "my-own", Started: started, Complete: complete,
		Config: model.Config{Profile: kinds},
		Cases:  []model.Case{{Name: "variant=a/threads=1", Variant: "a", Threads: 1, Status: model.StatusOK}}}
	if !complete {
		run.Note = "interrupted by SIGTERM in round 128"
	}
	w, err := st.Create(run)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return st, run.ID + "/variant=a/threads=1"
}

// TestPlanFlame: a flame request's inputs are read and classified as
// perflab flame draws them, and what the user got wrong is a PlanError
// (exit 2) saying what to type.
func TestPlanFlame(t *testing.T) {
	st, run := flameStore(t, "my-own", &model.Classification{Work: []string{`^crypto/`}})
	oldSt, oldRun := flameStore(t, "my-own", nil)
	ref := run.ID + "/" + run.Cases[0].Name
	noneSt, noneRef := bareStore(t, []string{}, true)
	cutSt, cutRef := bareStore(t, []string{"wall", "cpu"}, false)
	for _, tt := range []struct {
		name      string
		req       FlameRequest
		st        *store.Store
		wantErr   string // "" for none
		planError bool
		title     string
		work      []string // the input's work patterns
		warning   string
	}{
		{name: "a profile file", req: FlameRequest{Inputs: []string{realCPU}}, title: "cpu.pb.gz"},
		{name: "a diff", req: FlameRequest{Inputs: []string{realCPU, realCPU}, Diff: true}, title: "cpu.pb.gz → cpu.pb.gz"},
		{name: "a stored case, its recorded work", req: FlameRequest{Inputs: []string{ref}, Kind: "wall"}, st: st,
			title: "my-own variant=a/threads=1 (wall)", work: []string{`^crypto/`}},
		{name: "an old stored case of a scenario not here", req: FlameRequest{Inputs: []string{oldRun.ID + "/" + oldRun.Cases[0].Name}, Kind: "wall"}, st: oldSt,
			title: "my-own variant=a/threads=1 (wall)", warning: "stored without its classification rules"},
		{name: "a kind the case lacks", req: FlameRequest{Inputs: []string{ref}, Kind: "wal"}, st: st, wantErr: "has no wal profile: did you mean wall"},
		// A case with no profiles says why, from the run: the guess at
		// --profile none was wrong for a run interrupted in its rounds.
		{name: "no profiles: --profile none", req: FlameRequest{Inputs: []string{noneRef}, Kind: "wall"}, st: noneSt, wantErr: "has no profiles: the run was made with --profile none"},
		{name: "no profiles: interrupted", req: FlameRequest{Inputs: []string{cutRef}, Kind: "wall"}, st: cutSt,
			wantErr: "has no profiles: the run stopped before its profiles were taken (interrupted by SIGTERM in round 128)"},
		{name: "a whole run", req: FlameRequest{Inputs: []string{run.ID}, Kind: "wall"}, st: st, wantErr: "is a whole run", planError: true},
		{name: "no such case", req: FlameRequest{Inputs: []string{run.ID + "/nope"}, Kind: "wall"}, st: st, wantErr: "see `perflab show`", planError: true},
		// Named from --store, the store is in the hint's command.
		{name: "no such case in another store", req: FlameRequest{Inputs: []string{run.ID + "/nope"}, Kind: "wall", StoreDir: "elsewhere"}, st: st,
			wantErr: "see `perflab show -o elsewhere`", planError: true},
		{name: "a whole run in another store", req: FlameRequest{Inputs: []string{run.ID}, Kind: "wall", StoreDir: "elsewhere"}, st: st,
			wantErr: "(see `perflab show " + run.ID + " -o elsewhere`)", planError: true},
		{name: "no such file", req: FlameRequest{Inputs: []string{"nope.pb.gz"}}, st: st, wantErr: "no such profile file", planError: true},
		{name: "bad layout", req: FlameRequest{Inputs: []string{realCPU}, Layout: "old"}, wantErr: `--layout: unknown layout "old"`, planError: true},
		{name: "stdin twice", req: FlameRequest{Inputs: []string{"-", "-"}, Diff: true}, wantErr: "only one of the profiles", planError: true},
		{name: "--goroutine on a profile", req: FlameRequest{Inputs: []string{realCPU}, Goroutine: "x"}, wantErr: "is not one", planError: true},
		{name: "bad --work", req: FlameRequest{Inputs: []string{realCPU}, Work: []string{"("}}, wantErr: "work pattern", planError: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := tt.req
			if tt.st != nil {
				req.Resolve = tt.st.Resolve
			}
			f, err := PlanFlame(t.Context(), req)
			var pe *PlanError
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || errors.As(err, &pe) != tt.planError {
					t.Errorf("err = %v, want %q (a PlanError: %v)", err, tt.wantErr, tt.planError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			in := f.Inputs[len(f.Inputs)-1]
			if f.Options.Title != tt.title || !slices.Equal(in.Work, tt.work) || !strings.Contains(in.Warning, tt.warning) || tt.warning == "" && in.Warning != "" {
				t.Errorf("title %q, work %q, warning %q; want %q, %q, %q", f.Options.Title, in.Work, in.Warning, tt.title, tt.work, tt.warning)
			}
			if _, err := f.Tree(); err != nil {
				t.Errorf("Tree: %v", err)
			}
			var b strings.Builder
			if err := f.WriteFolded(&b); err != nil || b.Len() == 0 {
				t.Errorf("WriteFolded: %d bytes, %v", b.Len(), err)
			}
		})
	}
}
