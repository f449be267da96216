package runner

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/felixge/fgprof"
	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/internal/store"
)

// Profiling rates. Mutex: one contention event in mutexFraction is recorded
// (the runtime scales values back up); block: events are sampled with
// probability duration/blockRate, all events longer than blockRate kept.
const (
	mutexFraction = 5
	blockRateNs   = 10_000
)

// profile runs the profiling pass: for every measured case, a window of
// ProfileTime with the wall-clock (fgprof) and CPU profilers, then a window
// of ProfileTime/2 with the mutex and block profilers. It is separate from the timing
// pass so no profiler overhead is in the timed figures.
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
		if err := r.profileCase(i, want); err != nil {
			r.Progress.Warn(fmt.Sprintf("%s: profiling: %v", c.name, firstLine(err.Error())))
			r.Run.Cases[i].Warnings = append(r.Run.Cases[i].Warnings, "profiling: "+err.Error())
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
	dir := "cases/" + store.Slug(c.name) + "/"
	sc.Profiles = map[string]string{}
	save := func(kind string, p *profile.Profile) error {
		var buf bytes.Buffer
		if err := p.Write(&buf); err != nil {
			return err
		}
		rel := dir + kind + ".pb.gz"
		if err := r.Save.WriteFile(rel, buf.Bytes()); err != nil {
			return err
		}
		sc.Profiles[kind] = rel
		return nil
	}

	var wall, cpu *profile.Profile
	if want["wall"] || want["cpu"] {
		var wbuf, cbuf bytes.Buffer
		var stopWall func() error
		if want["wall"] {
			stopWall = fgprof.Start(&wbuf, fgprof.FormatPprof)
		}
		cpuOn := false
		if want["cpu"] {
			if err := pprof.StartCPUProfile(&cbuf); err != nil {
				r.Progress.Warn("cpu profile: " + err.Error())
			} else {
				cpuOn = true
			}
		}
		runErr := r.runFor(c, r.Opts.ProfileTime)
		if cpuOn {
			pprof.StopCPUProfile()
		}
		if stopWall != nil {
			if err := stopWall(); err != nil {
				return fmt.Errorf("wall-clock profile: %w", err)
			}
		}
		if runErr != nil {
			return runErr
		}
		var err error
		if stopWall != nil {
			if wall, err = profile.ParseData(wbuf.Bytes()); err != nil {
				return fmt.Errorf("wall-clock profile: %w", err)
			}
			var truncated int
			wall, truncated = keepWorkers(wall)
			if err := save("wall", wall); err != nil {
				return err
			}
			sc.Warnings = append(sc.Warnings, sampleWarnings(wall, truncated)...)
		}
		if cpuOn {
			if cpu, err = profile.ParseData(cbuf.Bytes()); err != nil {
				return fmt.Errorf("cpu profile: %w", err)
			}
			if err := save("cpu", cpu); err != nil {
				return err
			}
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

	if wall != nil && r.Classify != nil {
		// The median, like the table's time/op, so the budget adds up
		// to the figure shown next to it.
		if ns, ok := sc.Stats["ns/op"]; ok {
			sc.Budget = Budget(wall, cpu, c.name, r.Classify, ns.Median, sc.Stats["cpu-ns/op"].Median, c.spec.Threads)
		}
	}
	if wall != nil && r.WriteFlame != nil {
		var buf bytes.Buffer
		if err := wall.Write(&buf); err == nil {
			svg, err := r.WriteFlame(sc, buf.Bytes())
			if err != nil {
				return fmt.Errorf("flame graph: %w", err)
			}
			rel := dir + "wall.svg"
			if err := r.Save.WriteFile(rel, svg); err != nil {
				return err
			}
			sc.Flame = rel
		}
	}
	return nil
}

// runFor runs repetitions of c until d has passed.
func (r *Runner) runFor(c *liveCase, d time.Duration) error {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		if _, err := c.runWorkers(c.n, nil, nil, nil); err != nil {
			return err
		}
	}
	return nil
}

// contention captures mutex and block profiles as deltas over one window:
// the runtime's profiles are cumulative since the process started.
func (r *Runner) contention(c *liveCase, mutex, block bool) (m, b *profile.Profile, err error) {
	snap := func(name string) (*profile.Profile, error) {
		var buf bytes.Buffer
		if err := pprof.Lookup(name).WriteTo(&buf, 0); err != nil {
			return nil, err
		}
		return profile.ParseData(buf.Bytes())
	}
	var m0, b0 *profile.Profile
	if mutex {
		prev := runtime.SetMutexProfileFraction(mutexFraction)
		defer runtime.SetMutexProfileFraction(prev)
		if m0, err = snap("mutex"); err != nil {
			return nil, nil, err
		}
	}
	if block {
		runtime.SetBlockProfileRate(blockRateNs)
		defer runtime.SetBlockProfileRate(0)
		if b0, err = snap("block"); err != nil {
			return nil, nil, err
		}
	}
	if err := r.runFor(c, r.Opts.ProfileTime/2); err != nil {
		return nil, nil, err
	}
	if mutex {
		m1, err := snap("mutex")
		if err != nil {
			return nil, nil, err
		}
		if m, err = delta(m0, m1); err != nil {
			return nil, nil, err
		}
	}
	if block {
		b1, err := snap("block")
		if err != nil {
			return nil, nil, err
		}
		if b, err = delta(b0, b1); err != nil {
			return nil, nil, err
		}
	}
	return m, b, nil
}

// delta returns after − before, dropping stacks that did not change.
func delta(before, after *profile.Profile) (*profile.Profile, error) {
	if len(before.Sample) == 0 {
		return after, nil
	}
	neg := before.Copy()
	neg.Scale(-1)
	d, err := profile.Merge([]*profile.Profile{after, neg})
	if err != nil {
		return nil, err
	}
	d = d.Compact()
	kept := d.Sample[:0]
	for _, s := range d.Sample {
		if len(s.Value) > 0 && s.Value[0] > 0 {
			kept = append(kept, s)
		}
	}
	d.Sample = kept
	d.TimeNanos, d.DurationNanos = after.TimeNanos, after.TimeNanos-before.TimeNanos
	return d, nil
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

// minBudgetSamples is the number of worker samples below which a budget's
// shares are too coarse to quote. A share p from n samples has a standard
// error of sqrt(p(1−p)/n): at most ±7 points for 50 samples, which fgprof
// (99 Hz) collects from one goroutine in half a second. The default 1 s
// window gives about 90 after the harness's own samples are dropped.
const minBudgetSamples = 50

// sampleWarnings says when a wall profile is too thin, or lost samples to
// truncated stacks, for its budget to be trusted.
func sampleWarnings(wall *profile.Profile, truncated int) []string {
	var n int64
	for _, s := range wall.Sample {
		n += s.Value[0]
	}
	var out []string
	if n < minBudgetSamples {
		out = append(out, fmt.Sprintf("budget rests on %d wall-clock samples (want %d or more; a share from n samples is good to about ±50/√n points): use a longer --profile-time", n, minBudgetSamples))
	}
	if truncated > 0 && float64(truncated) > 0.05*float64(n) {
		out = append(out, fmt.Sprintf("%d wall-clock samples had stacks deeper than the profiler keeps and were left out of the budget", truncated))
	}
	return out
}

// parked reports whether a wall-clock stack (leaf first) is a goroutine
// parked off the CPU: fgprof shows such a goroutine in runtime.gopark.
func parked(stack []string) bool {
	return len(stack) > 0 && (stack[0] == "runtime.gopark" || stack[0] == "runtime.goparkunlock")
}

// Budget splits nsPerOp into categories. Each profile is used for what it
// sees well:
//
//   - The wall-clock profile (worker goroutines only) gives the share of
//     goroutine time parked off the CPU, by category: waiting for a lock,
//     a channel, a sleep.
//   - The timing pass's robust figures give the share off the CPU in all:
//     workers spend nsPerOp×threads of goroutine time per operation and the
//     process spent cpuPerOp of CPU, so 1 − cpuPerOp/(nsPerOp×threads).
//     What of it is not parked was spent runnable without a CPU: sched.
//   - The rest was on a CPU. The CPU profile (samples labelled with this
//     case) splits it between work, lock spinning, alloc, gc and other. A
//     wall-clock profile cannot: fgprof only sees a goroutine at a safe
//     point, so time inside assembly (SHA-256, AES, MD5 blocks) is charged
//     to the Go function after it. Without a CPU profile the wall profile's
//     own running stacks are used.
//
// CPU used by GC background workers counts as the process's CPU, so the
// sched estimate errs low, never high.
func Budget(wall, cpu *profile.Profile, caseName string, classify func([]string) string, nsPerOp, cpuPerOp float64, threads int) map[string]float64 {
	if wall == nil || nsPerOp <= 0 {
		return nil
	}
	parkedBy, runningBy := map[string]float64{}, map[string]float64{}
	var total float64
	idx := sampleIndex(wall, "nanoseconds")
	if idx < 0 {
		return nil
	}
	for _, s := range wall.Sample {
		st := stack(s)
		v := float64(s.Value[idx])
		total += v
		if parked(st) {
			parkedBy[classify(st)] += v
		} else {
			runningBy[classify(st)] += v
		}
	}
	if total == 0 {
		return nil
	}
	share := map[string]float64{}
	var parkedShare float64
	for cat, v := range parkedBy {
		share[cat] += v / total
		parkedShare += v / total
	}
	run := 1 - parkedShare
	if cpuPerOp > 0 && threads > 0 {
		off := 1 - cpuPerOp/(nsPerOp*float64(threads))
		if extra := off - parkedShare; extra > 0 {
			extra = math.Min(extra, run)
			share["sched"] += extra
			run -= extra
		}
	}
	onCPU := runningBy
	if cpu != nil {
		if byCase := byCategory(cpu, "nanoseconds", caseName, classify); sum(byCase) > 0 {
			onCPU = byCase
		}
	}
	if t := sum(onCPU); t > 0 {
		for cat, v := range onCPU {
			share[cat] += run * v / t
		}
	} else {
		share["other"] += run
	}
	out := map[string]float64{}
	for cat, v := range share {
		if v > 0 {
			out[cat] = nsPerOp * v
		}
	}
	return out
}

func sum(m map[string]float64) float64 {
	var t float64
	for _, v := range m {
		t += v
	}
	return t
}

func sampleIndex(p *profile.Profile, unit string) int {
	for i, st := range p.SampleType {
		if st.Unit == unit {
			return i
		}
	}
	return -1
}

// byCategory sums the sample values of unit (the first sample type in that
// unit) per category; with caseName set, only samples labelled with that
// case count (the CPU profile also sees the profiler and the harness).
func byCategory(p *profile.Profile, unit, caseName string, classify func([]string) string) map[string]float64 {
	out := map[string]float64{}
	idx := sampleIndex(p, unit)
	if idx < 0 {
		return out
	}
	for _, s := range p.Sample {
		if caseName != "" {
			if l := s.Label["case"]; len(l) != 1 || l[0] != caseName {
				continue
			}
		}
		out[classify(stack(s))] += float64(s.Value[idx])
	}
	return out
}
