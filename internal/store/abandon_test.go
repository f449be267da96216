package store

import (
	"errors"
	"io/fs"
	"os"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/model"
)

// TestAbandon: an abandoned write leaves no directory, no held id and no
// open lock behind, and a committed run is not touched by it.
func TestAbandon(t *testing.T) {
	st := Open(t.TempDir())
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	w, err := st.Create(&model.Run{ID: NewID(now, "upload"), Scenario: "upload"})
	if err != nil {
		t.Fatal(err)
	}
	dir := w.Dir()
	if err := w.WriteFile("cases/a/profile.pb.gz", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := w.Abandon(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("abandoned run's directory: %v, want it gone", err)
	}
	if w.lock != nil || w.held != "" {
		t.Errorf("abandoned writer holds lock %v, id %q", w.lock, w.held)
	}
	entries, _ := os.ReadDir(st.Root)
	if len(entries) != 0 {
		t.Errorf("store holds %d entries after an abandoned write, want none", len(entries))
	}

	w2, err := st.Create(&model.Run{ID: NewID(now, "upload"), Scenario: "upload", Complete: true})
	if err != nil {
		t.Fatal(err)
	}
	final, err := w2.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if err := w2.Abandon(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(final); err != nil {
		t.Errorf("Abandon after Commit removed the run: %v", err)
	}
}
