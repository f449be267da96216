// Package live is the one lifecycle of a running case, shared by the
// runner (perflab run), perflabtest (go test -bench) and soak: build the
// case with Variant.New, panic-safe and abandonable; make one worker per
// thread; run the workers, parked and released together, under the case's
// pprof labels and inside a runtime/trace region, for n operations each, a
// total split between them, or until a time; count what their Counters
// count; close the case once.
//
// It was three copies that had drifted apart (issue 24): a panic in
// Variant.New was recovered under run but crashed soak, and each counted
// operations with its own copy of the same loop.
package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"runtime/pprof"
	"runtime/trace"
	"sort"
	"sync"
	"time"

	"github.com/perflab/perflab"
)

// Region is the runtime/trace region type around each worker's Run calls,
// StartRegion the one around its wait to be released: internal/wallclock
// counts a case's workers by them (Options.Region, Options.StartRegion).
const (
	Region      = "perflab.worker"
	StartRegion = "perflab.start"
)

// WorkerFrame is the function every worker goroutine runs, as profiles
// name it: a sample with it on its stack is a worker's (profiles that see
// every goroutine, such as fgprof's, are filtered by it). Keep it in sync
// with workerLoop.
const WorkerFrame = "github.com/perflab/perflab/internal/live.workerLoop"

// ErrInterrupted is wrapped, with the context's error, when the context
// ended a Run (or New) before it was done. The workers of a Run that
// stopped within StopGrace have returned, and the case can be closed as
// usual; otherwise the error is ErrAbandoned, which wraps ErrInterrupted.
var ErrInterrupted = errors.New("interrupted")

// ErrAbandoned is wrapped, with the context's error, when the context ended
// while the case's New or its workers were still running (past StopGrace):
// they cannot be killed, so they are left to finish in the background. It
// wraps ErrInterrupted.
var ErrAbandoned error = abandoned{}

type abandoned struct{}

func (abandoned) Error() string { return "abandoned, left to finish in the background" }
func (abandoned) Unwrap() error { return ErrInterrupted }

// StopGrace is how long RunUntil waits, once its context ended, for the
// workers to return before it abandons them. Its workers check the
// context between calls, so they return within one (about 10 ms under
// soak): the case is then closed as usual (abandoning every interrupted
// RunUntil left Ctrl-C during perflab soak leaking every case's state,
// issue 24 review), while a worker that hangs holds Ctrl-C no longer than
// this. Run and RunTotal do not wait: their workers run their n to the
// end whatever the context says, seconds for a calibration step, and
// waiting for them took SIGTERM during calibration from 9 ms to 511 ms
// (TestSignalsStopRun; issue 14 wants Ctrl-C at once).
var StopGrace = 500 * time.Millisecond

var bgctx = context.Background()

// Case is a live case: its shared state and one worker per thread.
type Case struct {
	state   perflab.Case
	workers []perflab.Worker
	labels  *pprof.LabelSet

	// abandoned is set when a Run returned with workers still running:
	// the state is then never closed under them.
	abandoned bool
	closeOnce sync.Once
	closeErr  error
}

// New builds case spec of s: the variant's New, then one worker per
// thread, each goroutine of which will carry labels as pprof labels.
//
// New runs on a goroutine of its own and is given up when ctx ends: a New
// that blocks (a dial, a server that never answers) held an interrupted run
// for as long as it blocked (issue 26). The error then wraps ErrAbandoned;
// what New returns later is closed. A panic in New or NewWorker is returned
// as an error saying "setup panicked", with New's stack. A New error is
// returned wrapped ("setup: …"), so errors.Is finds
// perflab.ErrNotApplicable.
func New(ctx context.Context, s *perflab.Scenario, spec perflab.CaseSpec, labels map[string]string) (*Case, error) {
	v, err := s.Variant(spec.Variant)
	if err != nil {
		return nil, err
	}
	if spec.Threads < 1 {
		return nil, fmt.Errorf("case %s: %d threads: want at least 1", s.CaseName(spec), spec.Threads)
	}
	state, err := newState(ctx, v, spec.Params)
	if err != nil {
		return nil, err
	}
	workers, err := newWorkers(state, spec.Threads)
	if err != nil {
		closeState(state)
		return nil, err
	}
	return Of(labels, state, workers...), nil
}

// Of is a live case of workers already built, with state (which may be nil)
// closed by Close: for tests and harness benchmarks.
func Of(labels map[string]string, state perflab.Case, workers ...perflab.Worker) *Case {
	c := &Case{state: state, workers: workers}
	if len(labels) > 0 {
		names := make([]string, 0, len(labels))
		for k := range labels {
			names = append(names, k)
		}
		sort.Strings(names)
		kv := make([]string, 0, 2*len(names))
		for _, k := range names {
			kv = append(kv, k, labels[k])
		}
		ls := pprof.Labels(kv...)
		c.labels = &ls
	}
	return c
}

type panicError struct {
	value any
	stack []byte
}

func newState(ctx context.Context, v *perflab.Variant, p perflab.Params) (perflab.Case, error) {
	type result struct {
		cs       perflab.Case
		err      error
		panicked *panicError
	}
	ch := make(chan result, 1)
	go func() {
		var res result
		defer func() {
			if v := recover(); v != nil {
				res.panicked = &panicError{v, debug.Stack()}
			}
			ch <- res
		}()
		res.cs, res.err = v.New(p)
	}()
	select {
	case res := <-ch:
		switch {
		case res.panicked != nil:
			return nil, fmt.Errorf("setup panicked: %v\n%s", res.panicked.value, res.panicked.stack)
		case res.err != nil:
			return nil, fmt.Errorf("setup: %w", res.err)
		case res.cs == nil:
			return nil, errors.New("setup: the variant's New returned no case and no error")
		}
		return res.cs, nil
	case <-ctx.Done():
		go func() {
			if res := <-ch; res.cs != nil {
				closeState(res.cs)
			}
		}()
		return nil, fmt.Errorf("setup %w: %w", ErrAbandoned, ctx.Err())
	}
}

func newWorkers(state perflab.Case, threads int) (ws []perflab.Worker, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("setup panicked: NewWorker: %v\n%s", v, debug.Stack())
		}
	}()
	ws = make([]perflab.Worker, threads)
	for i := range ws {
		if ws[i] = state.NewWorker(i); ws[i] == nil {
			return nil, fmt.Errorf("setup: NewWorker(%d) returned nil", i)
		}
	}
	return ws, nil
}

func closeState(state perflab.Case) error {
	if cl, ok := state.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}

// Threads is the number of workers.
func (c *Case) Threads() int { return len(c.workers) }

// Bytes is what the case's operations process each (perflab.Byteser), 0 if
// it does not say.
func (c *Case) Bytes() int64 {
	if b, ok := c.state.(perflab.Byteser); ok {
		return b.Bytes()
	}
	return 0
}

// Counts sums the workers' perflab.Counter counts: cumulative, so a caller
// takes the difference across what it ran.
func (c *Case) Counts() map[string]int64 {
	out := map[string]int64{}
	for _, w := range c.workers {
		if ct, ok := w.(perflab.Counter); ok {
			for k, v := range ct.Counts() {
				out[k] += v
			}
		}
	}
	return out
}

// Close closes the case's state if it is an io.Closer, once however often
// it is called, and not at all once a Run was abandoned: its workers may
// still be running, and closing their state under them could crash the
// process before it exits.
func (c *Case) Close() error {
	if c.abandoned {
		return nil
	}
	c.closeOnce.Do(func() { c.closeErr = closeState(c.state) })
	return c.closeErr
}

// Abandoned reports whether a Run returned with its workers still running.
func (c *Case) Abandoned() bool { return c.abandoned }

// Meter is called just outside a Run's timed region: Before once every
// worker is parked at the start line, After once the last has finished.
// Either may be nil.
type Meter struct {
	Before, After func()
}

// Run runs every worker for n operations, each on its own goroutine, and
// returns the wall time from releasing them to the last one finishing.
// Goroutines are started and parked before the clock starts.
//
// When ctx ends first (Ctrl-C, SIGTERM), Run is abandoned unless its
// workers have just finished: it stops waiting and returns an error
// wrapping ErrAbandoned. Worker goroutines cannot be killed; they finish
// their n operations in the background (issue 14: a 5 s repetition, or a
// worker that hangs, kept Ctrl-C waiting). A panic in a
// worker is its Run's error. The clock is read by the goroutine the last
// worker wakes, so waiting for ctx adds no wake-up to the timed region.
func (c *Case) Run(ctx context.Context, n int, m *Meter) (time.Duration, error) {
	d, _, err := c.run(ctx, func(int) int { return n }, time.Time{}, m)
	return d, err
}

// RunTotal is Run with total operations split as evenly as possible over
// the workers (testing.B's b.N).
func (c *Case) RunTotal(ctx context.Context, total int, m *Meter) (time.Duration, error) {
	k := len(c.workers)
	d, _, err := c.run(ctx, func(i int) int {
		n := total / k
		if i < total%k {
			n++
		}
		return n
	}, time.Time{}, m)
	return d, err
}

// RunUntil runs every worker in calls of n operations until end, and
// returns the operations done and the wall time they took. n sizes a call
// (Calibrate): a worker stops at most one call after end. When ctx ends
// first, each worker stops after its call: RunUntil waits StopGrace for
// them and returns the operations done so far with an error wrapping
// ErrInterrupted, the case still closable; workers not back by then are
// abandoned as Run's are (ErrAbandoned).
func (c *Case) RunUntil(ctx context.Context, n int, end time.Time) (int64, time.Duration, error) {
	if end.IsZero() {
		return 0, 0, errors.New("live: RunUntil needs an end time")
	}
	d, ops, err := c.run(ctx, func(int) int { return n }, end, nil)
	return ops, d, err
}

// run is Run, RunTotal and RunUntil: ops gives worker i's operations per
// call; a zero end makes one call.
func (c *Case) run(ctx context.Context, ops func(i int) int, end time.Time, m *Meter) (time.Duration, int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, 0, err
	}
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	res := make([]result, len(c.workers))
	stop := ctx.Done()
	ready.Add(len(c.workers))
	done.Add(len(c.workers))
	for i, w := range c.workers {
		go workerLoop(w, ops(i), end, stop, c.labels, &ready, start, &done, &res[i])
	}
	// The waiter and what it captures are allocated, and the stop channel
	// fetched, before Meter.Before: allocs/op stays exact.
	var t0 time.Time
	var d time.Duration
	finished := make(chan struct{})
	go func() {
		// t0 is written before close(start), which comes before the
		// workers' Done: no race.
		done.Wait()
		d = time.Since(t0)
		close(finished)
	}()
	ready.Wait()
	if m != nil && m.Before != nil {
		m.Before()
	}
	t0 = time.Now()
	close(start)
	var interrupted error
	select {
	case <-finished:
	case <-stop:
		wait := StopGrace
		if end.IsZero() {
			wait = 0 // Run's workers do not check stop (see StopGrace)
		}
		grace := time.NewTimer(wait)
		defer grace.Stop()
		select {
		case <-finished:
			// The workers saw stop (or ended their n) and returned:
			// what they did counts, and the case can be closed.
			interrupted = fmt.Errorf("run %w: %w", ErrInterrupted, ctx.Err())
		case <-grace.C:
			c.abandoned = true
			return time.Since(t0), 0, fmt.Errorf("run %w: %w", ErrAbandoned, ctx.Err())
		}
	}
	if m != nil && m.After != nil && interrupted == nil {
		m.After()
	}
	var total int64
	var errs []error
	for _, r := range res {
		total += r.ops
		if r.err != nil {
			errs = append(errs, r.err)
		}
	}
	if len(errs) > 0 {
		return d, total, errs[0]
	}
	return d, total, interrupted
}

// result is one worker's: padded so that workers finishing together do
// not share a cache line.
type result struct {
	ops int64
	err error
	_   [40]byte
}

// WorkerPanic is a panic in a scenario's worker, returned as its Run's
// error.
type WorkerPanic struct {
	Value any
	Stack []byte
}

func (p *WorkerPanic) Error() string {
	return fmt.Sprintf("worker panicked: %v\n%s", p.Value, p.Stack)
}

// workerLoop is the body of every worker goroutine. Profiles are filtered
// to goroutines that have this function on their stack, so the harness's
// own goroutines (waits, the profiler's ticker) do not pollute budgets. Keep
// its name in sync with WorkerFrame.
//
//go:noinline
func workerLoop(w perflab.Worker, n int, end time.Time, stop <-chan struct{}, labels *pprof.LabelSet, ready *sync.WaitGroup, start chan struct{}, done *sync.WaitGroup, res *result) {
	defer done.Done()
	defer func() {
		if v := recover(); v != nil {
			res.err = &WorkerPanic{Value: v, Stack: debug.Stack()}
		}
	}()
	if labels != nil {
		pprof.SetGoroutineLabels(pprof.WithLabels(bgctx, *labels))
	}
	ready.Done()
	// The start region covers the wait for the release: internal/wallclock
	// leaves out the time parked on start (before the clock) but counts the
	// time from the release until the worker gets a CPU as sched — with
	// more workers than Ps, half of them wait a time slice to begin, and
	// that is in the repetition's wall time (3–20% of the goroutine time at
	// four workers on two cores, measured by internal/truth).
	starting := trace.StartRegion(bgctx, StartRegion)
	<-start
	starting.End()
	for {
		// The region marks the worker's own time for the execution
		// trace (internal/wallclock counts only inside it). When no
		// trace is running StartRegion is one atomic load, once a call.
		region := trace.StartRegion(bgctx, Region)
		w.Run(n)
		region.End()
		res.ops += int64(n)
		if end.IsZero() || !time.Now().Before(end) {
			return
		}
		select {
		case <-stop:
			return
		default:
		}
	}
}

// MaxCount is the most operations per worker a count is grown to, as
// testing.B caps b.N (at 1e9 there; a no-op worker reaches this within
// seconds).
const MaxCount = 1 << 40

// MaxGrowth is the most a count is multiplied by in one step, as
// testing.B's: a repetition timed at a few nanoseconds says little about
// the next.
const MaxGrowth = 100

// Calibrate finds how many operations per worker make one Run last about
// target, growing the count like testing.B does.
func (c *Case) Calibrate(ctx context.Context, target time.Duration) (int, error) {
	n := 1
	for {
		d, err := c.Run(ctx, n, nil)
		if err != nil {
			return 0, err
		}
		if d >= target*8/10 || n >= MaxCount {
			return n, nil
		}
		next := n * MaxGrowth
		if d > 0 {
			// Aim 20% past the target so the last step rarely falls short.
			predicted := float64(n) * float64(target) / float64(d) * 1.2
			if predicted < float64(next) {
				next = int(predicted)
			}
		}
		if next <= n {
			next = n + 1
		}
		n = min(next, MaxCount)
	}
}
