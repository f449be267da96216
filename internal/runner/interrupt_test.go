package runner

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/profiles"
)

// hangScenario has one variant whose workers run normally until armed:
// then the next Run blocks until release is closed, like a repetition that
// takes far longer than --time, or a worker that hangs.
type hangScenario struct {
	armed   atomic.Bool
	entered chan struct{}
	release chan struct{}
	once    sync.Once
	closed  atomic.Bool
	// done ends the workers' loops when the test ends, and running
	// counts the Run calls in progress: a calibration the runner
	// abandons (aiming at 10 s of 1 ms operations) went on sleeping in
	// 1 ms steps for about 11 s after its test had passed, beside the
	// tests that came after it.
	done    chan struct{}
	running atomic.Int32
}

// newHang makes a hangScenario whose workers stop when t ends; t fails if
// one is still running a second after.
func newHang(t *testing.T) *hangScenario {
	h := &hangScenario{entered: make(chan struct{}), release: make(chan struct{}), done: make(chan struct{})}
	t.Cleanup(func() {
		close(h.done)
		for deadline := time.Now().Add(time.Second); h.running.Load() > 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Errorf("%d workers still running a second after the test ended", h.running.Load())
				return
			}
		}
	})
	return h
}

func (h *hangScenario) scenario(perOp time.Duration) *perflab.Scenario {
	s := newFake("hang", perflab.Variant{Name: "hangs", New: func(perflab.Params) (perflab.Case, error) {
		return &closingCase{h: h, Case: caseOf(func(n int) {
			h.running.Add(1)
			defer h.running.Add(-1)
			if h.armed.Load() {
				h.once.Do(func() { close(h.entered) })
				<-h.release
				if h.closed.Load() {
					panic("worker ran on a closed case")
				}
				return
			}
			for i := 0; i < n; i++ {
				select {
				case <-h.done:
					return
				default:
				}
				if perOp > 0 {
					time.Sleep(perOp)
				}
			}
		})}, nil
	}})
	s.Threads = []int{1}
	return s
}

// closingCase records whether the runner closed the case.
type closingCase struct {
	perflab.Case
	h *hangScenario
}

func (c *closingCase) Close() error { c.h.closed.Store(true); return nil }

// TestInterruptAbandonsRepetition: Ctrl-C during a repetition that would
// not end (a worker blocked) returns at once; the repetition is not
// counted, the case says so, the run is saved incomplete, and the case's
// state is not closed under its still-running workers. (issue 14, part 6)
func TestInterruptAbandonsRepetition(t *testing.T) {
	h := newHang(t)
	defer close(h.release)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	prog := &quietProgress{onPhase: func(name string) {
		if name == "round 3/5" {
			h.armed.Store(true)
			go func() {
				<-h.entered
				time.Sleep(50 * time.Millisecond)
				cancel(errors.New("terminated by SIGTERM"))
			}()
		}
	}}
	run := &model.Run{}
	r := &Runner{Scenario: h.scenario(0), Run: run, Save: &memSaver{}, Progress: prog,
		Opts: Options{Count: 5, Time: 2 * time.Millisecond, Warmup: time.Nanosecond, Profile: []string{}}}
	start := time.Now()
	err := r.Execute(ctx)
	took := time.Since(start)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	t.Logf("returned %v after start, note %q", took, run.Note)
	c := run.Cases[0]
	if len(c.Reps) != 2 || c.Status != model.StatusOK {
		t.Errorf("status %s with %d reps, want ok with the 2 measured before", c.Status, len(c.Reps))
	}
	if !hasWarning(c.Warnings, model.WarnAbandoned, "abandoned") {
		t.Errorf("case warnings do not mention the abandoned repetition: %q", c.Warnings)
	}
	if run.Complete || !strings.Contains(run.Note, "SIGTERM") {
		t.Errorf("complete=%v note=%q, want incomplete, saying by what", run.Complete, run.Note)
	}
	if h.closed.Load() {
		t.Error("the case was closed with its workers still running")
	}
}

// TestInterruptDuringSetup: Ctrl-C during calibration and during a long
// warmup ends the run within a moment, not after the setup.
func TestInterruptDuringSetup(t *testing.T) {
	for _, tt := range []struct {
		name         string
		time, warmup time.Duration
	}{
		// Calibration aims at --time: 10 s of 1 ms operations.
		{"calibration", 10 * time.Second, time.Nanosecond},
		{"warmup", 5 * time.Millisecond, 30 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHang(t)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			run := &model.Run{}
			r := &Runner{Scenario: h.scenario(time.Millisecond), Run: run, Save: &memSaver{}, Progress: &quietProgress{},
				Opts: Options{Count: 3, Time: tt.time, Warmup: tt.warmup, Profile: []string{}}}
			start := time.Now()
			err := r.Execute(ctx)
			took := time.Since(start)
			t.Logf("returned after %v", took)
			if !errors.Is(err, ErrInterrupted) {
				t.Fatalf("err = %v, want ErrInterrupted", err)
			}
			if took > 2*time.Second {
				t.Errorf("took %v to stop", took)
			}
			if c := run.Cases[0]; c.Status != model.StatusSkipped || !hasWarning(c.Warnings, model.WarnInterrupted, "interrupted during setup") {
				t.Errorf("case %s, warnings %q", c.Status, c.Warnings)
			}
		})
	}
}

// failingSaver fails writes of files whose name ends with suffix.
type failingSaver struct {
	memSaver
	suffix string
}

func (f *failingSaver) WriteFile(rel string, data []byte) error {
	if strings.HasSuffix(rel, f.suffix) {
		return errors.New("no space left on device")
	}
	return f.memSaver.WriteFile(rel, data)
}

// TestLostProfileMakesRunIncomplete: a profile or flame graph that cannot
// be written makes the run incomplete, with the reason in its note and an
// error from Execute (so a non-zero exit), not complete: true.
// (issue 14, part 5)
func TestLostProfileMakesRunIncomplete(t *testing.T) {
	for _, suffix := range []string{"cpu.pb.gz", "wall.svg"} {
		t.Run(suffix, func(t *testing.T) {
			run := &model.Run{}
			r := &Runner{Scenario: fakeScenario(), Run: run, Save: &failingSaver{suffix: suffix}, Progress: &quietProgress{}, Rules: profiles.DefaultRules(),
				Opts: Options{Selection: perflab.Selection{Variants: []string{"alloc"}, Threads: []int{1}}, Count: 2, Time: 2 * time.Millisecond,
					Warmup: time.Nanosecond, ProfileTime: 100 * time.Millisecond, Profile: []string{"wall", "cpu"}}}
			err := r.Execute(context.Background())
			if !errors.Is(err, ErrIncomplete) {
				t.Fatalf("err = %v, want ErrIncomplete", err)
			}
			if run.Complete || !strings.Contains(run.Note, "no space left") || !strings.Contains(run.Note, "variant=alloc") {
				t.Errorf("complete=%v note=%q", run.Complete, run.Note)
			}
			if c := run.Cases[0]; c.Status != model.StatusOK || len(c.Reps) != 2 {
				t.Errorf("the timing was lost too: %s, %d reps", c.Status, len(c.Reps))
			}
		})
	}
}
