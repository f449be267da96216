package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/store"
)

func init() {
	// A variant whose New never returns: a dial to a server that hangs.
	perflab.Register(&perflab.Scenario{Name: "test-hangs-in-new", Doc: "a variant whose setup never ends",
		Variants: []perflab.Variant{{Name: "hangs", New: func(perflab.Params) (perflab.Case, error) { select {} }}}})
}

// TestSignalDuringHangingNew: SIGTERM while a variant's New hangs ends
// `perflab run` at once, with the run saved incomplete (issue 26: it
// waited for New, for ever).
func TestSignalDuringHangingNew(t *testing.T) {
	if testing.Short() {
		t.Skip("starts perflab processes")
	}
	dir := filepath.Join(t.TempDir(), "runs")
	c := startChild(t, "run", "test-hangs-in-new", "--threads", "1", "--count", "3", "--profile", "none", "-o", dir)
	c.waitLine(t, regexp.MustCompile(`^perflab: test-hangs-in-new: \d+ cases?\b`), 30*time.Second)
	time.Sleep(300 * time.Millisecond) // into New
	took := c.signalAndWait(t, syscall.SIGTERM, 5*time.Second)
	t.Logf("exited %d, %v after SIGTERM", c.code, took)
	if c.code != 143 {
		t.Errorf("exit %d, want 143\n%s", c.code, c.stderr())
	}
	run, err := store.Open(dir).Load(store.Latest)
	if err != nil {
		t.Fatalf("run not saved: %v\n%s", err, c.stderr())
	}
	if run.Complete || !strings.Contains(run.Note, "SIGTERM") {
		t.Errorf("complete=%v note=%q", run.Complete, run.Note)
	}
}

// TestRecoverKilledRun: a run killed with SIGKILL mid-rounds leaves its
// checkpointed rounds partial; show --list says so and how to recover
// them, recover refuses while the writer runs and saves the run once it is
// gone, and show then reads it, incomplete (issue 26: no command could
// read or recover them).
func TestRecoverKilledRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts perflab processes")
	}
	dir := filepath.Join(t.TempDir(), "runs")
	c := startChild(t, "run", "test-broken-push", "--variant", "spins", "--threads", "1", "--count", "100000",
		"--time", "2ms", "--warmup", "1ms", "--profile", "none", "-o", dir)
	c.waitLine(t, regexp.MustCompile(`^perflab: round 3/`), 60*time.Second)
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || !strings.HasSuffix(entries[0].Name(), ".partial") {
		t.Fatalf("store holds %v", entries)
	}
	id := strings.TrimSuffix(strings.TrimPrefix(entries[0].Name(), "."), ".partial")

	// Still being written: left alone.
	_, errs, code := execute(t, "recover", id, "-o", dir)
	if code != 1 || !strings.Contains(errs, "being written now") {
		t.Errorf("recover of a live run: exit %d\n%s", code, errs)
	}
	_, errs, _ = execute(t, "show", "--list", "-o", dir)
	if !strings.Contains(errs, "being written now") || strings.Contains(errs, "perflab recover") {
		t.Errorf("show --list of a live run:\n%s", errs)
	}

	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-c.done
	_, errs, _ = execute(t, "show", "--list", "-o", dir)
	if !strings.Contains(errs, "ended without saving it") || !strings.Contains(errs, "`perflab recover "+id+"`") {
		t.Errorf("show --list of a killed run:\n%s", errs)
	}
	out, errs, code := execute(t, "recover", "-o", dir)
	if code != 0 || !strings.Contains(out, "recovered "+id) {
		t.Fatalf("recover: exit %d\n%s%s", code, out, errs)
	}
	if _, errs, code = execute(t, "show", id, "-o", dir); code != 0 {
		t.Fatalf("show: exit %d\n%s", code, errs)
	}
	// show --json is the report; the stored run has the note and reps.
	stored, err := store.Open(dir).Load(id)
	if err != nil {
		t.Fatal(err)
	}
	run := *stored
	if run.Complete || !strings.Contains(run.Note, "recovered from a partial run") || len(run.Cases) != 1 || len(run.Cases[0].Reps) < 2 {
		t.Errorf("recovered run: complete=%v note=%q, %d cases", run.Complete, run.Note, len(run.Cases))
	}
	// Nothing left to recover; the listing is clean.
	_, errs, code = execute(t, "recover", "-o", dir)
	if code != 0 || !strings.Contains(errs, "no run") {
		t.Errorf("second recover: exit %d\n%s", code, errs)
	}
	if _, errs, _ = execute(t, "show", "--list", "-o", dir); strings.Contains(errs, "not listed") {
		t.Errorf("show --list:\n%s", errs)
	}
}
