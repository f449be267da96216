package runner

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/model"
)

// TestInterruptDuringNew: Ctrl-C while a variant's New blocks (here for
// ever, until the test ends) returns at once with the run saved
// incomplete; what New returns later is closed (issue 26: the run waited
// for New, for ever if it hung).
func TestInterruptDuringNew(t *testing.T) {
	release := make(chan struct{})
	var closed atomic.Bool
	entered := make(chan struct{})
	s := newFake("hangs-in-new", perflab.Variant{Name: "hangs", New: func(perflab.Params) (perflab.Case, error) {
		close(entered)
		<-release
		return &closeRecorder{Case: caseOf(func(int) {}), closed: &closed}, nil
	}})
	s.Threads = []int{1}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	go func() {
		<-entered
		time.Sleep(50 * time.Millisecond)
		cancel(errors.New("by SIGTERM"))
	}()
	run := &model.Run{}
	save := &memSaver{}
	r := &Runner{Scenario: s, Run: run, Save: save, Progress: &quietProgress{},
		Opts: Options{Count: 3, Time: time.Millisecond, Warmup: time.Nanosecond, Profile: []string{}}}
	start := time.Now()
	err := r.Execute(ctx)
	took := time.Since(start)
	t.Logf("returned %v after start: %v", took, err)
	if !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "SIGTERM") {
		t.Fatalf("err = %v, want ErrInterrupted by SIGTERM", err)
	}
	if took > 2*time.Second {
		t.Errorf("took %v", took)
	}
	if run.Complete || !strings.Contains(run.Note, "SIGTERM") {
		t.Errorf("complete=%v note=%q", run.Complete, run.Note)
	}
	if c := run.Cases[0]; c.Status == model.StatusFailed || !hasWarning(c.Warnings, model.WarnInterrupted, "interrupted during setup") {
		t.Errorf("case %s, warnings %q: the interruption is not the case's failure", c.Status, c.Warnings)
	}
	// New returns at last: its case is closed, never used.
	close(release)
	for deadline := time.Now().Add(2 * time.Second); !closed.Load() && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if !closed.Load() {
		t.Error("the case New returned after the interruption was not closed")
	}
}

// TestPanicInNewIsTheCasesFailure: New runs on its own goroutine now; a
// panic in it still fails that case alone, saying so.
func TestPanicInNewIsTheCasesFailure(t *testing.T) {
	s := newFake("panics-in-new",
		perflab.Variant{Name: "boom", New: func(perflab.Params) (perflab.Case, error) { panic("no config") }},
		perflab.Variant{Name: "fine", New: func(perflab.Params) (perflab.Case, error) { return caseOf(func(int) {}), nil }})
	s.Threads = []int{1}
	run := &model.Run{}
	r := &Runner{Scenario: s, Run: run, Save: &memSaver{}, Progress: &quietProgress{},
		Opts: Options{Count: 2, Time: time.Millisecond, Warmup: time.Nanosecond, Profile: []string{}}}
	r.Execute(context.Background())
	got := map[string]model.Status{}
	for _, c := range run.Cases {
		got[c.Variant] = c.Status
		if c.Variant == "boom" && !strings.Contains(c.Error, "setup panicked: no config") {
			t.Errorf("error %q", c.Error)
		}
	}
	if got["boom"] != model.StatusFailed || got["fine"] != model.StatusOK {
		t.Errorf("statuses %v", got)
	}
}

type closeRecorder struct {
	perflab.Case
	closed *atomic.Bool
}

func (c *closeRecorder) Close() error { c.closed.Store(true); return nil }
