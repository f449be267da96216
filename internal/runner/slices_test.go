package runner

import (
	"context"
	"io"
	"math"
	"math/rand/v2"
	"runtime/trace"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/profiles"
)

// call is one Run call of a worker: which variant, whether the execution
// tracer was on, and in which phase of the run.
type call struct {
	variant string
	traced  bool
	phase   string
}

// callLog records every worker Run call of a run, in order.
type callLog struct {
	mu    sync.Mutex
	phase string
	calls []call
}

func (l *callLog) variant(name string) perflab.Variant {
	return perflab.Variant{Name: name, New: func(perflab.Params) (perflab.Case, error) {
		return caseOf(func(n int) {
			l.mu.Lock()
			l.calls = append(l.calls, call{variant: name, traced: trace.IsEnabled(), phase: l.phase})
			l.mu.Unlock()
			for i := 0; i < n; i++ {
				sink = append(sink[:0], byte(i))
			}
		}), nil
	}}
}

// TestSlicesInterleaved runs three cases through the real runner with the
// trace in slices, and checks from the workers' own log that the rounds
// with a slice ran each case's traced slice right beside its timed
// repetition, in the round's shuffled order, after it and before it in
// turn; that nothing was traced outside the rounds; and that every case's
// budget and window come from its slices. Eight rounds of 5 ms with 30 ms
// to cover take six slices (the fewest with an interval), each as long as
// a repetition, in rounds 1, 2, 3, 5, 6 and 7.
func TestSlicesInterleaved(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tracer")
	}
	const count, seed = 8, 7
	l := &callLog{}
	s := newFake("slices", l.variant("a"), l.variant("b"), l.variant("c"))
	s.Threads = []int{1}
	run := &model.Run{}
	prog := &quietProgress{onPhase: func(name string) { l.mu.Lock(); l.phase = name; l.mu.Unlock() }}
	r := &Runner{Scenario: s, Run: run, Save: &memSaver{}, Progress: prog, Rules: profiles.DefaultRules(),
		Opts: Options{Count: count, Time: 5 * time.Millisecond, Warmup: time.Millisecond, ProfileTime: 30 * time.Millisecond,
			Profile: []string{"wall", "cpu"}, Seed: seed}}
	if err := r.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	if run.Config.Trace != TraceSlices {
		t.Errorf("config trace %q, want %q (the default)", run.Config.Trace, TraceSlices)
	}

	// The order the runner shuffles each round into, from the same seed,
	// and where the slices go: none, after (a), before (b).
	where := []byte("-aba-bab")
	const slices = 6
	rng := rand.New(rand.NewPCG(seed, 0))
	order := []int{0, 1, 2}
	names := []string{"a", "b", "c"}
	var want []call
	for round := 0; round < count; round++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			timed, traced := call{variant: names[i]}, call{variant: names[i], traced: true}
			switch where[round] {
			case '-':
				want = append(want, timed)
			case 'a':
				want = append(want, timed, traced)
			case 'b':
				want = append(want, traced, timed)
			}
		}
	}
	var got []call
	for _, c := range l.calls {
		switch {
		case strings.HasPrefix(c.phase, "round"):
			got = append(got, call{variant: c.variant, traced: c.traced})
		case c.traced:
			t.Errorf("%s ran traced in phase %q, outside the rounds", c.variant, c.phase)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d calls in the rounds, want %d:\ngot  %v\nwant %v", len(got), len(want), got, want)
	}
	for k := range want {
		if got[k] != want[k] {
			t.Fatalf("call %d is %+v, want %+v:\ngot  %v\nwant %v", k, got[k], want[k], got, want)
		}
	}

	for _, c := range run.Cases {
		w := c.Window
		if w == nil || len(c.Budget) == 0 {
			t.Fatalf("%s: no window or budget (warnings %q)", c.Name, c.Warnings)
		}
		if w.Source != TraceSlices || w.Slices != slices {
			t.Errorf("%s: window source %q with %d slices, want %q with %d", c.Name, w.Source, w.Slices, TraceSlices, slices)
		}
		if w.NsPerOp != w.Traced.Median {
			t.Errorf("%s: window time/op %v, want the median slice's, %v", c.Name, w.NsPerOp, w.Traced.Median)
		}
		if w.Traced == nil || w.Traced.N != slices || w.Tracer == nil || w.Tracer.N != slices || len(w.TracedReps) != slices {
			t.Errorf("%s: traced %+v, tracer %+v, %d traced reps: want %d of each", c.Name, w.Traced, w.Tracer, len(w.TracedReps), slices)
		}
		if w.Seconds <= 0 || w.Ops <= 0 || w.NsPerOp <= 0 {
			t.Errorf("%s: the slices' window has no time: %+v", c.Name, w)
		}
		if c.Profiles["wall"] == "" || c.Profiles["cpu"] == "" {
			t.Errorf("%s: profiles %v, want wall and cpu", c.Name, c.Profiles)
		}
		if c.BudgetTrust == nil {
			t.Errorf("%s: budget not judged", c.Name)
		}
	}
}

// TestTraceWindow checks that --trace window still takes one window after
// the rounds, and no slices.
func TestTraceWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tracer")
	}
	l := &callLog{}
	s := newFake("window", l.variant("a"))
	s.Threads = []int{1}
	run := &model.Run{}
	prog := &quietProgress{onPhase: func(name string) { l.mu.Lock(); l.phase = name; l.mu.Unlock() }}
	r := &Runner{Scenario: s, Run: run, Save: &memSaver{}, Progress: prog, Rules: profiles.DefaultRules(),
		Opts: Options{Count: 2, Time: 5 * time.Millisecond, Warmup: time.Millisecond, ProfileTime: 20 * time.Millisecond,
			Profile: []string{"wall", "cpu"}, Trace: TraceWindow}}
	if err := r.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, c := range l.calls {
		if c.traced && !strings.HasPrefix(c.phase, "profil") {
			t.Fatalf("traced in phase %q with --trace window", c.phase)
		}
	}
	if w := run.Cases[0].Window; w == nil || w.Source != "" || w.Tracer != nil {
		t.Errorf("window %+v, want one from the profiling window, with no tracer pairing", w)
	}
}

// sliceAt is a slice of round whose time/op is ns.
func sliceAt(round int, ns float64) *slice {
	return &slice{round: round, ops: 1000, elapsed: time.Duration(ns * 1000)}
}

func TestPairSlices(t *testing.T) {
	reps := []repResult{
		{round: 0, metrics: map[string]float64{"ns/op": 100}},
		{round: 1, metrics: map[string]float64{"ns/op": 200}},
		{round: 2, metrics: map[string]float64{"ns/op": 100}},
		{round: 4, metrics: map[string]float64{"ns/op": 100}}, // no slice: not paired
	}
	ss := []*slice{sliceAt(0, 110), sliceAt(1, 220), sliceAt(2, 130), sliceAt(3, 90)} // round 3: no repetition
	traced, tracer := pairSlices(reps, ss)
	if traced == nil || traced.N != 4 || math.Abs(traced.Median-(110+130)/2.0) > 1e-9 {
		t.Errorf("traced %+v, want the 4 slices' time/op, median 120", traced)
	}
	// Ratios 1.1, 1.1, 1.3, paired by round, not by position.
	if tracer == nil || tracer.N != 3 || math.Abs(tracer.Median-1.1) > 1e-9 || math.Abs(tracer.Max-1.3) > 1e-9 {
		t.Errorf("tracer %+v, want 3 ratios, median 1.1, max 1.3", tracer)
	}
	// An extra slice in a round: its two slices are one pair, at their
	// mean (1.1 and 1.3 in round 0: 1.2), not two.
	ss = append(ss, sliceAt(0, 130))
	if _, tracer := pairSlices(reps, ss); tracer == nil || tracer.N != 3 || math.Abs(tracer.Max-1.3) > 1e-9 || math.Abs(tracer.Min-1.1) > 1e-9 {
		t.Errorf("tracer %+v, want 3 pairs (round 0's two slices as one, 1.2), min 1.1, max 1.3", tracer)
	}
	if traced, tracer := pairSlices(nil, nil); traced != nil || tracer != nil {
		t.Errorf("no slices: %+v %+v, want nil", traced, tracer)
	}
}

// TestMergeSlices: each slice weighs the same in the merged profile, so
// that a slice a burst of other work slowed does not decide the shares.
func TestMergeSlices(t *testing.T) {
	rules, err := profiles.DefaultRules().WithWork(`^sha$`)
	if err != nil {
		t.Fatal(err)
	}
	a := sliceAt(0, 100)
	a.wall = wallResult(map[string]int64{"sha;run": 60, "[lock] blocked (sync);run": 40})
	b := sliceAt(1, 300) // three times as long: 240 of it preempted
	b.wall = wallResult(map[string]int64{"sha;run": 60, "[sched] runnable (preempted);sha;run": 240})
	// The helpers' figures are scaled as the times are (to the slices'
	// mean total, 200: a twice, b two thirds).
	a.wall.HelpedRunning, a.wall.HelpedOSWait, a.wall.HelpedOSOwn = 10, 4, 1
	b.wall.HelpedRunning, b.wall.HelpedOSWait, b.wall.HelpedOSOwn = 60, 30, 3
	m, err := mergeSlices([]*slice{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if m.HelpedRunning != 60 || m.HelpedOSWait != 28 || m.HelpedOSOwn != 4 {
		t.Errorf("merged helpers' running %v, OS wait %v, own %v; want 60, 28, 4", m.HelpedRunning, m.HelpedOSWait, m.HelpedOSOwn)
	}
	// Each slice's shares averaged: work (60% + 20%)/2, lock 40%/2, sched
	// 80%/2. Weighed by time it would be work 30, lock 10, sched 60.
	got := Budget(m.Profile, rules, 100)
	for cat, want := range map[string]float64{"work": 40, "lock": 20, "sched": 40} {
		if math.Abs(got[cat]-want) > 1e-6 {
			t.Errorf("%s = %v, want %v (budget %v)", cat, got[cat], want, got)
		}
	}
	if m.Total() != 400 || sumValues2(m.Profile) != 400 {
		t.Errorf("merged total %v, profile %d; want the slices' sum, 400", m.Total(), sumValues2(m.Profile))
	}
	if m.Profile.DurationNanos != (100+300)*1000 || m.CPUSamples != 2 {
		t.Errorf("merged duration %d, samples %d; want the slices' sums", m.Profile.DurationNanos, m.CPUSamples)
	}
	if a.wall.Profile.Sample[0].Value[1] > 60 {
		t.Error("merging scaled the slice's own profile")
	}
}

func sumValues2(p *profile.Profile) int64 {
	var t int64
	for _, s := range p.Sample {
		t += s.Value[1]
	}
	return t
}

// TestSlicesTracerBusy: when another execution trace is running (go test
// -trace), the slices cannot trace; the run completes without a budget and
// says why once, not once a slice.
func TestSlicesTracerBusy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tracer")
	}
	if err := trace.Start(io.Discard); err != nil {
		t.Skipf("a trace is already running: %v", err)
	}
	defer trace.Stop()
	l := &callLog{}
	s := newFake("busy", l.variant("a"))
	s.Threads = []int{1}
	run := &model.Run{}
	r := &Runner{Scenario: s, Run: run, Save: &memSaver{}, Progress: &quietProgress{}, Rules: profiles.DefaultRules(),
		Opts: Options{Count: 3, Time: 2 * time.Millisecond, Warmup: time.Millisecond, ProfileTime: 6 * time.Millisecond, Profile: []string{"wall", "cpu"}}}
	if err := r.Execute(context.Background()); err != nil {
		t.Fatalf("run failed: %v", err)
	}
	c := run.Cases[0]
	if len(c.Budget) != 0 || c.Window != nil {
		t.Errorf("budget %v, window %+v: want none", c.Budget, c.Window)
	}
	n := 0
	for _, w := range c.Warnings {
		if strings.HasPrefix(w.Message, "execution trace:") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d warnings about the execution trace, want 1: %q", n, c.Warnings)
	}
}

func TestSliceSchedule(t *testing.T) {
	for _, tt := range []struct {
		name             string
		count            int
		time, profile    time.Duration
		wantSlices       int
		wantOps, timedOp int // per worker, for a case timed at timedOp
	}{
		{"defaults: six as long as a repetition", 10, 200 * time.Millisecond, time.Second, 6, 1000, 1000},
		{"more to cover --profile-time", 10, 100 * time.Millisecond, time.Second, 10, 1000, 1000},
		{"longer ones past --count × --time", 10, 100 * time.Millisecond, 2 * time.Second, 10, 2000, 1000},
		{"fewer rounds than six", 3, 200 * time.Millisecond, time.Second, 3, 1667, 1000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &Runner{Opts: Options{Count: tt.count, Time: tt.time, ProfileTime: tt.profile, Trace: TraceSlices, Profile: []string{"wall"}}}
			if got := r.sliceCount(); got != tt.wantSlices {
				t.Errorf("%d slices, want %d", got, tt.wantSlices)
			}
			if got := r.sliceOps(&liveCase{n: tt.timedOp}); got != tt.wantOps {
				t.Errorf("%d ops a slice, want %d", got, tt.wantOps)
			}
			n, before := 0, 0
			for round := 0; round < tt.count+3; round++ { // and three --until rounds
				if s, b := r.sliceAt(round); s {
					if round >= tt.count {
						t.Errorf("a slice in round %d, which --until added", round)
					}
					if b {
						before++
					}
					n++
				}
			}
			if n != tt.wantSlices || before != n/2 {
				t.Errorf("%d slices in the rounds, %d before their repetition; want %d, half before", n, before, tt.wantSlices)
			}
		})
	}
}

// TestExtraSlice: a case whose split of running time would stay wider than
// maxShareErr at the even spread's slices gets one more in a round, beside
// the spread's own or in a round without one, where every round left could
// bring it within; not where it is within already, nor where even every
// round left could not.
func TestExtraSlice(t *testing.T) {
	rules, err := profiles.DefaultRules().WithWork(`^sha$`)
	if err != nil {
		t.Fatal(err)
	}
	// A slice whose workers ran all the time, 80% of it hashing, split
	// by n CPU samples: the work share's ± is about 1.176/√n (1.5 ×
	// 1.96 × √(0.8·0.2/n)), within 5 points from about 550 samples.
	running := func(n int) *slice {
		res := wallResult(map[string]int64{"sha;run": 80, "after;run": 20})
		for _, s := range res.Profile.Sample {
			s.Label = map[string][]string{"state": {"running"}}
		}
		res.CPUSamples = n
		return &slice{round: 1, ops: 100, elapsed: time.Millisecond, wall: res}
	}
	for _, tt := range []struct {
		name          string
		slices        []*slice
		round         int
		before, after bool
	}{
		// Round 1 had the spread's first slice; round 2 has none of its
		// own; 6 slices at the spread's end, 14 with an extra in every
		// round left.
		{name: "wide at six, within at fourteen: one more", slices: []*slice{running(50)}, round: 2, before: false, after: true},
		{name: "beside the spread's own, on its other side", slices: []*slice{running(50)}, round: 3, before: true, after: true}, // the spread's before
		// Round 5: 4 at the spread's end, 9 at most.
		{name: "in an odd round without the spread's, before", slices: []*slice{running(70)}, round: 5, before: true},
		{name: "within at six", slices: []*slice{running(100)}, round: 2},
		{name: "too wide even at fourteen: marked instead", slices: []*slice{running(20)}, round: 2},
		{name: "no slice yet to say", round: 0},
		{name: "no wall result in the slices", slices: []*slice{{round: 1}}, round: 2},
		{name: "a round --until added", slices: []*slice{running(50)}, round: 10},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &Runner{Rules: rules, slices: [][]*slice{tt.slices},
				Opts: Options{Count: 10, Time: 200 * time.Millisecond, ProfileTime: time.Second, Trace: TraceSlices, Profile: []string{"wall"}}}
			before, after := r.slicesAt(0, tt.round)
			if before != tt.before || after != tt.after {
				t.Errorf("before %v after %v, want %v %v", before, after, tt.before, tt.after)
			}
		})
	}
}
