package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/wallclock"
	"github.com/perflab/perflab/profiles"
)

// Where the budget's execution trace is taken (Options.Trace).
//
// One window per case after all rounds (TraceWindow) is another execution
// whenever the machine or the case's regime changes between them: beside
// other test suites the window's time/op was −57% to +157% off the timed
// median in 6–8 of 12 cases of an outside suite (issue 22), and the
// window's shares were applied to the timed median. Traced slices
// (TraceSlices) are traced repetitions as long as the timed ones, in six
// or more of the rounds (one per case per round at most),
// next to that round's timed repetition, in the same shuffled order: they
// see the machine, the regime and the warm-up the timed repetitions saw,
// and pairing each with its round's timed repetition measures what the
// tracer itself costs the case.
const (
	TraceSlices = "slices"
	TraceWindow = "window"
)

// slice is what one traced slice of a case recorded.
type slice struct {
	round   int
	ops     int64
	elapsed time.Duration
	// wall is the slice's wall-clock result; nil when the tracer could
	// not run (only a CPU profile then).
	wall     *wallclock.Result
	cpu      []byte
	gcCycles uint64
	// counts are the scenario's counters over the slice (after − before).
	counts        map[string]int64
	others, steal *float64
	unseen        time.Duration
	ownUnknown    bool
	switchErr     error
	// wallErr is why the slice's trace could not be read, if it could not.
	wallErr error
}

// sliced reports whether the run takes its trace in slices: Trace is
// TraceSlices and a wall or cpu profile is wanted.
func (r *Runner) sliced() bool { return r.Opts.sliced() }

func (o *Options) sliced() bool {
	if o.Trace != TraceSlices {
		return false
	}
	return slices.Contains(o.Profile, "wall") || slices.Contains(o.Profile, "cpu")
}

// sliceCount is how many traced slices a case gets: enough for the tracer's
// paired effect to have an interval (MinIntervalReps) and to cover
// ProfileTime at the timed repetitions' length, at most one a round.
func (r *Runner) sliceCount() int { return r.Opts.sliceCount() }

func (o *Options) sliceCount() int {
	if o.Time <= 0 {
		return o.Count
	}
	cover := int(math.Ceil(float64(o.ProfileTime) / float64(o.Time)))
	return min(o.Count, max(MinIntervalReps, cover))
}

// sliceAt says whether round has a traced slice, and whether it goes
// before the timed repetition (else after). The sliceCount() slices are
// spread over the Count rounds evenly, the first round the one left out
// first (it follows the warm-up); rounds --until adds have none. They
// alternate after, before, after… so that neither side is always the
// one that follows another case.
func (r *Runner) sliceAt(round int) (slice, before bool) {
	if !r.sliced() || round >= r.Opts.Count {
		return false, false
	}
	k, n := r.sliceCount(), r.Opts.Count
	j := round * k / n // slices in the rounds before this one
	if (round+1)*k/n == j {
		return false, false
	}
	return true, j%2 == 1
}

// slicesAt says on which sides of case i's timed repetition in round a
// traced slice goes: the even spread's (sliceAt), and an extra one on the
// other side (extraSlice) for a case whose CPU samples are few.
func (r *Runner) slicesAt(i, round int) (before, after bool) {
	planned, b := r.sliceAt(round)
	extra := r.extraSlice(i, round)
	switch {
	case planned:
		return b || extra, !b || extra
	case extra:
		return round%2 == 1, round%2 == 0
	}
	return false, false
}

// extraSlice says whether case i gets a traced slice in round beyond the
// even spread's. It does where more samples can bring its budget under
// the mark for a wide split (maxShareErr) and the spread's would not:
// the widest share's ±,
// from the slices so far with their samples scaled to the slices there
// will be, is above maxShareErr at the spread's count and within it if
// every round left gets an extra one. At one goroutine a slice as long as
// a 200 ms repetition held about 20 CPU samples at runtime/pprof's
// 100 Hz, and the spread's six split cipher-cache's running time to ±3
// to ±12 points (issue 22), hence CPUProfileHz; the ± narrows only as
// the square root of the samples, so a case far above the mark would take many seconds more
// to clear it, and is marked instead. At most one extra slice a round,
// none before a first slice has said how wide the split is, none where
// the budget has no wall-clock profile to split.
func (r *Runner) extraSlice(i, round int) bool {
	if !r.sliced() || round >= r.Opts.Count || r.Rules == nil || !slices.Contains(r.Opts.Profile, "wall") {
		return false
	}
	var traced []*slice
	for _, s := range r.slices[i] {
		if s.wall != nil {
			traced = append(traced, s)
		}
	}
	if len(traced) == 0 {
		return false
	}
	k, n := r.sliceCount(), r.Opts.Count
	spread := len(traced) + k - round*k/n // the spread's slices in this round and after
	most := spread + n - round            // and an extra one in every round left
	w, err := mergeSlices(traced)
	if err != nil {
		return false
	}
	return slicesErr(w, r.Rules, float64(spread)/float64(len(traced))) > maxShareErr &&
		slicesErr(w, r.Rules, float64(most)/float64(len(traced))) <= maxShareErr
}

// slicesErr is the widest share's half-width (BudgetErr) in the budget of
// the merged slices w, were their CPU samples scale times as many. It is
// the budget SetBudget makes, the tracer's own time left out: judged on
// the whole profile, a fan-out's extra slices were planned for a split
// the stored budget does not have.
func slicesErr(w *wallclock.Result, rules *profiles.Rules, scale float64) float64 {
	const perOp = 1 // the budget in shares
	n := int(math.Round(scale * float64(w.CPUSamples)))
	nh := int(math.Round(scale * float64(w.HelperSamples)))
	sc := &model.Case{Window: &model.Window{CPUSamples: n, HelperSamples: nh}}
	SetBudget(sc, w.Profile, rules, perOp)
	return widestErr(sc.Budget, sc.BudgetErr)
}

// sliceOps is the operations per worker of one traced slice: the timed
// repetitions' own, so that the pair compares like with like, or more
// when the slices must be longer to cover ProfileTime (a --profile-time
// above --count × --time).
//
// A slice half as long as its timed repetition ran faster per operation
// under load: at a load of 10–12 on the 2-core VM, cipher-cache at 128
// keys, twelve cases, ten rounds, the median slice/repetition ratio was
// 0.93 for 100 ms slices beside 200 ms repetitions, and 1.01 beside
// 100 ms ones (120 pairs each).
func (r *Runner) sliceOps(c *liveCase) int {
	k := r.sliceCount()
	if k <= 0 || r.Opts.Time <= 0 {
		return c.n
	}
	need := float64(c.n) * float64(r.Opts.ProfileTime) / (float64(k) * float64(r.Opts.Time))
	return max(c.n, int(math.Round(need)))
}

// traceSlice runs one traced slice of case i in round: its workers for
// sliceOps operations each under the tracer and the CPU profiler, the
// trace read at once into a wall-clock result (outside any timed region)
// and the file removed. A failure of the case fails it as a repetition's
// would; the run's interruption is returned.
func (r *Runner) traceSlice(ctx context.Context, i, round int) error {
	c := r.cases[i]
	if c.failed != nil {
		return nil
	}
	wall := slices.Contains(r.Opts.Profile, "wall")
	counts0 := c.lc.Counts()
	m := r.sliceOps(c)
	tw := r.traced(c, wall, func(msg string) { c.sliceWarn(model.Warn(model.WarnProfiling, 0, msg)) }, func() (int64, time.Duration, error) {
		d, err := c.runWorkers(m, nil, nil, nil)
		return int64(m) * int64(c.lc.Threads()), d, err
	})
	defer tw.close()
	if err := tw.err; err != nil {
		switch {
		case errors.Is(err, errAbandoned):
			c.sliceWarn(model.Warn(model.WarnAbandoned, 0, "a traced slice was abandoned when the run was interrupted: not counted"))
			return err
		case ctx.Err() != nil:
			return ctx.Err()
		}
		r.fail(i, err)
		return nil
	}
	s := &slice{round: round, ops: tw.ops, elapsed: tw.elapsed, gcCycles: tw.gcCycles, others: tw.others, steal: tw.steal,
		unseen: tw.unseen, ownUnknown: tw.ownUnknown, switchErr: tw.switchErr}
	if counts := c.lc.Counts(); len(counts) > 0 {
		s.counts = map[string]int64{}
		for k, v := range counts {
			s.counts[k] = v - counts0[k]
		}
	}
	if tw.cpuOn {
		s.cpu = append([]byte(nil), tw.cpu.Bytes()...)
	}
	if tw.traceOn {
		tr, err := tw.traceReader()
		if err == nil {
			s.wall, err = wallclock.FromTrace(tr, wallclock.Options{Region: workerRegion, StartRegion: startRegion, Rules: r.Rules, Sched: tw.sched})
		}
		if err != nil {
			s.wall, s.wallErr = nil, err
			c.sliceWarn(model.Warn(model.WarnProfiling, 0, "wall-clock profile of a traced slice: "+err.Error()))
		}
	}
	r.slices[i] = append(r.slices[i], s)
	return nil
}

// sliceWarn keeps a warning of c's traced slices, once however many
// slices give it; the profiling pass adds them to the case (a round's
// summary rewrites its warnings).
func (c *liveCase) sliceWarn(w model.Warning) {
	if !slices.Contains(c.sliceWarnings, w) {
		c.sliceWarnings = append(c.sliceWarnings, w)
	}
}

// fromSlices makes case i's wall and cpu profiles and its window from its
// traced slices: the slices' profiles merged, their figures added up.
// It returns the merged wall-clock result (nil without one).
func (r *Runner) fromSlices(i int, want map[string]bool, save func(string, *profile.Profile) error) (*wallclock.Result, error) {
	c, sc := r.cases[i], &r.Run.Cases[i]
	sc.Warnings = append(sc.Warnings, c.sliceWarnings...)
	ss := r.slices[i]
	if len(ss) == 0 {
		return nil, errors.New("no traced slice was taken")
	}
	if want["cpu"] {
		var ps []*profile.Profile
		for _, s := range ss {
			if len(s.cpu) == 0 {
				continue
			}
			p, err := profile.ParseData(s.cpu)
			if err != nil {
				return nil, fmt.Errorf("cpu profile of a traced slice: %w", err)
			}
			ps = append(ps, p)
		}
		if len(ps) > 0 {
			p, err := profile.Merge(ps)
			if err != nil {
				return nil, fmt.Errorf("merging the traced slices' cpu profiles: %w", err)
			}
			if err := save("cpu", p); err != nil {
				return nil, err
			}
		}
	}
	if !want["wall"] {
		return nil, nil
	}
	traced := make([]*slice, 0, len(ss))
	var wallErr error
	for _, s := range ss {
		if s.wall != nil {
			traced = append(traced, s)
		}
		if wallErr == nil {
			wallErr = s.wallErr
		}
	}
	if len(traced) == 0 {
		if wallErr != nil {
			return nil, fmt.Errorf("wall-clock profile: %w", wallErr)
		}
		// The tracer could not start (another trace was running): no
		// budget, as with a window, and the warnings say why.
		return nil, nil
	}
	tracedStat, tracer := pairSlices(r.reps[i], traced)
	wall, err := mergeSlices(traced)
	if err != nil {
		return nil, err
	}
	if err := save("wall", wall.Profile); err != nil {
		return nil, err
	}
	var ops int64
	var elapsed time.Duration
	var gcCycles uint64
	var unseen time.Duration
	ownUnknown := false
	counts := map[string]int64{}
	for _, s := range traced {
		ops += s.ops
		elapsed += s.elapsed
		gcCycles += s.gcCycles
		unseen += s.unseen
		ownUnknown = ownUnknown || s.ownUnknown
		for k, v := range s.counts {
			counts[k] += v
		}
	}
	sc.Window = window(wall, ops, elapsed, c.lc.Threads())
	sc.Window.Source, sc.Window.Slices = TraceSlices, len(traced)
	sc.Window.OtherCPUs = weighted(traced, func(s *slice) *float64 { return s.others })
	sc.Window.Steal = weighted(traced, func(s *slice) *float64 { return s.steal })
	if t := wall.Total(); t > 0 && wall.OSWaitExact {
		sc.Window.OSUnseen = float64(unseen) / float64(t)
		sc.Window.OSOwnUnknown = ownUnknown
	}
	if ops > 0 {
		sc.Window.GCPerOp = float64(gcCycles) / float64(ops)
		if len(counts) > 0 {
			sc.Window.Counts = map[string]float64{}
			addPerOp(sc.Window.Counts, nil, counts, float64(ops))
		}
	}
	sc.Window.Traced, sc.Window.Tracer = tracedStat, tracer
	for _, s := range traced {
		if s.ops > 0 {
			sc.Window.TracedReps = append(sc.Window.TracedReps, model.TracedRep{Round: s.round, NsPerOp: float64(s.elapsed.Nanoseconds()) / float64(s.ops)})
		}
	}
	if tracedStat != nil {
		// The median slice, as time/op is the median repetition: a
		// slice that a burst of other work slowed threefold would
		// otherwise move it as much as the shares are kept from moving.
		sc.Window.NsPerOp = tracedStat.Median
	}
	sc.Warnings = append(sc.Warnings, windowWarnings(sc, wall)...)
	return wall, nil
}

// mergeSlices adds the slices' wall-clock results up into one, each
// slice weighing the same: its profile's values and its times are scaled
// to the slices' mean total before they are added, so the total is the
// slices' and the shares are the mean of each slice's shares. Weighed by
// its time instead, a slice that a burst of other programs' work slowed
// threefold counts three times as much as each other, and the budget's
// shares describe the burst, mostly sched: on the 2-core VM at a load of
// 13, the 95% interval of the paired traced/untraced ratio of cipher-cache's
// mutex at 1024 keys and four goroutines was 0.55–1.82.
func mergeSlices(ss []*slice) (*wallclock.Result, error) {
	ps := make([]*profile.Profile, len(ss))
	out := &wallclock.Result{OSWaitExact: true}
	var mean float64
	for _, s := range ss {
		mean += float64(s.wall.Total()) / float64(len(ss))
	}
	var dur int64
	for k, s := range ss {
		w := s.wall
		f := 1.0
		if t := w.Total(); t > 0 {
			f = mean / float64(t)
		}
		scale := func(d time.Duration) time.Duration { return time.Duration(math.Round(float64(d) * f)) }
		p := w.Profile.Copy()
		for _, smp := range p.Sample {
			for v := range smp.Value {
				smp.Value[v] = int64(math.Round(float64(smp.Value[v]) * f))
			}
		}
		ps[k] = p
		for st := range out.Time {
			out.Time[st] += scale(w.Time[st])
		}
		out.Goroutines += w.Goroutines
		out.CPUSamples += w.CPUSamples
		out.HelperSamples += w.HelperSamples
		out.BackgroundGC += scale(w.BackgroundGC)
		out.Span += w.Span
		out.OSWait += scale(w.OSWait)
		out.OSWake += scale(w.OSWake)
		out.OSOwn += scale(w.OSOwn)
		// The critical path's figures, which the trust judge reads
		// (Window.HelpedRunning, Window.SharedHelped).
		out.Helped += scale(w.Helped)
		out.HelpedRunning += scale(w.HelpedRunning)
		out.HelpedOSWait += scale(w.HelpedOSWait)
		out.HelpedOSOwn += scale(w.HelpedOSOwn)
		out.SharedHelped += scale(w.SharedHelped)
		// A count per running time: scaled as the times are.
		out.Handoffs += int(math.Round(float64(w.Handoffs) * f))
		// Exact only if every slice's was: one estimated slice makes
		// the sum an estimate.
		out.OSWaitExact = out.OSWaitExact && w.OSWaitExact
		dur += s.elapsed.Nanoseconds()
	}
	p, err := profile.Merge(ps)
	if err != nil {
		return nil, fmt.Errorf("merging the traced slices' wall-clock profiles: %w", err)
	}
	p.DurationNanos = dur
	out.Profile = p
	return out, nil
}

// weighted is the slices' figure averaged by their duration, nil unless
// every slice has it.
func weighted(ss []*slice, f func(*slice) *float64) *float64 {
	var sum, w float64
	for _, s := range ss {
		v := f(s)
		if v == nil {
			return nil
		}
		sum += *v * s.elapsed.Seconds()
		w += s.elapsed.Seconds()
	}
	if w <= 0 {
		return nil
	}
	avg := sum / w
	return &avg
}

// pairSlices summarises the slices' time/op (traced), and the tracer's
// effect: each slice's time/op over the time/op of the timed repetition
// of its round (tracer), so that what the machine did between rounds,
// which moves both alike, is out of the ratio. Rounds with a slice and no
// repetition (or the reverse) are left out of the pairs; nil where no
// round has both.
func pairSlices(reps []repResult, ss []*slice) (traced, tracer *model.Stat) {
	byRound := map[int]float64{}
	for _, rp := range reps {
		if ns := rp.metrics["ns/op"]; ns > 0 {
			byRound[rp.round] = ns
		}
	}
	// One ratio a round: a round with an extra slice (extraSlice) has
	// two traced slices beside one untraced repetition, whose ratios are
	// not two independent pairs; counted twice, they narrowed the
	// tracer's interval.
	var ts, ratios []float64
	sums, counts := map[int]float64{}, map[int]int{}
	var rounds []int
	for _, s := range ss {
		if s.ops <= 0 {
			continue
		}
		t := float64(s.elapsed.Nanoseconds()) / float64(s.ops)
		ts = append(ts, t)
		if _, ok := byRound[s.round]; ok {
			if counts[s.round] == 0 {
				rounds = append(rounds, s.round)
			}
			sums[s.round] += t
			counts[s.round]++
		}
	}
	for _, rd := range rounds {
		ratios = append(ratios, sums[rd]/float64(counts[rd])/byRound[rd])
	}
	if len(ts) > 0 {
		st, _ := Summarise(ts)
		traced = &st
	}
	if len(ratios) > 0 {
		st, _ := Summarise(ratios)
		tracer = &st
	}
	return traced, tracer
}
