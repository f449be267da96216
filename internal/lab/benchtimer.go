package lab

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/wallclock"
	"golang.org/x/exp/trace"
)

// The benchmark's timer in the execution trace (issue 23).
//
// A budget must describe what the testing package timed: setup before
// b.ResetTimer and sections between b.StopTimer and b.StartTimer are in
// the benchmark goroutine's time but not in its ns/op. The trace marks
// them exactly. Every change of the timer reads the memory statistics
// (testing's StartTimer, StopTimer, and ResetTimer while the timer runs,
// call runtime.ReadMemStats for the allocation counts), which stops the
// world; the tracer records each stop as a "stop-the-world (read mem
// stats)" range whose start carries the caller's stack: ReadMemStats,
// then testing.(*B).StartTimer, StopTimer or ResetTimer, then who called
// it (runN around the benchmark function, B.Loop's first and last call,
// or the benchmark itself). Go 1.26, measured on a trace of a benchmark
// with setup before ResetTimer and a StopTimer section every 100 ops:
// every call was there, at its goroutine, in order.
//
// The timer runs from the end of a StartTimer's stop (testing reads the
// clock just after) to the start of a StopTimer's (it read the clock just
// before); a ResetTimer while it runs drops what was timed so far in that
// runN and starts again at the end of its stop. The windows kept are
// those of the last runN that timed the benchmark itself, the one whose
// ns/op testing printed: a runN that encloses another is a parent's, for
// its sub-benchmark (B.Run), and the b.N=1 run before the last (run1) is
// not in the result either.
//
// The alternative measured against it: profiling each benchmark at two
// b.N (N and 2N) and taking the difference of the categories' times. It
// removes setup paid once per runN but not per-op StopTimer sections, and
// it doubles the profiling. On the fixture, three times each at a load of
// 8–13 on 2 cores: BenchmarkSetup (100 ms of sleep before ResetTimer)
// read work 101, 78 and 101% by the difference (wait −3.5, 18, −0.5%),
// 97, 100 and 97% by the windows; BenchmarkUntimed (sleeps between
// StopTimer and StartTimer every 32 ops; its own timing says 99.5% work)
// read work 29, 24 and 33% by the difference, 99.8–100% by the windows.
//
// What the trace cannot show: a ResetTimer while the timer is stopped
// reads no statistics, so it leaves no event; testing then drops what it
// had timed before, and the windows hold it. checkTimed compares the
// windows with testing's own figure and, where they differ, keeps the
// windows that add up to it, or says so.

// timerCall is one change of a benchmark's timer in the trace.
type timerCall struct {
	g        trace.GoID
	fn       string     // "StartTimer", "StopTimer" or "ResetTimer"
	byRunN   bool       // called by testing.(*B).runN itself
	from, to trace.Time // the stop of the world it made
}

// runTimed is what one runN timed: its windows, in order.
type runTimed struct {
	g        trace.GoID
	from, to trace.Time // the runN's own first and last timer calls
	windows  []wallclock.Window
}

// timedRuns reads the runNs of a test binary's trace and the windows
// each timed, in the order they began.
func timedRuns(r io.Reader) ([]runTimed, error) {
	tr, err := trace.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("reading trace: %w", err)
	}
	begun := map[trace.GoID]*timerCall{} // a stop of the world begun, by goroutine
	type state struct {
		cur   int // index in out of the goroutine's runN, -1 before the first
		on    bool
		start trace.Time
	}
	gs := map[trace.GoID]*state{}
	var out []runTimed
	for {
		ev, err := tr.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading trace: %w", err)
		}
		k := ev.Kind()
		if k != trace.EventRangeBegin && k != trace.EventRangeEnd || ev.Range().Name != "stop-the-world (read mem stats)" {
			continue
		}
		g := ev.Goroutine()
		if k == trace.EventRangeBegin {
			if c := timerCaller(ev.Stack()); c != nil {
				c.g, c.from = g, ev.Time()
				begun[g] = c
			}
			continue
		}
		c := begun[g]
		if c == nil {
			continue
		}
		delete(begun, g)
		c.to = ev.Time()
		st := gs[g]
		if st == nil {
			st = &state{cur: -1}
			gs[g] = st
		}
		if c.fn == "StartTimer" && c.byRunN {
			out = append(out, runTimed{g: g, from: c.from, to: c.to})
			st.cur, st.on = len(out)-1, false
		}
		if st.cur < 0 {
			continue // a call before the trace saw its runN begin
		}
		run := &out[st.cur]
		// A runN that ends with the timer stopped (a B.Loop benchmark,
		// or one that stops it for its cleanup) stops the world no more
		// at its end: it ends, for enclosing, at its last timer call.
		run.to = c.to
		switch c.fn {
		case "StartTimer":
			st.on, st.start = true, c.to
		case "ResetTimer":
			// Only while the timer runs does it stop the world.
			run.windows = nil
			st.on, st.start = true, c.to
		case "StopTimer":
			if st.on && c.from > st.start {
				run.windows = append(run.windows, wallclock.Window{From: st.start, To: c.from})
			}
			st.on = false
		}
	}
	return out, nil
}

// timerCaller returns the timer call a stop of the world's stack (leaf
// first) was made by, or nil for any other.
func timerCaller(s trace.Stack) *timerCall {
	var c *timerCall
	for f := range s.Frames() {
		if c != nil {
			c.byRunN = f.Func == "testing.(*B).runN"
			return c
		}
		switch f.Func {
		case "testing.(*B).StartTimer", "testing.(*B).StopTimer", "testing.(*B).ResetTimer":
			c = &timerCall{fn: strings.TrimPrefix(f.Func, "testing.(*B).")}
		}
	}
	return c
}

// lastLeaf returns the runN whose result testing printed: the last to
// end of those that enclose no other (a parent's runN encloses its
// sub-benchmark's), or nil.
func lastLeaf(runs []runTimed) *runTimed {
	var last *runTimed
	for i := range runs {
		r := &runs[i]
		leaf := true
		for j := range runs {
			o := &runs[j]
			if j != i && o.from >= r.from && o.to <= r.to {
				leaf = false
				break
			}
		}
		if leaf && (last == nil || r.to > last.to) {
			last = r
		}
	}
	return last
}

// timedTolerance is how far the windows' sum may be from testing's own
// timed duration: the clock reads sit a few hundred nanoseconds from the
// stops' events, per timer call.
func timedTolerance(timed time.Duration, calls int) time.Duration {
	return max(timed/50, time.Duration(calls)*2*time.Microsecond)
}

func windowsSum(ws []wallclock.Window) time.Duration {
	var d time.Duration
	for _, w := range ws {
		d += w.To.Sub(w.From)
	}
	return d
}

// checkTimed returns the windows of run that add up to what testing
// timed (ops × its ns/op): all of them, or, where a ResetTimer with the
// timer stopped dropped the first ones (it leaves no event), the last
// ones that do. Where none do, it returns all of them and a warning.
func checkTimed(run *runTimed, ops int64, nsPerOp float64) ([]wallclock.Window, model.Warning) {
	timed := time.Duration(float64(ops) * nsPerOp)
	tol := timedTolerance(timed, len(run.windows))
	if d := windowsSum(run.windows); absDur(d-timed) <= tol || timed <= 0 {
		return run.windows, model.Warning{}
	}
	var sum time.Duration
	for i := len(run.windows) - 1; i >= 0; i-- {
		sum += run.windows[i].To.Sub(run.windows[i].From)
		if absDur(sum-timed) <= tol {
			return run.windows[i:], model.Warning{}
		}
		if sum > timed+tol {
			break
		}
	}
	all := windowsSum(run.windows)
	off := 100 * (float64(all)/float64(timed) - 1)
	return run.windows, model.Warn(model.WarnUntimed, math.Round(off), fmt.Sprintf(
		"the timer calls in the trace time %v where the testing package timed %v (%+.0f%%): the budget may hold time outside the timed loop or miss some of it", all.Round(time.Microsecond), timed.Round(time.Microsecond), off))
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// timedWindows returns the windows of the trace at path in which the
// benchmark's timer ran, in the runN testing reported ops and ns/op of
// (see checkTimed); nil, for the whole trace, where the trace shows no
// timer call (a testing package that times otherwise).
func timedWindows(path string, ops int64, nsPerOp float64) ([]wallclock.Window, model.Warning, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, model.Warning{}, fmt.Errorf("execution trace: %w", err)
	}
	defer f.Close()
	runs, err := timedRuns(f)
	if err != nil {
		return nil, model.Warning{}, fmt.Errorf("execution trace: %w", err)
	}
	run := lastLeaf(runs)
	if run == nil || len(run.windows) == 0 {
		return nil, model.Warning{}, nil
	}
	ws, warn := checkTimed(run, ops, nsPerOp)
	return ws, warn, nil
}
