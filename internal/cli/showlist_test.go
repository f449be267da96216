package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/store"
)

// TestShowListGolden: `perflab show --list` of a store with a run of each
// status a listing says — complete, complete with a failed case, every
// case failed, interrupted, interrupted before measuring — and, on
// stderr, a partial run abandoned by a killed writer.
func TestShowListGolden(t *testing.T) {
	dir := t.TempDir()
	st := store.Open(dir)
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	one := map[string][]float64{"variant=mutex/keys=128/threads=1": {100, 101, 99}}
	storeRun(t, st, t0, one)
	mixed := storeRun(t, st, t0.Add(time.Hour), map[string][]float64{"variant=mutex/keys=128/threads=1": {100, 101, 99}, "variant=sum256/keys=128/threads=1": {90, 91, 89}})
	rewriteRun(t, st, mixed, func(r *store.Run) {
		r.Env.Commit, r.Env.Dirty = "0123456789abcdef0123456789abcdef01234567", true
		r.Cases[1].Reps, r.Cases[1].Status, r.Cases[1].Error = nil, store.StatusFailed, "panic: boom"
	})
	failed := storeRun(t, st, t0.Add(2*time.Hour), one)
	rewriteRun(t, st, failed, func(r *store.Run) { r.Cases[0].Reps, r.Cases[0].Status = nil, store.StatusFailed })
	storeRunIncomplete(t, st, t0.Add(3*time.Hour), one)
	empty := storeRunIncomplete(t, st, t0.Add(4*time.Hour), one)
	rewriteRun(t, st, empty, func(r *store.Run) { r.Cases[0].Reps = nil })
	// A partial run whose writer was killed two days before.
	pd := filepath.Join(dir, "."+store.NewID(t0.Add(5*time.Hour), "cipher-cache")+".partial")
	if err := os.MkdirAll(pd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pd, "run.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour)
	os.Chtimes(filepath.Join(pd, "run.json"), old, old)
	os.Chtimes(pd, old, old)

	out, errs, code := execute(t, "show", "--list", "-o", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	golden(t, "show-list.golden", out+"--- stderr\n"+strings.ReplaceAll(errs, dir, "STORE"))
}
