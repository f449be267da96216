package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/model"
)

func TestResolve(t *testing.T) {
	root := filepath.Join(t.TempDir(), "runs")
	s := Open(root)
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	// An older run that measured something, then a newer one interrupted
	// before its first repetition.
	w := newRun(t, s, t0, "cipher-cache")
	w.run.Cases = []model.Case{{Name: "variant=a/threads=1", Status: model.StatusOK, Reps: []model.Rep{{Ops: 1}}}}
	if err := w.WriteFile("cases/variant=a,threads=1/wall.pb.gz", []byte("x")); err != nil {
		t.Fatal(err)
	}
	measured, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	w2 := newRun(t, s, t0.Add(time.Hour), "cipher-cache")
	w2.run.Cases = []model.Case{{Name: "variant=a/threads=1", Status: model.StatusSkipped}}
	if _, err := w2.Commit(); err != nil {
		t.Fatal(err)
	}
	id := filepath.Base(measured)
	caseDir := filepath.Join(measured, "cases", "variant=a,threads=1")
	for _, tt := range []struct {
		name, ref, run, cas string
		store               string
	}{
		{"id", id, id, "", root},
		{"latest skips an empty run", "latest", id, "", root},
		{"empty ref is latest", "", id, "", root},
		{"id and case name", id + "/variant=a/threads=1", id, "variant=a/threads=1", root},
		{"id and slug", id + "/variant=a,threads=1", id, "variant=a/threads=1", root},
		{"run directory", measured, id, "", root},
		{"run directory, trailing slash", measured + "/", id, "", root},
		{"case directory", caseDir, id, "variant=a/threads=1", root},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := s.Resolve(tt.ref)
			if err != nil {
				t.Fatal(err)
			}
			if r.Run.ID != tt.run {
				t.Errorf("run %s, want %s", r.Run.ID, tt.run)
			}
			if (r.Case == nil) != (tt.cas == "") || (r.Case != nil && r.Case.Name != tt.cas) {
				t.Errorf("case %v, want %q", r.Case, tt.cas)
			}
			if abs, _ := filepath.Abs(r.Store.Root); abs != mustAbs(t, tt.store) {
				t.Errorf("store %s, want %s", r.Store.Root, tt.store)
			}
		})
	}
	// A run directory given by path works from any store.
	if r, err := Open(t.TempDir()).Resolve(measured); err != nil || r.Run.ID != id {
		t.Errorf("run directory from another store: %v, %v", r, err)
	}
	for _, tt := range []struct {
		name, ref string
		is        error
	}{
		{"unknown id", "20991231-000000-x", ErrNoRun},
		{"unknown case", id + "/variant=zzz", nil},
		{"case directory of no case", filepath.Join(measured, "cases", "nope"), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "case directory of no case" {
				if err := os.MkdirAll(tt.ref, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			_, err := s.Resolve(tt.ref)
			if err == nil {
				t.Fatal("resolved")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
		})
	}
	// An empty store and one whose directory is not there: the second
	// says so, since a typo in its name is likelier than a store that
	// was never used.
	for _, tt := range []struct {
		name    string
		dir     string
		noStore bool
	}{
		{"empty", t.TempDir(), false},
		{"no such directory", filepath.Join(t.TempDir(), "perflab-rnus"), true},
	} {
		_, err := Open(tt.dir).Load(Latest)
		if !errors.Is(err, ErrNoRuns) || errors.Is(err, ErrNoStore) != tt.noStore {
			t.Errorf("%s: %v, want ErrNoRuns, and ErrNoStore: %v", tt.name, err, tt.noStore)
		}
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
