package lab

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/runner"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/wallclock"
	"github.com/perflab/perflab/profiles"
	"github.com/perflab/perflab/profiles/flame"
)

// BenchRoots are the root functions of the goroutines that run a
// benchmark in a test binary (Go 1.26's testing package): run1's, which
// runs b.N=1 and a B.Loop benchmark's whole loop; launch's, which runs
// the b.N loop; and RunParallel's. Their time in the benchmark's own code
// is what a budget splits; the goroutines they start are what they wait
// on, which wallclock's critical path follows into.
var BenchRoots = []string{"testing.(*B).run1.", "testing.(*B).launch", "testing.(*B).RunParallel."}

// benchCallers are the testing package's frames that call the benchmark's
// own code: runN calls the benchmark function, RunParallel's goroutine
// the body.
var benchCallers = map[string]bool{"testing.(*B).runN": true, "testing.(*B).RunParallel.func1": true}

// harnessWaits are the testing package's frames where a benchmark
// goroutine waits for others to run the benchmark: a parent for its
// sub-benchmark (B.Run), RunParallel's caller for its goroutines.
var harnessWaits = map[string]bool{"testing.(*B).Run": true, "testing.(*B).RunParallel": true}

// inBenchmark reports whether a wall-clock sample's stack (leaf first) is
// in the benchmark's own code: under the frame the testing package calls
// it from, and not waiting in B.Run or RunParallel for other goroutines.
// What runN does around the call (runtime.GC before the timer starts,
// ReadMemStats, cleanups) and launch's hand-back are the harness's, not
// timed, and left out.
func inBenchmark(stack []string) bool {
	for k, fn := range stack {
		if harnessWaits[fn] {
			return false
		}
		if benchCallers[fn] {
			if k == 0 {
				return false
			}
			callee := stack[k-1]
			return !strings.HasPrefix(callee, "testing.") && !strings.HasPrefix(callee, "runtime.") &&
				!strings.HasPrefix(callee, "sync.") && !strings.HasPrefix(callee, "[")
		}
	}
	return false
}

// keepBenchmark keeps the samples of the benchmark's own code (see
// inBenchmark) and returns the kept time by state, and whether any of it
// is RunParallel's goroutines'.
func keepBenchmark(p *profile.Profile) (byState map[string]int64, parallel bool) {
	byState = map[string]int64{}
	kept := p.Sample[:0]
	for _, s := range p.Sample {
		stack := profiles.SampleStack(s)
		if inBenchmark(stack) {
			kept = append(kept, s)
			if len(s.Value) > 0 {
				byState[firstLabel(s, "state")] += s.Value[0]
			}
			parallel = parallel || slices.Contains(stack, "testing.(*B).RunParallel.func1")
		}
	}
	p.Sample = kept
	return byState, parallel
}

// maxUntimed is the share of a benchmark goroutine's profiled time that
// may lie outside its timed loop before the budget says so.
const maxUntimed = 0.05

// untimedWarning says when the profile holds much more of the benchmark
// goroutine's time than the testing package timed (ops × its ns/op):
// setup before b.ResetTimer, or sections between b.StopTimer and
// b.StartTimer. Only where the trace shows no timer call to leave them
// out by (see benchtimer.go), and for a benchmark on one goroutine:
// RunParallel's goroutines overlap.
func untimedWarning(byState map[string]int64, parallel bool, ops int64, nsPerOp float64) model.Warning {
	var kept int64
	for _, v := range byState {
		kept += v
	}
	timed := float64(ops) * nsPerOp
	if parallel || kept <= 0 || timed <= 0 {
		return model.Warning{}
	}
	if untimed := 1 - timed/float64(kept); untimed > maxUntimed {
		return model.Warn(model.WarnUntimed, math.Round(100*untimed), fmt.Sprintf("%.0f%% of the benchmark goroutine's profiled time was outside its timed loop (setup before b.ResetTimer, or between b.StopTimer and b.StartTimer), and is in the budget: the budget describes the whole function", 100*untimed))
	}
	return model.Warning{}
}

// minSamples is the number of CPU samples below which the split of a
// budget's running time is said to be rough (about ±50/√n points).
const minSamples = 50

// minSampledShare is the share of the benchmark goroutines' time that
// running must hold before its split by too few samples is worth a word.
const minSampledShare = 0.2

// fewSamples says whether a sizeable part of the budget is running time
// split by fewer than minSamples CPU samples, and how many: the benchmark
// goroutines' own running, split by their samples, or the helpers'
// running their waits were charged to (the critical path), split by the
// helpers' samples. A fan-out's own goroutine runs little; its helpers'
// samples are the ones that matter.
func fewSamples(w *wallclock.Result, byState map[string]int64) (int, bool) {
	var total int64
	for _, v := range byState {
		total += v
	}
	if total <= 0 {
		return 0, false
	}
	if float64(byState["running"])/float64(total) >= minSampledShare && w.CPUSamples < minSamples {
		return w.CPUSamples, true
	}
	if float64(w.HelpedRunning)/float64(total) >= minSampledShare && w.HelperSamples < minSamples {
		return w.HelperSamples, true
	}
	return 0, false
}

func firstLabel(s *profile.Sample, key string) string {
	if v := s.Label[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// profile runs the case once more, for about d, with the execution
// tracer and the CPU profiler on (-test.trace, -test.cpuprofile: the
// CPU samples are then in the trace too), and makes its exact wall-clock
// profile, flame graph and budget from the benchmark goroutines' time.
func (lb *liveBench) profile(ctx context.Context, w *store.Writer, tmp string, d time.Duration) error {
	c, sc := lb.c, lb.sc
	dir, err := os.MkdirTemp(tmp, "prof-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	tracePath, cpuPath := filepath.Join(dir, "trace.out"), filepath.Join(dir, "cpu.pb.gz")
	n := profileN(sc, d)
	start := time.Now()
	// The tracer slows what it traces (a contended mutex ran at 0.8 of
	// untraced): twice the profile's length, and the setup the first
	// repetition's process paid.
	// The kernel's records of the process's context switches, as
	// perflab run keeps of its own: with them a thread's wait for a CPU
	// while its goroutine ran (another program on the core) is sched,
	// not the code it was preempted in. Without (no perf_event_open, or
	// records lost), the budget is made as before.
	var switches *wallclock.SwitchRecorder
	res := runBinaryWith(ctx, c.pkg, exactPattern(c.full), fmt.Sprintf("%dx", n), c.cpu, lb.timeout(2*(d+lb.wall)),
		func(pid int) { switches, _ = wallclock.StartProcessSwitches(pid) },
		"-test.trace="+tracePath, "-test.cpuprofile="+cpuPath)
	elapsed := time.Since(start)
	var sched *wallclock.SchedStats
	var unseen time.Duration
	if switches != nil {
		if pre, err := switches.Stop(); err == nil {
			sched = &wallclock.SchedStats{Preempted: pre, OwnUnknown: switches.OwnUnknown()}
			unseen = switches.Unseen()
		}
	}
	r := findResult(res, c)
	if r == nil && res.timedOut != 0 {
		return fmt.Errorf("the traced run %s", res.timeoutText())
	}
	if r == nil {
		return fmt.Errorf("the traced run failed: %s", firstLineOf(res.errText()))
	}
	sc.Profiles = map[string]string{}
	if cpu, err := os.ReadFile(cpuPath); err == nil {
		rel := store.CaseFile(sc.Name, "cpu.pb.gz")
		if err := w.WriteFile(rel, cpu); err != nil {
			return err
		}
		sc.Profiles["cpu"] = rel
	}
	m := metrics(r)
	windows, timerWarn, err := timedWindows(tracePath, int64(r.Iters), m["ns/op"])
	if err != nil {
		return err
	}
	f, err := os.Open(tracePath)
	if err != nil {
		return fmt.Errorf("execution trace: %w", err)
	}
	defer f.Close()
	wall, err := wallclock.FromTrace(f, wallclock.Options{AllGoroutines: true, Roots: BenchRoots, Rules: lb.rule, Windows: windows, Sched: sched})
	if err != nil {
		return fmt.Errorf("wall-clock profile: %w", err)
	}
	byState, parallel := keepBenchmark(wall.Profile)
	wall.Profile = wall.Profile.Compact()
	wall.Profile.DurationNanos = elapsed.Nanoseconds()
	var buf bytes.Buffer
	if err := wall.Profile.Write(&buf); err != nil {
		return err
	}
	rel := store.CaseFile(sc.Name, "wall.pb.gz")
	if err := w.WriteFile(rel, buf.Bytes()); err != nil {
		return err
	}
	sc.Profiles["wall"] = rel
	sc.Window = benchWindow(wall, byState, int64(r.Iters), m["ns/op"])
	if t := wall.Total(); t > 0 && wall.OSWaitExact && sched != nil {
		// What the recorder did not see: the child's threads before
		// its first scan found them (StartProcess).
		sc.Window.OSUnseen = float64(unseen) / float64(t)
		sc.Window.OSOwnUnknown = sched.OwnUnknown
	}
	// What the benchmark reported of itself (b.ReportMetric) in the
	// window the budget comes from, to check the budget against.
	for unit, v := range m {
		if !goUnits[unit] {
			if sc.Window.Counts == nil {
				sc.Window.Counts = map[string]float64{}
			}
			sc.Window.Counts[unit] = v
		}
	}
	if ns := sc.Stats["ns/op"].Median; ns > 0 && sc.Window.NsPerOp > 0 {
		if drift := sc.Window.NsPerOp/ns - 1; math.Abs(drift) > 0.10 {
			sc.Warnings = append(sc.Warnings, model.Warn(model.WarnWindowDrift, math.Round(100*drift), fmt.Sprintf("the profiling window's time/op was %+.0f%% off the timed median: the budget's shares come from that window, and profiling or the machine changed the behaviour", 100*drift)))
		}
	}
	if timerWarn.Message != "" {
		sc.Warnings = append(sc.Warnings, timerWarn)
	} else if windows == nil {
		if w := untimedWarning(byState, parallel, int64(r.Iters), m["ns/op"]); w.Message != "" {
			sc.Warnings = append(sc.Warnings, w)
		}
	}
	if n, ok := fewSamples(wall, byState); ok {
		sc.Warnings = append(sc.Warnings, model.Warn(model.WarnFewSamples, float64(n), fmt.Sprintf("the split of running time (work, alloc, other…) rests on %d CPU samples (want %d or more): use a longer --profile-time; blocked time is exact", n, minSamples)))
	}
	if ns, ok := sc.Stats["ns/op"]; ok {
		runner.SetBudget(sc, wall.Profile, lb.rule, ns.Median)
		judgeBudget(sc)
	}
	buf.Reset()
	title := fmt.Sprintf("%s %s — wall clock, benchmark goroutines (run %s)", lb.run.Package, c.goName(), lb.run.ID)
	if err := flame.WriteSVG(&buf, wall.Profile, flame.Options{Title: title, SampleType: "wall", Rules: lb.rule}); err != nil {
		return fmt.Errorf("flame graph: %w", err)
	}
	rel = store.CaseFile(sc.Name, "wall.svg")
	if err := w.WriteFile(rel, buf.Bytes()); err != nil {
		return err
	}
	sc.Flame = rel
	return nil
}

// judgeBudget judges a bench case's budget as perflab run judges a
// scenario's: a window whose time/op is off the timed interval (off the
// timed median itself where the tracer's own functions or system calls
// held a part of its time), or a split on too few CPU samples, marks it
// untrusted (? in the table). Bench has no paired slices: no tracer's
// effect, no slices' interval.
// Bench reads the kernel's context-switch records only where they are
// whole (see profile), so none were lost.
func judgeBudget(sc *model.Case) {
	sc.BudgetTrust = runner.Judge(sc, false)
}

// benchWindow summarises the profiling run: its own time/op, as the
// testing package timed it with the tracer on, and the benchmark
// goroutines' time by state.
func benchWindow(w *wallclock.Result, byState map[string]int64, ops int64, nsPerOp float64) *model.Window {
	out := &model.Window{Ops: ops, NsPerOp: nsPerOp, CPUSamples: w.CPUSamples, HelperSamples: w.HelperSamples, Goroutines: w.Goroutines}
	out.Seconds = nsPerOp * float64(ops) / 1e9
	if ops > 0 {
		out.BackgroundGCNsPerOp = float64(w.BackgroundGC.Nanoseconds()) / float64(ops)
	}
	var t int64
	for _, v := range byState {
		t += v
	}
	if t > 0 {
		out.Running = float64(byState["running"]) / float64(t)
		out.HelpedRunning = float64(w.HelpedRunning) / float64(t)
		out.HelpedOSWait = float64(w.HelpedOSWait) / float64(t)
		out.OSWait = float64(w.OSWait) / float64(t)
		out.OSWake = float64(w.OSWake) / float64(t)
		out.OSOwn = float64(w.OSOwn) / float64(t)
		out.OSWaitExact = w.OSWaitExact
		out.Runnable = float64(byState["runnable"]) / float64(t)
		out.Blocked = float64(byState["blocked"]) / float64(t)
		out.Syscall = float64(byState["syscall"]) / float64(t)
	}
	return out
}

// goUnits are the units the testing package reports itself.
var goUnits = map[string]bool{"ns/op": true, "B/op": true, "allocs/op": true, "MB/s": true, "ops/s": true}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
