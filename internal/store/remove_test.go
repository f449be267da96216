package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/model"
)

// TestRemove: a run goes whole; a link, a directory without run.json,
// an invalid id and a missing run are refused, and nothing outside the
// run is touched (a link inside it is removed, not followed).
func TestRemove(t *testing.T) {
	root := t.TempDir()
	st := Open(root)
	w, err := st.Create(&model.Run{ID: NewID(time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC), "x"), Scenario: "x"})
	if err != nil {
		t.Fatal(err)
	}
	dir, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	id := filepath.Base(dir)
	outside := filepath.Join(t.TempDir(), "precious")
	os.WriteFile(outside, []byte("keep"), 0o644)
	os.Symlink(filepath.Dir(outside), filepath.Join(dir, "link"))
	os.Symlink(dir, filepath.Join(root, "alias"))
	os.MkdirAll(filepath.Join(root, "not-a-run"), 0o755)

	for _, tt := range []struct {
		id   string
		want error
	}{
		{"alias", ErrRefused}, {"not-a-run", ErrRefused}, {"../x", ErrRefused}, {"nope", ErrNoRun},
	} {
		if err := st.Remove(tt.id); !errors.Is(err, tt.want) {
			t.Errorf("Remove(%q) = %v, want %v", tt.id, err, tt.want)
		}
	}
	if err := st.Remove(id); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("run still there: %v", err)
	}
	if b, err := os.ReadFile(outside); err != nil || string(b) != "keep" {
		t.Errorf("a file outside the run was touched: %q %v", b, err)
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if e.Name() != "alias" && e.Name() != "not-a-run" {
			t.Errorf("left in the store: %s", e.Name())
		}
	}
	// A partial run left by a killed writer.
	os.MkdirAll(filepath.Join(root, ".p-1.partial"), 0o755)
	if _, err := st.PartialModTime("p-1"); err != nil {
		t.Error(err)
	}
	if err := st.RemovePartial("p-1"); err != nil {
		t.Error(err)
	}
	if _, err := os.Lstat(filepath.Join(root, ".p-1.partial")); !os.IsNotExist(err) {
		t.Errorf("partial still there: %v", err)
	}
}

// TestRemovePartialRefusesLiveWriter: a partial run whose writer still
// holds its lock is not removed, however long ago it was last written
// (prune --incomplete goes by that time): the writer may be in a round
// longer than prune waited.
func TestRemovePartialRefusesLiveWriter(t *testing.T) {
	st := Open(t.TempDir())
	w, err := st.Create(&model.Run{ID: NewID(time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC), "x"), Scenario: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if w.lock == nil {
		t.Skip("no directory locks here (lockDir)")
	}
	id := filepath.Base(w.Dir())
	id = id[1 : len(id)-len(".partial")]
	if err := st.RemovePartial(id); !errors.Is(err, ErrBeingWritten) {
		t.Errorf("RemovePartial of a run being written = %v, want ErrBeingWritten", err)
	}
	if _, err := os.Stat(w.Dir()); err != nil {
		t.Fatalf("the partial run of a live writer was removed: %v", err)
	}
	if _, err := w.Commit(); err != nil {
		t.Errorf("the writer could not commit after the refused removal: %v", err)
	}
}
