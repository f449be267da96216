// Package runner measures a scenario: it expands the case matrix, builds
// every case outside the timed region, calibrates, warms up, runs
// interleaved rounds in shuffled order, summarises the repetitions, then
// profiles each case in a separate pass and splits its time into
// categories. Results go into a model.Run as they are measured.
package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/live"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/profiles"
)

var bgctx = context.Background()

// Options control a run.
type Options struct {
	Selection perflab.Selection
	// Cases are the selection's cases, when the caller has expanded the
	// matrix already (internal/lab plans a run before it starts): the
	// matrix is expanded once. Nil: Execute expands Selection.
	Cases []perflab.CaseSpec
	// Count is the number of timed repetitions (rounds) per case.
	Count int
	// Time is the target duration of one repetition.
	Time time.Duration
	// Warmup is the least time each case runs, untimed, before its first
	// timed repetition, its calibration included: after calibrating it
	// runs repetitions at the calibrated count until Warmup has passed
	// and three have run, and the last three re-time the count
	// (recalibrate). The default is within what calibration and those
	// three take anyway.
	Warmup time.Duration
	// Profile lists the profiles to capture: wall, cpu, mutex, block,
	// fgprof (see ProfileKinds).
	Profile []string
	// ProfileTime is how long each case runs under each profiling window.
	// With Trace "slices" it is the least time the traced slices cover
	// together (see sliceCount and sliceOps).
	ProfileTime time.Duration
	// Trace says where the execution trace of the wall-clock profile and
	// the budget is taken: TraceSlices (the default) or TraceWindow.
	Trace string
	// Seed shuffles the order of cases within each round.
	Seed uint64
	// Until, when positive, keeps adding rounds after Count until every
	// case's time/op confidence interval is within ±Until (a fraction),
	// or UntilMax has passed in the rounds.
	Until    float64
	UntilMax time.Duration
}

// ProfileKinds are the profiles the runner can capture, in order
// (model.ProfileKinds: one list for every command and page). wall is the
// exact wall-clock profile from the execution tracer, behind budgets and
// flame graphs; fgprof is the sampling wall-clock profiler users know,
// kept for comparison in a window of its own (it over-reports parked lock
// waiters: see the README).
var ProfileKinds = model.ProfileKinds

// DefaultProfiles are the profiles captured unless Options.Profile says.
var DefaultProfiles = []string{"wall", "cpu", "mutex", "block"}

// Defaults fills zero fields with the defaults: about two minutes for the
// default cipher-cache matrix (24 cases) on two cores, 5.1 s a case
// (Estimate): a second of calibration and warm-up, ten timed repetitions
// of 200 ms, six or seven traced slices as long with their traces read,
// and a mutex and block window of half a second.
func (o *Options) Defaults() {
	if o.Count == 0 {
		o.Count = 10
	}
	if o.Time == 0 {
		o.Time = 200 * time.Millisecond
	}
	if o.Warmup == 0 {
		o.Warmup = 300 * time.Millisecond
	}
	if o.Profile == nil {
		o.Profile = append([]string(nil), DefaultProfiles...)
	}
	if o.ProfileTime == 0 {
		o.ProfileTime = time.Second
	}
	if o.Trace == "" {
		o.Trace = TraceSlices
	}
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano())
	}
	if o.Until > 0 && o.UntilMax == 0 {
		o.UntilMax = 10 * time.Minute
	}
}

// Progress receives status as the run goes; it is called from the
// runner's goroutine between repetitions, never inside a timed region.
type Progress interface {
	// Phase starts a phase ("warmup", "round 3/10", "profiling") of total steps.
	Phase(name string, total int)
	// Step reports one step of the current phase done, on case name.
	Step(name string)
	// Warn reports a problem that does not stop the run.
	Warn(msg string)
}

// Saver persists the run as it is measured.
type Saver interface {
	WriteFile(rel string, data []byte) error
	Checkpoint() error
}

// Runner measures one scenario into run.
type Runner struct {
	Scenario *perflab.Scenario
	Opts     Options
	Run      *model.Run
	Save     Saver
	Progress Progress
	// NoFlame leaves out the wall-clock flame graph SVG (wall.svg) the
	// runner otherwise draws next to each case's wall profile.
	NoFlame bool
	// Rules classify stacks, with the scenario's work patterns included
	// (profiles.Rules.WithWork). They are required for time budgets.
	Rules *profiles.Rules

	cases         []*liveCase
	sampler       *sampler
	reps          [][]repResult
	untilWarnings []untilWarning
	// lost lists the cases whose profiling pass failed to save something,
	// with the reason: the run is then not complete.
	lost []string
	// slices are each case's traced slices so far (Trace "slices").
	slices [][]*slice
}

// ErrInterrupted is returned when the context ends the run early; what was
// measured before is in the run.
var ErrInterrupted = errors.New("interrupted: the rounds measured so far are saved and the run is marked incomplete")

// Execute runs the whole measurement. The run is checkpointed after every
// round and every profiled case; on cancellation it returns ErrInterrupted
// with everything measured so far in r.Run.
func (r *Runner) Execute(ctx context.Context) error {
	r.Opts.Defaults()
	r.Run.Config.Seed = r.Opts.Seed
	r.Run.ParamOrder = r.Run.ParamOrder[:0]
	for _, p := range r.Scenario.Params {
		r.Run.ParamOrder = append(r.Run.ParamOrder, p.Name)
	}
	specs := r.Opts.Cases
	if specs == nil {
		var err error
		if specs, err = r.Scenario.Matrix(r.Opts.Selection); err != nil {
			return err
		}
	}
	r.sampler = newSampler()
	r.Run.Config.Trace = r.Opts.Trace
	r.Run.Cases = make([]model.Case, len(specs))
	r.reps = make([][]repResult, len(specs))
	r.slices = make([][]*slice, len(specs))
	for i, spec := range specs {
		name := r.Scenario.CaseName(spec)
		r.Run.Cases[i] = model.Case{Name: name, Variant: spec.Variant, Params: spec.Params, Threads: spec.Threads, Status: model.StatusSkipped}
		r.cases = append(r.cases, &liveCase{spec: spec, name: name, opsPerMicro: r.Scenario.OpsPerMicrosecond, stop: ctx})
	}
	defer r.closeCases()

	if err := r.setup(ctx); err != nil {
		return r.finish(ctx, err)
	}
	if err := r.rounds(ctx); err != nil {
		return r.finish(ctx, err)
	}
	if err := r.profile(ctx); err != nil {
		return r.finish(ctx, err)
	}
	if len(r.lost) > 0 {
		// The timing is whole but profiles, budgets or flame graphs are
		// missing: not a complete run (issue 14: it said complete, exit 0).
		return r.finish(ctx, fmt.Errorf("%w: the profiles of %d of %d profiled cases were not all saved: %s",
			ErrIncomplete, len(r.lost), r.live(), strings.Join(r.lost, "; ")))
	}
	return r.finish(ctx, nil)
}

// ErrIncomplete is returned when every case was measured but something
// the run should hold was not saved (a profile, a budget, a flame graph);
// the run is stored, marked incomplete, with the reason in its note.
var ErrIncomplete = errors.New("incomplete")

// emptyInterrupted is ErrInterrupted for a run stopped before it measured
// anything; note is its short note ("interrupted by SIGINT before any
// case was measured").
type emptyInterrupted struct{ note string }

func (e emptyInterrupted) Error() string {
	return e.note + ": the run is saved, empty and marked incomplete"
}

func (e emptyInterrupted) Unwrap() error { return ErrInterrupted }

// EmptyInterrupted is the error of a run its context ended before it
// measured anything, for the engines that end runs as Execute does
// (perflab bench): it wraps ErrInterrupted and says, once, that the run
// is saved empty; note is the run's note (model.InterruptedNote).
func EmptyInterrupted(note string) error { return emptyInterrupted{note} }

// finish marks the run complete or not and checkpoints it.
func (r *Runner) finish(ctx context.Context, err error) error {
	r.Run.Finished = time.Now().UTC()
	r.Run.Complete = err == nil
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		err = ErrInterrupted
		// The cause says by what (Main cancels with the signal).
		var by string
		if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
			err = fmt.Errorf("%w (%v)", ErrInterrupted, cause)
			by = cause.Error()
		}
		if !r.Run.Measured() {
			// Not "the rounds measured so far are saved": there were
			// none.
			err = emptyInterrupted{model.InterruptedNote(by, "before any case was measured")}
		}
	}
	var empty emptyInterrupted
	switch {
	case errors.As(err, &empty):
		r.Run.Note = empty.note
	case err != nil:
		r.Run.Note = err.Error()
	}
	if cerr := r.Save.Checkpoint(); cerr != nil && err == nil {
		err = cerr
	}
	return err
}

// setup builds every case and its workers, then calibrates and warms each
// one. A case that fails here is marked failed and left out of the rounds.
func (r *Runner) setup(ctx context.Context) error {
	r.Progress.Phase("setup and warmup", len(r.cases))
	for i, c := range r.cases {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := r.setupCaseCtx(ctx, c)
		if errors.Is(err, errAbandoned) || ctx.Err() != nil {
			// Interrupted while calibrating or warming up: not the case's
			// failure.
			r.Run.Cases[i].Warnings = append(r.Run.Cases[i].Warnings, model.Warn(model.WarnInterrupted, 0, "interrupted during setup (calibration or warmup): not measured"))
			return ctx.Err()
		}
		if errors.Is(err, perflab.ErrNotApplicable) {
			c.failed = err
			r.Run.Cases[i].Status = model.StatusNotApplicable
			// The variant's own reason, without the sentinel's words.
			na := perflab.ErrNotApplicable.Error()
			msg := strings.TrimPrefix(err.Error(), "setup: ")
			msg = strings.TrimSuffix(strings.TrimPrefix(msg, na+": "), ": "+na)
			r.Run.Cases[i].Error = msg
		} else if err != nil {
			r.fail(i, err)
		}
		r.Progress.Step(c.name)
	}
	return r.Save.Checkpoint()
}

// setupCase is setupCaseCtx never interrupted.
func (r *Runner) setupCase(c *liveCase) error { return r.setupCaseCtx(context.Background(), c) }

// setupCaseCtx builds, calibrates and warms case c; when ctx ends during
// its New it returns at once (live.New).
func (r *Runner) setupCaseCtx(ctx context.Context, c *liveCase) (err error) {
	c.lc, err = live.New(ctx, r.Scenario, c.spec, map[string]string{"case": c.name})
	if err != nil {
		return err
	}
	c.bytes = c.lc.Bytes()
	began := time.Now()
	if err := c.calibrate(r.Opts.Time); err != nil {
		return err
	}
	return c.recalibrate(r.Opts.Time, began.Add(r.Opts.Warmup))
}

func (r *Runner) fail(i int, err error) {
	r.cases[i].failed = err
	r.Run.Cases[i].Status = model.StatusFailed
	r.Run.Cases[i].Error = err.Error()
	r.Progress.Warn(fmt.Sprintf("%s failed: %v", r.cases[i].name, firstLine(err.Error())))
}

// rounds runs Count rounds; each round runs every live case once, in a
// fresh random order, so machine drift spreads over all variants instead of
// aliasing onto one.
func (r *Runner) rounds(ctx context.Context) error {
	rng := rand.New(rand.NewPCG(r.Opts.Seed, 0))
	order := make([]int, len(r.cases))
	for i := range order {
		order[i] = i
	}
	began := time.Now()
	// One across rounds: its figures for other programs' CPUs and for
	// steal are taken over spans of rounds at least othersSpan long.
	var nz noise
	for round := 0; ; round++ {
		if round >= r.Opts.Count && !r.more(round, began) {
			for _, w := range r.untilWarnings {
				r.Run.Cases[w.i].Warnings = append(r.Run.Cases[w.i].Warnings, w.msg)
			}
			break
		}
		phase := fmt.Sprintf("round %d/%d", round+1, r.Opts.Count)
		if round >= r.Opts.Count {
			phase = fmt.Sprintf("round %d (until ±%.0f%%)", round+1, 100*r.Opts.Until)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if r.live() == 0 {
			break // every case failed: more rounds would measure nothing
		}
		r.Progress.Phase(phase, r.live())
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		nz.start()
		for _, i := range order {
			c := r.cases[i]
			if c.failed != nil {
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			// A round's traced slices, if it has any (slicesAt), go
			// before the timed repetition or after it, in turn, so that
			// neither is always the one that follows another case.
			before, after := r.slicesAt(i, round)
			if before {
				if err := r.traceSlice(ctx, i, round); err != nil {
					return err
				}
				if c.failed != nil {
					continue
				}
			}
			res, err := c.rep(r.sampler)
			if errors.Is(err, errAbandoned) {
				r.Run.Cases[i].Warnings = append(r.Run.Cases[i].Warnings, model.Warn(model.WarnAbandoned, 0,
					fmt.Sprintf("a repetition was abandoned when the run was interrupted: not counted (%d measured)", len(r.reps[i]))))
				return err
			}
			if err != nil && ctx.Err() != nil {
				// Interrupted between the check above and the repetition's
				// start: the run's interruption, not the case's failure.
				return ctx.Err()
			}
			if err != nil {
				r.fail(i, err)
				continue
			}
			res.round = round
			r.reps[i] = append(r.reps[i], res)
			r.summarise(i)
			if after {
				if err := r.traceSlice(ctx, i, round); err != nil {
					return err
				}
			}
			r.Progress.Step(c.name)
		}
		if rd, ok := nz.end(); ok {
			r.Run.Rounds = append(r.Run.Rounds, rd)
		}
		if err := r.Save.Checkpoint(); err != nil {
			return fmt.Errorf("saving after round %d: %w", round+1, err)
		}
	}
	return nil
}

// MinIntervalReps is the fewest repetitions benchmath gives a 95% interval
// of a median for (its "need >= 6 samples"): --until accepts no fewer as
// converged, and the CLI warns of a --count below it.
const MinIntervalReps = 6

// more reports whether --until wants another round: some live case's
// time/op interval is still wider than the target, and the time cap is not
// reached. When it stops with cases unresolved, each gets a warning.
func (r *Runner) more(round int, began time.Time) bool {
	if r.Opts.Until <= 0 {
		return false
	}
	var open []int
	for i, c := range r.cases {
		if c.failed != nil {
			continue
		}
		st := r.Run.Cases[i].Stats["ns/op"]
		if st.N < MinIntervalReps || st.HalfWidth() > r.Opts.Until {
			open = append(open, i)
		}
	}
	if len(open) == 0 {
		return false
	}
	if time.Since(began) < r.Opts.UntilMax {
		return true
	}
	for _, i := range open {
		hw := 100 * r.Run.Cases[i].Stats["ns/op"].HalfWidth()
		r.untilWarnings = append(r.untilWarnings, untilWarning{i, model.Warn(model.WarnUntil, math.Round(hw), fmt.Sprintf(
			"time/op ±%.0f%% after %d rounds: did not reach --until ±%.0f%% within --until-max %v",
			hw, round, 100*r.Opts.Until, r.Opts.UntilMax))})
	}
	return false
}

type untilWarning struct {
	i   int
	msg model.Warning
}

func (r *Runner) live() int {
	n := 0
	for _, c := range r.cases {
		if c.failed == nil {
			n++
		}
	}
	return n
}

// summarise recomputes case i's statistics from its repetitions so far.
func (r *Runner) summarise(i int) {
	sc := &r.Run.Cases[i]
	sc.Status = model.StatusOK
	sc.Reps = sc.Reps[:0]
	series := map[string][]float64{}
	walls := make([]time.Duration, 0, len(r.reps[i]))
	for _, rep := range r.reps[i] {
		walls = append(walls, rep.wall)
		sc.Reps = append(sc.Reps, model.Rep{Ops: rep.ops, Metrics: rep.metrics})
		for unit, v := range rep.metrics {
			series[unit] = append(series[unit], v)
		}
	}
	slices.Sort(walls)
	r.cases[i].repWall = walls[len(walls)/2]
	sc.Stats = map[string]model.Stat{}
	sc.Warnings = nil
	units := make([]string, 0, len(series))
	for unit := range series {
		units = append(units, unit)
	}
	sort.Strings(units)
	for _, unit := range units {
		st, warns := Summarise(series[unit])
		sc.Stats[unit] = st
		if unit == "ns/op" {
			sc.Warnings = append(sc.Warnings, warns...)
		}
	}
}

func (r *Runner) closeCases() {
	for _, c := range r.cases {
		if c.lc != nil {
			c.lc.Close() // not if a repetition was abandoned (live.Case.Close)
		}
	}
}

func firstLine(s string) string {
	for i, ch := range s {
		if ch == '\n' {
			return s[:i]
		}
	}
	return s
}
