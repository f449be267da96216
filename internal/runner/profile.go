package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"time"

	"github.com/felixge/fgprof"
	"github.com/google/pprof/profile"
	"github.com/grafana/pyroscope-go/godeltaprof"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/wallclock"
	"github.com/perflab/perflab/profiles"
	"github.com/perflab/perflab/profiles/flame"
)

// Profiling rates. Mutex: one contention event in mutexFraction is recorded
// (the runtime scales values back up); block: events are sampled with
// probability duration/blockRate, all events longer than blockRate kept.
const (
	mutexFraction = 5
	blockRateNs   = 10_000
)

// profile runs the profiling pass: for every measured case, a window of
// ProfileTime with the execution tracer and the CPU profiler on (the exact
// wall-clock profile and the budget come from its trace), then, if asked, a
// window with fgprof, then a window of ProfileTime/2 with the mutex and block
// profilers. It is separate from the timing pass so no profiler overhead is
// in the timed figures.
func (r *Runner) profile(ctx context.Context) error {
	want := map[string]bool{}
	for _, k := range r.Opts.Profile {
		want[k] = true
	}
	if len(want) == 0 {
		return nil
	}
	r.Progress.Phase("profiling", r.live())
	for i, c := range r.cases {
		if c.failed != nil {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := r.profileCase(i, want); errors.Is(err, errAbandoned) {
			r.Run.Cases[i].Warnings = append(r.Run.Cases[i].Warnings, "profiling interrupted: its profiles are not saved")
			return err
		} else if err != nil {
			r.Progress.Warn(fmt.Sprintf("%s: profiling: %v", c.name, firstLine(err.Error())))
			r.Run.Cases[i].Warnings = append(r.Run.Cases[i].Warnings, "profiling: "+err.Error())
			r.lost = append(r.lost, c.name+": "+firstLine(err.Error()))
		}
		if err := r.Save.Checkpoint(); err != nil {
			return err
		}
		r.Progress.Step(c.name)
	}
	return nil
}

func (r *Runner) profileCase(i int, want map[string]bool) error {
	c, sc := r.cases[i], &r.Run.Cases[i]
	sc.Profiles = map[string]string{}
	saveBytes := func(kind string, data []byte) error {
		rel := store.CaseFile(c.name, kind+".pb.gz")
		if err := r.Save.WriteFile(rel, data); err != nil {
			return err
		}
		sc.Profiles[kind] = rel
		return nil
	}
	save := func(kind string, p *profile.Profile) error {
		var buf bytes.Buffer
		if err := p.Write(&buf); err != nil {
			return err
		}
		return saveBytes(kind, buf.Bytes())
	}

	var wall *wallclock.Result
	if want["wall"] || want["cpu"] {
		tw := r.tracedWindow(c, want["wall"])
		if tw.err != nil {
			return tw.err
		}
		if tw.cpuOn && want["cpu"] {
			if err := saveBytes("cpu", tw.cpu.Bytes()); err != nil {
				return err
			}
		}
		if tw.traceOn {
			var err error
			wall, err = wallclock.FromTrace(&tw.trace, wallclock.Options{Region: workerRegion, StartRegion: startRegion, Rules: r.Rules, Sched: tw.sched})
			if err != nil {
				return fmt.Errorf("wall-clock profile: %w", err)
			}
			wall.Profile.DurationNanos = tw.elapsed.Nanoseconds()
			if err := save("wall", wall.Profile); err != nil {
				return err
			}
			sc.Window = window(wall, tw.ops, tw.elapsed, len(c.workers))
			sc.Warnings = append(sc.Warnings, windowWarnings(sc, wall)...)
		}
	}

	if want["fgprof"] {
		var fbuf bytes.Buffer
		stop := fgprof.Start(&fbuf, fgprof.FormatPprof)
		_, _, runErr := r.runFor(c, r.Opts.ProfileTime)
		if err := stop(); err != nil {
			return fmt.Errorf("fgprof profile: %w", err)
		}
		if runErr != nil {
			return runErr
		}
		fg, err := profile.ParseData(fbuf.Bytes())
		if err != nil {
			return fmt.Errorf("fgprof profile: %w", err)
		}
		fg, _ = keepWorkers(fg)
		if err := save("fgprof", fg); err != nil {
			return err
		}
	}

	if want["mutex"] || want["block"] {
		mutex, block, err := r.contention(c, want["mutex"], want["block"])
		if err != nil {
			return err
		}
		if mutex != nil {
			if err := save("mutex", mutex); err != nil {
				return err
			}
		}
		if block != nil {
			block, _ = keepWorkers(block)
			if err := save("block", block); err != nil {
				return err
			}
		}
	}

	if wall != nil {
		// The median, like the table's time/op, so the budget adds up
		// to the figure shown next to it.
		if ns, ok := sc.Stats["ns/op"]; ok {
			sc.Budget = Budget(wall.Profile, r.Rules, ns.Median)
		}
	}
	if wall != nil && !r.NoFlame && r.Rules != nil {
		var buf bytes.Buffer
		title := fmt.Sprintf("%s %s — wall clock, worker goroutines (run %s)", r.Scenario.Name, c.name, r.Run.ID)
		if err := flame.WriteSVG(&buf, wall.Profile, flame.Options{Title: title, SampleType: "wall", Rules: r.Rules}); err != nil {
			return fmt.Errorf("flame graph: %w", err)
		}
		rel := store.CaseFile(c.name, "wall.svg")
		if err := r.Save.WriteFile(rel, buf.Bytes()); err != nil {
			return err
		}
		sc.Flame = rel
	}
	return nil
}

// window summarises the profiling window of a case.
func window(w *wallclock.Result, ops int64, elapsed time.Duration, threads int) *store.Window {
	out := &store.Window{Seconds: elapsed.Seconds(), Ops: ops, CPUSamples: w.CPUSamples, Goroutines: w.Goroutines}
	if ops > 0 {
		out.NsPerOp = float64(elapsed.Nanoseconds()) / float64(ops)
		out.BackgroundGCNsPerOp = float64(w.BackgroundGC.Nanoseconds()) / float64(ops)
	}
	if elapsed > 0 && threads > 0 {
		out.Occupancy = float64(w.Total()) / (float64(threads) * float64(elapsed))
	}
	if t := float64(w.Total()); t > 0 {
		out.Running = float64(w.Time[wallclock.Running]) / t
		out.Runnable = float64(w.Time[wallclock.Runnable]) / t
		out.Blocked = float64(w.Time[wallclock.Blocked]) / t
		out.Syscall = float64(w.Time[wallclock.Syscall]) / t
		out.OSWait = float64(w.OSWait) / t
	}
	return out
}

// maxWindowDrift is how far the profiling window's time/op may stray from
// the timed median before the budget, whose shares come from the window,
// is flagged: issue 9 asks for a word beyond 10%.
const maxWindowDrift = 0.10

// minCPUSamples is the number of the workers' CPU samples below which the
// split of their running time is too coarse to quote: a share p from n
// samples has a standard error of sqrt(p(1−p)/n), at most ±7 points for 50.
// Off-CPU time (lock, wait, sched) is exact and needs no samples.
const minCPUSamples = 50

// minStarvedWait is the share of the workers' time their threads must have
// waited in the kernel's run queue for the starvation warning.
const minStarvedWait = 0.05

// maxWindowOSWait is the share of the workers' time in the profiling window
// their threads may wait in the kernel's run queue before the budget's
// sched is said to be another process's doing.
const maxWindowOSWait = 0.10

// maxStarved is the share of the CPUs a case's workers wanted below which
// the machine is said to have starved it.
const maxStarved = 0.75

// cpusUsed is the CPUs a case used while timed: its CPU time over its wall
// time (cpu-ns/op over ns/op), GC workers included, so it errs high.
func cpusUsed(sc *store.Case) float64 {
	ns, cpu := sc.Stats["ns/op"].Median, sc.Stats["cpu-ns/op"].Median
	if ns <= 0 {
		return 0
	}
	return cpu / ns
}

// cpusWanted is the CPUs a case's workers wanted: the share of their time
// running or runnable (from the window's trace) times their number, at
// most GOMAXPROCS. A lock-bound case blocked most of the time wants few.
func cpusWanted(win *store.Window, threads int) float64 {
	return math.Min(float64(runtime.GOMAXPROCS(0)), float64(threads)*win.Occupancy*(win.Running+win.Runnable))
}

// minOccupancy is the share of threads × window time below which the
// workers' uneven finishing is worth a word.
const minOccupancy = 0.85

func windowWarnings(sc *store.Case, w *wallclock.Result) []string {
	var out []string
	win := sc.Window
	if ns, ok := sc.Stats["ns/op"]; ok && ns.Median > 0 && win.NsPerOp > 0 {
		if d := win.NsPerOp/ns.Median - 1; math.Abs(d) > maxWindowDrift {
			// One figure, so that warningList groups it across cases.
			out = append(out, fmt.Sprintf("the profiling window's time/op was %+.0f%% off the timed median: the budget's shares come from that window, and profiling or the machine changed the behaviour",
				100*d))
		}
	}
	if win.Occupancy > 0 && win.Occupancy < minOccupancy {
		out = append(out, fmt.Sprintf("workers were busy %.0f%% of the profiling window (the rest they had finished or not yet started: uneven finishing, e.g. a lock that favours its holder); the budget splits their busy time",
			100*win.Occupancy))
	}
	// Only when the kernel says the workers' threads waited for a CPU:
	// a lock-bound case's woken waiters want a CPU while they queue for
	// the lock's hand-off, and used fewer for no other process's fault.
	if got, want := cpusUsed(sc), cpusWanted(win, sc.Threads); want >= 0.5 && got > 0 && got < maxStarved*want && win.OSWait >= minStarvedWait {
		out = append(out, fmt.Sprintf("got %.2f CPUs where its workers wanted %.2f (GOMAXPROCS=%d): another process took the cores, so time/op and sched are inflated; compare cpu/op, or use a quieter machine",
			got, want, runtime.GOMAXPROCS(0)))
	} else if win.OSWait >= maxWindowOSWait {
		// The timed rounds had the CPUs they wanted, the window did not:
		// its sched is another process's doing, and the budget applies it
		// to a time/op that did not have it.
		out = append(out, fmt.Sprintf("the kernel kept the workers' threads from a CPU for %.0f%% of their time in the profiling window (another process on the cores), which the budget counts as sched; the timed rounds were not starved like that: rerun on a quieter machine",
			100*win.OSWait))
	}
	if w.Time[wallclock.Running] > 0 && w.CPUSamples < minCPUSamples {
		out = append(out, fmt.Sprintf("the split of running time (work, alloc, other…) rests on %d CPU samples (want %d or more; good to about ±50/√n points): use a longer --profile-time; off-CPU shares are exact",
			w.CPUSamples, minCPUSamples))
	}
	return out
}

// tracedRun is what one traced window recorded.
type tracedRun struct {
	ops            int64
	elapsed        time.Duration
	err            error
	cpu, trace     bytes.Buffer
	cpuOn, traceOn bool
	sched          *wallclock.SchedStats
}

// tracedWindow runs c for ProfileTime with the CPU profiler on and, if
// traced, the execution tracer and the threads' kernel run-queue counters:
// the window the wall-clock profile and the budget come from.
// BenchmarkTracerOverhead times this same function against runFor alone.
func (r *Runner) tracedWindow(c *liveCase, traced bool) *tracedRun {
	tw := &tracedRun{}
	// The CPU profiler runs with the tracer even when no cpu profile is
	// kept: its samples, tagged by goroutine in the trace, split the
	// workers' running time between categories.
	if err := pprof.StartCPUProfile(&tw.cpu); err != nil {
		r.Progress.Warn("cpu profile: " + err.Error())
	} else {
		tw.cpuOn = true
	}
	if traced {
		// Each thread's kernel run-queue wait over the window: time a
		// worker was running to Go while the OS ran something else.
		if before := wallclock.ReadSchedStats(); before != nil {
			tw.sched = &wallclock.SchedStats{Before: before}
		}
		if err := trace.Start(&tw.trace); err != nil {
			r.Progress.Warn("execution trace: " + err.Error())
		} else {
			tw.traceOn = true
		}
	}
	tw.ops, tw.elapsed, tw.err = r.runFor(c, r.Opts.ProfileTime)
	if tw.traceOn {
		trace.Stop()
		if tw.sched != nil {
			if tw.sched.After = wallclock.ReadSchedStats(); tw.sched.After == nil {
				tw.sched = nil
			}
		}
	}
	if tw.cpuOn {
		pprof.StopCPUProfile()
	}
	return tw
}

// runFor runs repetitions of c until d has passed, and returns the
// operations done and the wall time the repetitions took.
func (r *Runner) runFor(c *liveCase, d time.Duration) (int64, time.Duration, error) {
	var ops int64
	var elapsed time.Duration
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		took, err := c.runWorkers(c.n, nil, nil, nil)
		if err != nil {
			return ops, elapsed, err
		}
		ops += int64(c.n) * int64(len(c.workers))
		elapsed += took
	}
	return ops, elapsed, nil
}

// contention captures mutex and block profiles as deltas over one window:
// the runtime's profiles are cumulative since the process started, and
// godeltaprof's profilers write what changed since their previous Profile
// call (the same per-stack delta as pprof.Lookup before and after, compared
// on a real cipher-cache run: identical stacks, counts and delays, once the
// runtime's stack sentinel is dropped; see delta).
func (r *Runner) contention(c *liveCase, mutex, block bool) (m, b *profile.Profile, err error) {
	// Function names as runtime/pprof writes them ("[...]" for type
	// parameters), which the classification rules are written against.
	opts := godeltaprof.ProfileOptions{GenericsFrames: false, LazyMappings: true}
	var mp, bp *godeltaprof.BlockProfiler
	if mutex {
		prev := runtime.SetMutexProfileFraction(mutexFraction)
		defer runtime.SetMutexProfileFraction(prev)
		mp = godeltaprof.NewMutexProfilerWithOptions(opts)
		if err := mp.Profile(io.Discard); err != nil { // the baseline
			return nil, nil, err
		}
	}
	if block {
		runtime.SetBlockProfileRate(blockRateNs)
		defer runtime.SetBlockProfileRate(0)
		bp = godeltaprof.NewBlockProfilerWithOptions(opts)
		if err := bp.Profile(io.Discard); err != nil {
			return nil, nil, err
		}
	}
	start := time.Now()
	if _, _, err := r.runFor(c, r.Opts.ProfileTime/2); err != nil {
		return nil, nil, err
	}
	took := time.Since(start)
	if mutex {
		if m, err = delta(mp, start, took); err != nil {
			return nil, nil, err
		}
	}
	if block {
		if b, err = delta(bp, start, took); err != nil {
			return nil, nil, err
		}
	}
	return m, b, nil
}

// delta returns what p recorded since its previous Profile call, as a
// profile of the window that started at start and lasted d.
//
// godeltaprof v0.1.12 keeps the runtime's sentinel at the head of the
// stacks of runtime-internal locks (runtime.unlock under the scheduler),
// which runtime/pprof drops (logicalStackSentinel): it would be a leaf frame
// with no name at address 0xfffffffffffffffe, so it is dropped here.
func delta(p *godeltaprof.BlockProfiler, start time.Time, d time.Duration) (*profile.Profile, error) {
	var buf bytes.Buffer
	if err := p.Profile(&buf); err != nil {
		return nil, err
	}
	out, err := profile.ParseData(buf.Bytes())
	if err != nil {
		return nil, err
	}
	for _, s := range out.Sample {
		for len(s.Location) > 0 {
			l := s.Location[0]
			if l.Address < 0xfffffffffffffffe || len(l.Line) > 0 && l.Line[0].Function != nil && l.Line[0].Function.Name != "" {
				break
			}
			s.Location = s.Location[1:]
		}
	}
	out = out.Compact()
	out.TimeNanos, out.DurationNanos = start.UnixNano(), d.Nanoseconds()
	return out, nil
}

// stack returns a sample's function names, leaf first, inlined frames
// included.
func stack(s *profile.Sample) []string {
	var out []string
	for _, loc := range s.Location {
		for _, ln := range loc.Line {
			if ln.Function != nil {
				out = append(out, ln.Function.Name)
			}
		}
	}
	return out
}

// keepWorkers keeps the samples of scenario worker goroutines doing the
// scenario's work. fgprof and the block profile see every goroutine —
// the harness's waits, the profiler's own ticker, the progress printer —
// which would otherwise be 30–50% of a budget. A worker parked on the start
// channel (a runtime frame right under workerLoop) is harness time too.
//
// It also returns how many samples were dropped because their stack was
// cut before its root (fgprof keeps 32 frames), so whether they were
// workers cannot be told.
func keepWorkers(p *profile.Profile) (*profile.Profile, int) {
	kept := p.Sample[:0]
	truncated := 0
	for _, s := range p.Sample {
		st := stack(s)
		found := false
		for k, fn := range st {
			if fn != workerFrame {
				continue
			}
			found = true
			if k > 0 && !strings.HasPrefix(st[k-1], "runtime.") && !strings.HasPrefix(st[k-1], "sync.") {
				kept = append(kept, s)
			}
			break
		}
		if !found && len(s.Location) >= 32 && (len(st) == 0 || st[len(st)-1] != "runtime.goexit") {
			truncated++
		}
	}
	p.Sample = kept
	return p.Compact(), truncated
}

// Budget splits nsPerOp into categories in the proportions of the
// wall-clock profile from the execution trace (see internal/wallclock):
// every worker goroutine's time, exactly, by state — blocked and runnable
// time at the stack and category where it stopped, running time at its own
// CPU samples' stacks — classified by rules. Background GC is in no worker's
// time, so it is not in the budget (store.Window has it per op).
func Budget(wall *profile.Profile, rules *profiles.Rules, nsPerOp float64) map[string]float64 {
	if wall == nil || nsPerOp <= 0 || rules == nil {
		return nil
	}
	idx, err := profiles.SampleIndex(wall, "wall")
	if err != nil {
		return nil
	}
	by, total := profiles.Breakdown(wall, idx, rules)
	if total <= 0 {
		return nil
	}
	out := map[string]float64{}
	for cat, v := range by {
		if v > 0 {
			out[string(cat)] = nsPerOp * float64(v) / float64(total)
		}
	}
	return out
}
