package cli

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/runner"
	"github.com/perflab/perflab/internal/store"
)

// failingWrites fails every write of a file whose name ends with suffix.
type failingWrites struct {
	runner.Saver
	suffix string
}

func (f failingWrites) WriteFile(rel string, data []byte) error {
	if strings.HasSuffix(rel, f.suffix) {
		return errors.New("no space left on device")
	}
	return f.Saver.WriteFile(rel, data)
}

// TestLostFlameGraphFailsRun: when a flame graph cannot be written the run
// is stored incomplete, with the reason in run.json and in the table, and
// perflab exits 1 — it used to say complete and exit 0. (issue 14, part 5)
func TestLostFlameGraphFailsRun(t *testing.T) {
	wrapSaver = func(s runner.Saver) runner.Saver { return failingWrites{s, "wall.svg"} }
	defer func() { wrapSaver = nil }()
	dir := t.TempDir()
	out, errs, code := executeWithin(t, time.Minute, "run", "test-broken-push", "--variant", "spins", "--count", "2", "--time", "5ms",
		"--warmup", "1ms", "--profile", "wall", "--profile-time", "200ms", "-o", dir)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, errs)
	}
	run, err := store.Open(dir).Load(store.Latest)
	if err != nil {
		t.Fatal(err)
	}
	if run.Complete || !strings.Contains(run.Note, "no space left on device") {
		t.Errorf("complete=%v note=%q", run.Complete, run.Note)
	}
	if !strings.Contains(out, "INCOMPLETE") || !strings.Contains(errs, "not all saved") {
		t.Errorf("table or error does not say so:\n%s\n%s", out, errs)
	}
}
