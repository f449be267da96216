package lab

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/pyroscope"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/runner"
	"github.com/perflab/perflab/internal/store"
)

// MeasureEvents is told what Measure does as it goes, for its caller to
// show: the runner's progress (phases, steps, warnings), then each moment
// `perflab run` prints at. Measure decides; the events only report.
type MeasureEvents interface {
	runner.Progress
	// Started: the run is created, its environment recorded, and its
	// measurement about to begin.
	Started(run *model.Run)
	// Finished: the rounds and profiling ended (or were interrupted); the
	// run is about to be committed.
	Finished()
	// Stored: the run is committed to dir, before any push. An error
	// ends Measure there, and is what it returns.
	Stored(run *model.Run, dir string) error
	// Pushing: the stored run's profiles are about to be sent to the
	// server at url (without user information).
	Pushing(run *model.Run, url string)
	// Pushed: what the push sent and what failed, if it sent anything.
	Pushed(sum pyroscope.Summary)
}

// MeasureOptions say where a measured run goes besides the store.
type MeasureOptions struct {
	// Push, if not nil, sends the stored run's profiles to Pyroscope: not
	// an interrupted run's, which the user stopped.
	Push *Pusher
	// Wrap, if not nil, wraps the store's writer the run checkpoints
	// through: a test makes profile writes fail with it.
	Wrap func(runner.Saver) runner.Saver
}

// Measured is one scenario of a plan, measured and stored.
type Measured struct {
	Run *model.Run
	// Dir is where the run is stored; "" if committing it failed.
	Dir string
	// Interrupted says the context ended the measurement: the run holds
	// what was measured, marked incomplete, with a note saying by what and
	// where ("interrupted by SIGINT in round 3/10").
	Interrupted bool
}

// Measure measures scenario i of the plan, commits the run whatever
// happens (an interrupted run loses nothing measured), and pushes it if
// asked. Its error is, in this order of precedence: a *PlanError found
// before the run was created (nil Measured); the commit's, joined with
// the measurement's; the Stored event's; runner.ErrInterrupted (with the
// context's cause) for an interrupted run; otherwise the measurement's
// error or, failing one, which cases failed, joined with the push's.
func (p *MeasurePlan) Measure(ctx context.Context, st *store.Store, i int, ev MeasureEvents, o MeasureOptions) (*Measured, error) {
	ph := &phases{Progress: ev}
	m, err := p.Start(st, i, ph, o.Wrap)
	if err != nil {
		return nil, err
	}
	run := m.Run
	ev.Started(run)
	runErr := m.Runner.Execute(ctx)
	ev.Finished()
	res := &Measured{Run: run, Interrupted: errors.Is(runErr, runner.ErrInterrupted)}
	if res.Interrupted {
		// The runner's note is the error the caller prints, which says
		// what was kept; the stored note says by what and where, short
		// enough for the run's header line.
		where := ph.where()
		if !run.Measured() {
			where = "before any case was measured"
		}
		run.Note = model.InterruptedNote(causeOf(ctx), where)
	}
	dir, err := m.Writer.Commit()
	if err != nil {
		return res, errors.Join(runErr, err)
	}
	res.Dir = dir
	if err := ev.Stored(run, dir); err != nil {
		return res, err
	}
	if res.Interrupted {
		return res, runErr
	}
	var pushErr error
	if o.Push != nil {
		// The run is stored already: a failed push loses nothing and
		// `perflab push` can send it later.
		pushErr = o.Push.send(ctx, st, run, ev)
	}
	if runErr == nil {
		// Every other case is measured and saved; still say so in the
		// error, so a script or CI notices a broken variant.
		runErr = FailedCases(run)
	}
	// A failed push must not hide failed cases, nor the other way round.
	return res, errors.Join(runErr, pushErr)
}

// send pushes a stored run, telling ev; a label the run cannot take is a
// *PlanError, found before anything is sent.
func (p *Pusher) send(ctx context.Context, st *store.Store, run *model.Run, ev MeasureEvents) error {
	if err := p.Check(run); err != nil {
		return err
	}
	ev.Pushing(run, p.URL())
	sum, err := p.Push(ctx, st, run, nil)
	if len(sum.Results) > 0 {
		ev.Pushed(sum)
	}
	return err
}

// FailedCases is the error of a run whose measurement ended without one
// but some of whose cases failed, naming them; nil if none did.
func FailedCases(run *model.Run) error {
	var failed []string
	for _, c := range run.Cases {
		if c.Status == model.StatusFailed {
			failed = append(failed, c.Name)
		}
	}
	return FailedError(failed, len(run.Cases), "case")
}

// FailedError is the error of a measurement whose failed ones, of total
// (cases, or perflab bench's benchmarks: the noun), are named; nil if none
// failed.
func FailedError(failed []string, total int, noun string) error {
	switch {
	case len(failed) == 0:
		return nil
	case len(failed) == total:
		// A case can fail after some rounds and keep them, so not
		// report.Unmeasured, which is "" for a run that measured.
		return fmt.Errorf("%s: %s", report.AllFailed(len(failed)), strings.Join(failed, ", "))
	}
	return fmt.Errorf("%d of %s failed (the others are measured and saved): %s", len(failed), report.Count(total, noun), strings.Join(failed, ", "))
}

// causeOf says by what the context ended, for an interrupted run's note:
// its cause, where one was given (the CLI's is the signal, "by SIGINT"),
// or "".
func causeOf(ctx context.Context) string {
	if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
		return cause.Error()
	}
	return ""
}

// phases passes the runner's progress on and remembers where the run is,
// for the note of an interrupted run.
type phases struct {
	runner.Progress
	phase       string
	done, total int
}

func (p *phases) Phase(name string, total int) {
	p.phase, p.total, p.done = name, total, 0
	p.Progress.Phase(name, total)
}

func (p *phases) Step(name string) {
	p.done++
	p.Progress.Step(name)
}

// where says where the run is: "in round 3/10", "while profiling case
// 2/4", "during setup".
func (p *phases) where() string {
	switch {
	case strings.HasPrefix(p.phase, "round "):
		return "in " + p.phase
	case p.phase == "profiling":
		return fmt.Sprintf("while profiling case %d/%d", min(p.done+1, p.total), p.total)
	case strings.HasPrefix(p.phase, "setup"):
		return "during setup"
	}
	return ""
}
