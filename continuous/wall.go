package continuous

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/internal/wallclock"
	"github.com/perflab/perflab/profiles"
)

// ownRoots are the root functions of the goroutines that are the profilers'
// own, left out of the wall-clock profile: pyroscope-go's session, CPU
// collector and uploaders, and this package's loop and trace reader
// (runtime, tracer and signal goroutines are left out by wallclock itself).
var ownRoots = []string{"github.com/grafana/pyroscope-go", "github.com/perflab/perflab/continuous.", "github.com/perflab/perflab/internal/pyroscope."}

// ownFrame is the prefix of this package's functions: a sample with one on
// its stack is the profiler waiting for its own window (a Handler request),
// not the service's time.
const ownFrame = "github.com/perflab/perflab/continuous."

// tracing serialises this package's use of the execution tracer between the
// periodic windows and Handler requests.
var tracing sync.Mutex

// cpuByStart is set while Start's pyroscope-go profiler holds the CPU
// profiler, whose samples the trace carries.
var cpuByStart atomic.Bool

var (
	errTracerBusy = errors.New("the execution tracer is in use by something else in this process")
	// errOwnWindow: a Handler request is tracing; the periodic window
	// skips its turn.
	errOwnWindow = errors.New("a wall-clock profile request is being served")
)

// wallWindow is one traced window's wall-clock profile.
type wallWindow struct {
	profile    *profile.Profile
	result     *wallclock.Result
	start, end time.Time
}

// traceWall records an execution trace until ctx ends and returns the
// wall-clock profile of every goroutine but the runtime's and profilers'
// (or of those in region, see beginWall).
// With wait it waits for a window already running in this package;
// without, it returns errOwnWindow.
func traceWall(ctx context.Context, rules *profiles.Rules, region string, wait bool) (*wallWindow, error) {
	t, err := beginWall(rules, region, wait)
	if err != nil {
		return nil, err
	}
	<-ctx.Done()
	return t.end()
}

// wallTrace is a window being traced: beginWall starts it, end ends it.
type wallTrace struct {
	pw     *io.PipeWriter
	done   chan parsedTrace
	sched  *wallclock.SchedStats
	start  time.Time
	undo   []func()
	region bool
}

type parsedTrace struct {
	res *wallclock.Result
	err error
}

// beginWall starts tracing a window of every goroutine, or, with region
// set, of the goroutines inside runtime/trace regions of that type. With
// wait it waits for a window already running in this package; without, it
// returns errOwnWindow.
func beginWall(rules *profiles.Rules, region string, wait bool) (*wallTrace, error) {
	if wait {
		tracing.Lock()
	} else if !tracing.TryLock() {
		return nil, errOwnWindow
	}
	t := &wallTrace{undo: []func(){tracing.Unlock}, region: region != ""}
	// The trace carries CPU samples only while the CPU profiler runs; they
	// split running time by what was running. Under Start, pyroscope-go's
	// is on; else take it for the window if no one else has it.
	if !cpuByStart.Load() {
		if err := pprof.StartCPUProfile(io.Discard); err == nil {
			t.undo = append(t.undo, pprof.StopCPUProfile)
		}
	}
	// The trace streams into the parser, so a window's memory is the
	// parser's, not the whole trace's.
	pr, pw := io.Pipe()
	t.pw, t.done = pw, make(chan parsedTrace, 1)
	// Each thread's run-queue wait over the window: time a goroutine was
	// running to Go while the OS ran something else, which the trace
	// cannot see. The parser reads After only at the trace's end, which
	// the pipe's Close orders after it is set.
	if before := wallclock.ReadSchedStats(); before != nil {
		t.sched = &wallclock.SchedStats{Before: before}
	}
	opts := wallclock.Options{AllGoroutines: true, Exclude: ownRoots, Rules: rules, Sched: t.sched}
	if region != "" {
		opts = wallclock.Options{Region: region, Rules: rules, Sched: t.sched}
	}
	go func() {
		res, err := wallclock.FromTrace(pr, opts)
		pr.CloseWithError(err) // unblock the tracer's writer if the parser gave up
		t.done <- parsedTrace{res, err}
	}()
	t.start = time.Now()
	if err := trace.Start(pw); err != nil {
		pw.Close()
		<-t.done
		t.release()
		return nil, fmt.Errorf("%w (%v)", errTracerBusy, err)
	}
	return t, nil
}

func (t *wallTrace) release() {
	for i := len(t.undo) - 1; i >= 0; i-- {
		t.undo[i]()
	}
}

// end stops the trace and returns the window's profile.
func (t *wallTrace) end() (*wallWindow, error) {
	defer t.release()
	trace.Stop()
	end := time.Now()
	if t.sched != nil {
		t.sched.After = wallclock.ReadSchedStats()
	}
	t.pw.Close()
	r := <-t.done
	if r.err != nil {
		return nil, r.err
	}
	p := r.res.Profile
	// The profile covers the trace, from its first event to its last:
	// trace.Start and Stop take tens of milliseconds on a loaded machine
	// (a CI run under -race counted two workers 716 ms in a 408 ms
	// window), time no goroutine is in.
	p.TimeNanos, p.DurationNanos = t.start.UnixNano(), end.Sub(t.start).Nanoseconds()
	if span := r.res.Span; span > 0 && span.Nanoseconds() < p.DurationNanos {
		p.DurationNanos = span.Nanoseconds()
	}
	dropOwn(p)
	return &wallWindow{profile: p, result: r.res, start: t.start, end: end}, nil
}

// dropOwn removes the samples of goroutines waiting in this package.
func dropOwn(p *profile.Profile) {
	kept := p.Sample[:0]
	for _, s := range p.Sample {
		own := false
		for _, l := range s.Location {
			for _, ln := range l.Line {
				if ln.Function != nil && strings.HasPrefix(ln.Function.Name, ownFrame) {
					own = true
				}
			}
		}
		if !own {
			kept = append(kept, s)
		}
	}
	p.Sample = kept
}

func isBusy(err error) bool { return errors.Is(err, errTracerBusy) }
