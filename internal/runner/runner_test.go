package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/live"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/timingtest"
	"github.com/perflab/perflab/internal/wallclock"
	"github.com/perflab/perflab/profiles"
)

// memSaver keeps a run's files in memory.
type memSaver struct {
	mu          sync.Mutex
	files       map[string][]byte
	checkpoints int
}

func (m *memSaver) WriteFile(rel string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.files == nil {
		m.files = map[string][]byte{}
	}
	m.files[rel] = data
	return nil
}

func (m *memSaver) Checkpoint() error { m.checkpoints++; return nil }

// quietProgress records warnings and can act on a phase.
type quietProgress struct {
	warnings []string
	onPhase  func(string)
}

func (p *quietProgress) Phase(name string, total int) {
	if p.onPhase != nil {
		p.onPhase(name)
	}
}
func (p *quietProgress) Step(string)      {}
func (p *quietProgress) Warn(msg string)  { p.warnings = append(p.warnings, msg) }
func worker(f func(n int)) perflab.Worker { return perflab.WorkerFunc(f) }
func caseOf(f func(n int)) perflab.Case {
	return perflab.CaseFunc(func(int) perflab.Worker { return worker(f) })
}
func newFake(name string, vs ...perflab.Variant) *perflab.Scenario {
	return &perflab.Scenario{Name: name, Variants: vs, Threads: []int{1, 2}}
}

var sink []byte

// countingWorker allocates 64 bytes and counts one event per operation.
type countingWorker struct {
	events int64
	sink   []byte
}

func (w *countingWorker) Run(n int) {
	for i := 0; i < n; i++ {
		w.sink = make([]byte, 64)
		w.events++
	}
}
func (w *countingWorker) Counts() map[string]int64 { return map[string]int64{"events": w.events} }

func fakeScenario() *perflab.Scenario {
	return newFake("fake",
		perflab.Variant{Name: "alloc", New: func(perflab.Params) (perflab.Case, error) {
			return perflab.CaseFunc(func(int) perflab.Worker { return &countingWorker{} }), nil
		}},
		perflab.Variant{Name: "panics", New: func(perflab.Params) (perflab.Case, error) {
			return caseOf(func(n int) {
				if n > 1000 {
					panic("boom")
				}
			}), nil
		}},
		perflab.Variant{Name: "nosetup", New: func(perflab.Params) (perflab.Case, error) {
			return nil, errors.New("needs a GPU")
		}},
	)
}

func TestExecuteMeasuresAndIsolatesFailures(t *testing.T) {
	s := fakeScenario()
	run := &model.Run{}
	save := &memSaver{}
	prog := &quietProgress{}
	r := &Runner{Scenario: s, Run: run, Save: save, Progress: prog,
		Opts: Options{Count: 6, Time: 5 * time.Millisecond, Warmup: time.Millisecond, Profile: []string{}}}
	if err := r.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !run.Complete || len(run.Cases) != 6 {
		t.Fatalf("complete=%v cases=%d", run.Complete, len(run.Cases))
	}
	for _, c := range run.Cases {
		switch c.Variant {
		case "alloc":
			if c.Status != model.StatusOK || len(c.Reps) != 6 {
				t.Fatalf("%s: status %s, %d reps", c.Name, c.Status, len(c.Reps))
			}
			if got := c.Stats["events/op"].Median; got != 1 {
				t.Errorf("%s: events/op = %v, want exactly 1", c.Name, got)
			}
			if got := c.Stats["allocs/op"].Median; math.Abs(got-1) > 0.01 {
				t.Errorf("%s: allocs/op = %v, want 1", c.Name, got)
			}
			if got := c.Stats["B/op"].Median; math.Abs(got-64) > 1 {
				t.Errorf("%s: B/op = %v, want 64", c.Name, got)
			}
			ns := c.Stats["ns/op"]
			if !(ns.Median > 0 && ns.MedianLo <= ns.Median && ns.Median <= ns.MedianHi) {
				t.Errorf("%s: bad ns/op stat %+v", c.Name, ns)
			}
		case "panics":
			if c.Status != model.StatusFailed || !strings.Contains(c.Error, "boom") {
				t.Errorf("%s: status %s error %q, want failed with the panic", c.Name, c.Status, c.Error)
			}
		case "nosetup":
			if c.Status != model.StatusFailed || !strings.Contains(c.Error, "needs a GPU") {
				t.Errorf("%s: status %s error %q", c.Name, c.Status, c.Error)
			}
		}
	}
	if len(prog.warnings) != 4 {
		t.Errorf("warnings %q, want one per failed case", prog.warnings)
	}
	if save.checkpoints < 6 {
		t.Errorf("%d checkpoints, want one per round at least", save.checkpoints)
	}
}

func TestAllocationsCountedExactly(t *testing.T) {
	// Few allocations per repetition: runtime/metrics would miss those
	// still in a P's span cache.
	//
	// The counters are the process's: a goroutine another test left
	// running can allocate inside a repetition too (CI once read 2
	// allocs/op and 176 B/op at n=1, 112 B more than the worker's). That
	// only ever adds, so a repetition that reads exactly the worker's
	// shows the counting exact; five tries at each n are allowed.
	for _, n := range []int{1, 10, 50} {
		var got []string
		for range 5 {
			c := &liveCase{lc: live.Of(nil, nil, &countingWorker{}), n: n}
			res, err := c.rep(newSampler())
			if err != nil {
				t.Fatal(err)
			}
			allocs, bytes := res.metrics["allocs/op"], res.metrics["B/op"]
			if allocs == 1 && bytes == 64 {
				got = nil
				break
			}
			got = append(got, fmt.Sprintf("%v allocs/op, %v B/op", allocs, bytes))
		}
		if got != nil {
			t.Errorf("n=%d: %s; want exactly 1 allocs/op and 64 B/op", n, strings.Join(got, "; "))
		}
	}
}

func TestExactGoroutineCount(t *testing.T) {
	var mu sync.Mutex
	ids := map[int]bool{}
	s := newFake("threads", perflab.Variant{Name: "v", New: func(perflab.Params) (perflab.Case, error) {
		return perflab.CaseFunc(func(id int) perflab.Worker {
			mu.Lock()
			ids[id] = true
			mu.Unlock()
			return worker(func(int) {})
		}), nil
	}})
	run := &model.Run{}
	r := &Runner{Scenario: s, Run: run, Save: &memSaver{}, Progress: &quietProgress{},
		Opts: Options{Selection: perflab.Selection{Threads: []int{7}}, Count: 1, Time: time.Millisecond, Warmup: time.Nanosecond, Profile: []string{}}}
	if err := r.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(ids) != 7 {
		t.Fatalf("workers %v, want ids 0..6", ids)
	}
	rep := run.Cases[0].Reps[0]
	if rep.Ops%7 != 0 {
		t.Fatalf("ops %d not a multiple of 7 workers", rep.Ops)
	}
}

func TestInterruptKeepsMeasuredCases(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	prog := &quietProgress{onPhase: func(name string) {
		if name == "round 3/10" {
			cancel()
		}
	}}
	run := &model.Run{}
	r := &Runner{Scenario: fakeScenario(), Run: run, Save: &memSaver{}, Progress: prog,
		Opts: Options{Selection: perflab.Selection{Variants: []string{"alloc"}}, Count: 10, Time: 2 * time.Millisecond, Warmup: time.Nanosecond, Profile: []string{}}}
	err := r.Execute(ctx)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	if run.Complete || run.Note == "" {
		t.Errorf("run marked complete=%v note=%q", run.Complete, run.Note)
	}
	for _, c := range run.Cases {
		if c.Status != model.StatusOK || len(c.Reps) != 2 {
			t.Errorf("%s: status %s with %d reps, want ok with the 2 measured", c.Name, c.Status, len(c.Reps))
		}
	}
}

func TestProfilingPass(t *testing.T) {
	for _, mode := range []string{TraceSlices, TraceWindow} {
		t.Run(mode, func(t *testing.T) { testProfilingPass(t, mode) })
	}
}

func testProfilingPass(t *testing.T, mode string) {
	var mu sync.Mutex
	s := newFake("contend", perflab.Variant{Name: "mutex", New: func(perflab.Params) (perflab.Case, error) {
		return caseOf(func(n int) {
			for i := 0; i < n; i++ {
				mu.Lock()
				for j := 0; j < 200; j++ {
					sink = append(sink[:0], byte(j))
				}
				mu.Unlock()
			}
		}), nil
	}})
	run := &model.Run{}
	save := &memSaver{}
	r := &Runner{Scenario: s, Run: run, Save: save, Progress: &quietProgress{}, Rules: profiles.DefaultRules(),
		Opts: Options{Selection: perflab.Selection{Threads: []int{4}}, Count: 2, Time: 5 * time.Millisecond, Warmup: time.Nanosecond, ProfileTime: 300 * time.Millisecond, Profile: ProfileKinds, Trace: mode}}
	before := time.Now()
	if err := r.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	c := run.Cases[0]
	for _, kind := range ProfileKinds {
		rel, ok := c.Profiles[kind]
		if !ok {
			t.Fatalf("no %s profile: %v", kind, c.Profiles)
		}
		p, err := profile.ParseData(save.files[rel])
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if kind == "wall" {
			// The trace's own worker goroutines only: their time adds up
			// to at most threads × the window's repetitions (less when a
			// worker finishes early: a contended Mutex lets the holder
			// barge, so workers finish unevenly; the Window says how much).
			var total int64
			for _, smp := range p.Sample {
				if len(smp.Label["state"]) != 1 {
					t.Fatalf("wall sample without a state label: %v", profiles.SampleStack(smp))
				}
				total += smp.Value[0]
			}
			limit := 4 * c.Window.Seconds * 1e9
			if float64(total) > limit*1.001 || float64(total) < 0.2*limit {
				t.Errorf("wall profile holds %v of worker time; the window had 4 workers × %.3fs", time.Duration(total), c.Window.Seconds)
			}
		}
		if kind == "wall" {
			// When and over how long, which go tool pprof heads it
			// with: the wall profile had neither time nor, in slices,
			// a duration of its own.
			if at := time.Unix(0, p.TimeNanos); at.Before(before.Round(0)) || at.After(after.Round(0)) {
				t.Errorf("wall profile's TimeNanos %v, want within the run, %v to %v", at, before, after)
			}
			if d := float64(p.DurationNanos); math.Abs(d-c.Window.Seconds*1e9) > 1e3 {
				t.Errorf("wall profile's DurationNanos %v, want the window's %.6fs", time.Duration(p.DurationNanos), c.Window.Seconds)
			}
			if o := c.Window.Occupancy; math.Abs(o*4*c.Window.Seconds*1e9-float64(sumValues(p)))/float64(sumValues(p)) > 1e-6 {
				t.Errorf("occupancy %.3f does not match the profile's total", o)
			}
		}
		if kind == "block" || kind == "fgprof" {
			for _, smp := range p.Sample {
				if !strings.Contains(strings.Join(profiles.SampleStack(smp), ";"), workerFrame) {
					t.Fatalf("%s profile keeps a non-worker sample: %v", kind, profiles.SampleStack(smp))
				}
			}
		}
		if kind == "wall" && len(p.Sample) == 0 {
			t.Fatal("wall profile has no worker samples")
		}
	}
	if svg := save.files[c.Flame]; c.Flame == "" || !bytes.Contains(svg, []byte("<svg")) {
		t.Errorf("flame graph %q: %.80q", c.Flame, svg)
	}
	var sum float64
	for _, v := range c.Budget {
		sum += v
	}
	if ns := c.Stats["ns/op"].Mean; math.Abs(sum-ns) > 1e-6*ns {
		t.Errorf("budget sums to %v, want ns/op %v", sum, ns)
	}
}

func sumValues(p *profile.Profile) int64 {
	var t int64
	for _, s := range p.Sample {
		t += s.Value[0]
	}
	return t
}

// fakeProfile builds a wall profile whose samples have the given stacks
// (leaf first, ';'-separated) and nanosecond values.
func fakeProfile(stacks map[string]int64) *profile.Profile {
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "time", Unit: "nanoseconds"}}}
	fns := map[string]*profile.Function{}
	for st, v := range stacks {
		s := &profile.Sample{Value: []int64{1, v}}
		for _, name := range strings.Split(st, ";") {
			f, ok := fns[name]
			if !ok {
				f = &profile.Function{ID: uint64(len(fns) + 1), Name: name}
				fns[name] = f
				p.Function = append(p.Function, f)
			}
			loc := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f}}}
			p.Location = append(p.Location, loc)
			s.Location = append(s.Location, loc)
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}

func TestKeepWorkers(t *testing.T) {
	p := fakeProfile(map[string]int64{
		"sha;scenario.Run;" + workerFrame + ";runtime.goexit":                       1,
		"runtime.gopark;runtime.chanrecv1;" + workerFrame + ";runtime.goexit":       2, // parked on start
		"runtime.gopark;sync.(*WaitGroup).Wait;runner.(*liveCase).runWorkers;main":  4, // the harness
		"runtime.gopark;time.Sleep;progress":                                        8,
		"runtime.gopark;sync.(*Mutex).Lock;scenario.Run;" + workerFrame + ";goexit": 16,
	})
	got, _ := keepWorkers(p)
	var total int64
	for _, s := range got.Sample {
		total += s.Value[1]
	}
	if total != 17 {
		t.Fatalf("kept value %d, want 17 (the two worker stacks doing work)", total)
	}
}

func TestBudget(t *testing.T) {
	rules, err := profiles.DefaultRules().WithWork(`^sha$`)
	if err != nil {
		t.Fatal(err)
	}
	// A wall profile as internal/wallclock makes it: running time at CPU
	// sample stacks, off-CPU time under a state frame carrying its category.
	wall := fakeProfile(map[string]int64{
		"sha;run":                               40,
		"runtime.mallocgc;run":                  10,
		"after;run":                             5,
		"[lock] blocked (sync);run":             20,
		"[lock] runnable after wake (sync);run": 5,
		"[wait] blocked (chan receive);run":     10,
		"[sched] runnable (preempted);sha;run":  10,
	})
	wall.SampleType[1].Type = "wall"
	for _, tt := range []struct {
		name string
		ns   float64
		want map[string]float64
	}{
		{"shares of the median", 200, map[string]float64{"work": 80, "alloc": 20, "other": 10, "lock": 50, "wait": 20, "sched": 20}},
		{"no time", 0, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := Budget(wall, rules, tt.ns)
			if tt.want == nil {
				if b != nil {
					t.Fatalf("budget %v, want none", b)
				}
				return
			}
			var sum float64
			for _, v := range b {
				sum += v
			}
			for cat, w := range tt.want {
				if math.Abs(b[cat]-w) > 1e-9 {
					t.Errorf("%s = %v, want %v (budget %v)", cat, b[cat], w, b)
				}
			}
			if math.Abs(sum-tt.ns) > 1e-9 {
				t.Errorf("budget sums to %v, want %v", sum, tt.ns)
			}
		})
	}
}

func TestSummarise(t *testing.T) {
	tests := []struct {
		name   string
		values []float64
		warn   string // a warning that must be given ("": none at all)
		not    string // one that must not
	}{
		{"steady", []float64{100, 101, 99, 100, 102, 98, 100, 101, 99, 100}, "", ""},
		{"too few", []float64{100, 101, 99}, "3 repetitions are too few for a 95% interval (time/op shows ±∞): use --count 6 or more", "need >="},
		{"noisy", []float64{100, 180, 60, 140, 90, 200, 70, 150}, "is wide", "two speeds"},
		// sharded at 128 keys, four goroutines, in a cold-user trial.
		{"two speeds", []float64{45, 46, 44, 112, 45, 118, 47, 122, 110, 46}, "two speeds: 6 repetitions near 45.50ns and 4 near 115.0ns", ""},
		// One slow repetition is an outlier, not a second speed.
		{"one outlier", []float64{45, 46, 44, 45, 120, 46, 45, 47, 45, 46}, "", ""},
		{"a steady rise", []float64{40, 45, 50, 55, 60, 65, 70, 75, 80, 85}, "is wide", "two speeds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, warns := Summarise(tt.values)
			if st.N != len(tt.values) || st.Min > st.Median || st.Median > st.Max {
				t.Errorf("stat %+v", st)
			}
			var msgs []string
			for _, w := range warns {
				msgs = append(msgs, w.Message)
			}
			joined := strings.Join(msgs, "; ")
			if tt.warn == "" && joined != "" {
				t.Errorf("unexpected warnings %q", joined)
			}
			if tt.warn != "" && !strings.Contains(joined, tt.warn) {
				t.Errorf("warnings %q, want %q", joined, tt.warn)
			}
			if tt.not != "" && strings.Contains(joined, tt.not) {
				t.Errorf("warnings %q, want none saying %q", joined, tt.not)
			}
		})
	}
}

func TestScenarioPackage(t *testing.T) {
	s := fakeScenario()
	if got, want := scenarioPackage(s), "github.com/perflab/perflab/internal/runner"; got != want {
		t.Errorf("scenarioPackage = %q, want %q (the pkg line go test writes)", got, want)
	}
	if got := scenarioPackage(&perflab.Scenario{Name: "x"}); got != "perflab/x" {
		t.Errorf("fallback %q", got)
	}
}

func TestOpsPerMicrosecond(t *testing.T) {
	s := fakeScenario()
	s.OpsPerMicrosecond = true
	run := &model.Run{}
	r := &Runner{Scenario: s, Run: run, Save: &memSaver{}, Progress: &quietProgress{},
		Opts: Options{Selection: perflab.Selection{Variants: []string{"alloc"}, Threads: []int{1}}, Count: 2, Time: 2 * time.Millisecond, Warmup: time.Nanosecond, Profile: []string{}}}
	if err := r.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, rep := range run.Cases[0].Reps {
		if got, want := rep.Metrics["ops/µs"], rep.Metrics["ops/s"]/1e6; math.Abs(got-want) > 1e-9*want {
			t.Errorf("ops/µs = %v, want ops/s ÷ 1e6 = %v", got, want)
		}
	}
}

// TestGCCPUCoversRepetition: the runtime updates its CPU classes only when
// a GC cycle ends, so a repetition's GC share is read after a collection
// that ends it. Even a repetition that triggered no GC of its own has a
// window, and so a figure.
func TestGCCPUCoversRepetition(t *testing.T) {
	s := newFake("gc", perflab.Variant{Name: "quiet", New: func(perflab.Params) (perflab.Case, error) {
		return caseOf(func(n int) {
			for i := 0; i < n; i++ {
				sink = append(sink[:0], byte(i))
			}
		}), nil
	}})
	run := &model.Run{}
	r := &Runner{Scenario: s, Run: run, Save: &memSaver{}, Progress: &quietProgress{},
		Opts: Options{Selection: perflab.Selection{Threads: []int{1}}, Count: 3, Time: 5 * time.Millisecond, Warmup: time.Nanosecond, Profile: []string{}}}
	if err := r.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i, rep := range run.Cases[0].Reps {
		if rep.Metrics["gc/op"] != 0 {
			t.Skipf("repetition %d collected garbage; the test needs one that did not", i)
		}
		if _, ok := rep.Metrics["gc-cpu-%"]; !ok {
			t.Errorf("repetition %d has no gc-cpu-%%: its window ended before it did", i)
		}
	}
}

func TestCPUsWantedAndUsed(t *testing.T) {
	procs := float64(runtime.GOMAXPROCS(0))
	sc := &model.Case{Threads: 4, Stats: map[string]model.Stat{"ns/op": {Median: 100}, "cpu-ns/op": {Median: 100}}}
	if got := cpusUsed(sc); got != 1 {
		t.Errorf("cpu/op = time/op: %v CPUs, want 1", got)
	}
	// Four workers always running or runnable want every CPU there is;
	// blocked most of the time on a lock, they want little.
	if got := cpusWanted(&model.Window{Occupancy: 1, Running: 0.5, Runnable: 0.5}, 4); got != math.Min(procs, 4) {
		t.Errorf("busy workers want %v CPUs", got)
	}
	if got := cpusWanted(&model.Window{Occupancy: 1, Running: 0.2, Blocked: 0.8}, 4); math.Abs(got-math.Min(procs, 0.8)) > 1e-9 {
		t.Errorf("lock-bound workers want %v CPUs, want 0.8", got)
	}
}

func TestRoundsRecordNoise(t *testing.T) {
	if _, ok := readLoad(); !ok {
		t.Skip("no /proc/loadavg on this system")
	}
	run := &model.Run{}
	r := &Runner{Scenario: fakeScenario(), Run: run, Save: &memSaver{}, Progress: &quietProgress{},
		Opts: Options{Selection: perflab.Selection{Threads: []int{1}}, Count: 3, Time: time.Millisecond, Warmup: time.Nanosecond, Profile: []string{}}}
	if err := r.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(run.Rounds) != 3 {
		t.Fatalf("%d rounds recorded, want 3", len(run.Rounds))
	}
	for _, rd := range run.Rounds {
		if rd.Load1 < 0 || rd.Steal < 0 || rd.Steal > 1 {
			t.Errorf("round %+v", rd)
		}
	}
}

// TestUntil: --until adds rounds until time/op is resolved to the target,
// and says which cases did not get there in time. How many rounds fit in
// --until-max is the machine's: under -race beside one spinning process
// the 300 ms held 2-5 rounds (5 runs in 41), short of an interval, and the
// test wanted 6 of every case. A case short of an interval must be one
// the run names, after --until-max had passed.
func TestUntil(t *testing.T) {
	timingtest.Require(t)
	steady := perflab.Variant{Name: "steady", New: func(perflab.Params) (perflab.Case, error) {
		return caseOf(func(n int) {
			for i := 0; i < n; i++ {
				sink = append(sink[:0], byte(i))
			}
		}), nil
	}}
	var k int
	erratic := perflab.Variant{Name: "erratic", New: func(perflab.Params) (perflab.Case, error) {
		return caseOf(func(n int) {
			// Every other repetition takes five times as long.
			k++
			for i := 0; i < n*(1+4*(k%2)); i++ {
				sink = append(sink[:0], byte(i))
			}
		}), nil
	}}
	run := &model.Run{}
	r := &Runner{Scenario: newFake("until", steady, erratic), Run: run, Save: &memSaver{}, Progress: &quietProgress{},
		Opts: Options{Selection: perflab.Selection{Threads: []int{1}}, Count: 2, Time: 2 * time.Millisecond, Warmup: time.Nanosecond,
			Profile: []string{}, Until: 0.5, UntilMax: 300 * time.Millisecond}}
	start := time.Now()
	if err := r.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	for _, c := range run.Cases {
		n := c.Stats["ns/op"].N
		warned := hasWarning(c.Warnings, model.WarnUntil, "did not reach --until")
		t.Logf("%s: %d repetitions in a run of %v, warned %v", c.Name, n, took.Round(time.Millisecond), warned)
		if n < MinIntervalReps && !warned {
			t.Errorf("%s: %d repetitions, want at least %d for an interval, or a warning that --until-max ran out", c.Name, n, MinIntervalReps)
		}
		if warned && took < r.Opts.UntilMax {
			t.Errorf("%s: warned that --until-max %v ran out, in a run of %v", c.Name, r.Opts.UntilMax, took)
		}
		if hw := c.Stats["ns/op"].HalfWidth(); hw > 0.5 != warned {
			t.Errorf("%s: ±%.0f%%, warned %v", c.Name, 100*hw, warned)
		}
	}
}

// TestInterruptBetweenRepetitions: a context that ends just before a
// repetition starts interrupts the run; it does not fail the case (CI saw
// "1 of 1 cases failed: context deadline exceeded", then 980 empty rounds).
func TestInterruptBetweenRepetitions(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run := &model.Run{}
	p := &quietProgress{onPhase: func(name string) {
		if name == "round 3/1000" {
			cancel()
		}
	}}
	s := fakeScenario()
	s.Threads = []int{1}
	r := &Runner{Scenario: s, Run: run, Save: &memSaver{}, Progress: p,
		Opts: Options{Selection: perflab.Selection{Variants: []string{"alloc"}}, Count: 1000, Time: time.Millisecond, Warmup: time.Nanosecond, Profile: []string{}}}
	err := r.Execute(ctx)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("Execute: %v, want ErrInterrupted", err)
	}
	for _, c := range run.Cases {
		if c.Status == model.StatusFailed {
			t.Errorf("%s failed (%s): an interruption is not the case's failure", c.Name, c.Error)
		}
		if n := len(c.Reps); n != 2 {
			t.Errorf("%s: %d repetitions kept, want the 2 of the rounds before", c.Name, n)
		}
	}
}

// TestWindowWarnings: each of the profiling window's warnings fires on
// what it is about and on nothing else.
func TestWindowWarnings(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	if procs < 2 {
		t.Skip("the starvation case needs two Ps")
	}
	timed := func(ns, cpu float64) map[string]model.Stat {
		return map[string]model.Stat{"ns/op": {Median: ns}, "cpu-ns/op": {Median: cpu}}
	}
	busy := &wallclock.Result{CPUSamples: 200}
	busy.Time[wallclock.Running] = time.Second
	for _, tc := range []struct {
		name string
		sc   model.Case
		w    *wallclock.Result
		want []string // a word of each warning, in order
	}{
		{"quiet", model.Case{Threads: 1, Stats: timed(100, 100), Window: &model.Window{NsPerOp: 104, Occupancy: 1, Running: 1}}, busy, nil},
		{"drift", model.Case{Threads: 1, Stats: timed(100, 100), Window: &model.Window{NsPerOp: 125, Occupancy: 1, Running: 1}}, busy, []string{"+25% off"}},
		{"uneven", model.Case{Threads: 2, Stats: timed(100, 200), Window: &model.Window{NsPerOp: 100, Occupancy: 0.6, Running: 1}}, busy, []string{"busy 60%"}},
		{"starved", model.Case{Threads: 2, Stats: timed(100, 100), Window: &model.Window{NsPerOp: 100, Occupancy: 1, Running: 0.6, Runnable: 0.4, OSWait: 0.3}}, busy, []string{"got 1.00 CPUs"}},
		{"window only starved", model.Case{Threads: 1, Stats: timed(100, 100), Window: &model.Window{NsPerOp: 180, Occupancy: 1, Running: 0.55, Runnable: 0.45, OSWait: 0.45}}, busy, []string{"+80% off", "45% of their time"}},
		// The same with the rest of the machine's CPU use measured: idle,
		// the wait was the process's own threads' and nobody is blamed.
		{"starved by another", model.Case{Threads: 2, Stats: timed(100, 100), Window: &model.Window{NsPerOp: 100, Occupancy: 1, Running: 0.6, Runnable: 0.4, OSWait: 0.3, OtherCPUs: ptrTo(0.9)}}, busy, []string{"used 0.90 CPUs"}},
		{"starved by its own threads", model.Case{Threads: 2, Stats: timed(100, 100), Window: &model.Window{NsPerOp: 100, Occupancy: 1, Running: 0.6, Runnable: 0.4, OSWait: 0.3, OtherCPUs: ptrTo(0.03)}}, busy, nil},
		// 0.3 of 2 threads is 0.6 CPUs waiting: 0.2 used elsewhere
		// is too little to be what they waited for.
		{"others too few", model.Case{Threads: 2, Stats: timed(100, 100), Window: &model.Window{NsPerOp: 100, Occupancy: 1, Running: 0.6, Runnable: 0.4, OSWait: 0.3, OtherCPUs: ptrTo(0.2)}}, busy, nil},
		{"window only, by another", model.Case{Threads: 1, Stats: timed(100, 100), Window: &model.Window{NsPerOp: 180, Occupancy: 1, Running: 0.55, Runnable: 0.45, OSWait: 0.45, OtherCPUs: ptrTo(1.1)}}, busy, []string{"+80% off", "used 1.10 CPUs, which the budget counts as sched; whose threads had the CPU the kernel's records cannot say"}},
		{"window only, its own threads", model.Case{Threads: 1, Stats: timed(100, 100), Window: &model.Window{NsPerOp: 180, Occupancy: 1, Running: 0.55, Runnable: 0.45, OSWait: 0.45, OtherCPUs: ptrTo(0.01)}}, busy, []string{"+80% off"}},
		// The figure's bounds: 0.05 CPUs at least, and half the CPUs
		// waited (0.05 of two threads' time: 0.1 CPUs).
		{"others at the floor", model.Case{Threads: 2, Stats: timed(100, 100), Window: &model.Window{NsPerOp: 100, Occupancy: 1, Running: 0.6, Runnable: 0.4, OSWait: 0.05, OtherCPUs: ptrTo(0.05)}}, busy, []string{"used 0.05 CPUs"}},
		{"others under the floor", model.Case{Threads: 2, Stats: timed(100, 100), Window: &model.Window{NsPerOp: 100, Occupancy: 1, Running: 0.6, Runnable: 0.4, OSWait: 0.05, OtherCPUs: ptrTo(0.049)}}, busy, nil},
		// Workers busy half the window waited half the CPUs: 0.2 is then
		// enough (0.3 of two threads' half: 0.3 CPUs).
		{"others enough for fewer busy", model.Case{Threads: 2, Stats: timed(100, 100), Window: &model.Window{NsPerOp: 100, Occupancy: 0.5, Running: 0.6, Runnable: 0.4, OSWait: 0.3, OtherCPUs: ptrTo(0.2)}}, busy, []string{"busy 50%", "used 0.20 CPUs"}},
		// With the kernel's records, the part of the wait another
		// program had the CPU is exact, and the figure is not needed.
		{"records: its own threads", model.Case{Threads: 2, Stats: timed(100, 100), Window: &model.Window{NsPerOp: 100, Occupancy: 1, Running: 0.6, Runnable: 0.4, OSWait: 0.3, OSOwn: 0.28, OSWaitExact: true, OtherCPUs: ptrTo(1.2)}}, busy, nil},
		{"records: another program", model.Case{Threads: 2, Stats: timed(100, 100), Window: &model.Window{NsPerOp: 100, Occupancy: 1, Running: 0.6, Runnable: 0.4, OSWait: 0.3, OSOwn: 0.05, OSWaitExact: true, OtherCPUs: ptrTo(0)}}, busy, []string{"another program had their CPUs for 25%"}},
		// Too many switches to keep whose thread had each CPU: the
		// figure decides, as without records.
		{"records: own unknown, others busy", model.Case{Threads: 2, Stats: timed(100, 100), Window: &model.Window{NsPerOp: 100, Occupancy: 1, Running: 0.6, Runnable: 0.4, OSWait: 0.3, OSWaitExact: true, OSOwnUnknown: true, OtherCPUs: ptrTo(0.9)}}, busy, []string{"used 0.90 CPUs"}},
		{"records: own unknown, machine idle", model.Case{Threads: 2, Stats: timed(100, 100), Window: &model.Window{NsPerOp: 100, Occupancy: 1, Running: 0.6, Runnable: 0.4, OSWait: 0.3, OSWaitExact: true, OSOwnUnknown: true, OtherCPUs: ptrTo(0.01)}}, busy, nil},
		// Threads the recorder had not yet found may have had it.
		{"records: unseen threads", model.Case{Threads: 2, Stats: timed(100, 100), Window: &model.Window{NsPerOp: 100, Occupancy: 1, Running: 0.6, Runnable: 0.4, OSWait: 0.3, OSOwn: 0.05, OSUnseen: 0.22, OSWaitExact: true}}, busy, nil},
		{"records: window only", model.Case{Threads: 1, Stats: timed(100, 100), Window: &model.Window{NsPerOp: 180, Occupancy: 1, Running: 0.55, Runnable: 0.45, OSWait: 0.45, OSOwn: 0.3, OSWaitExact: true}}, busy, []string{"+80% off", "another process on the cores kept the workers' threads from a CPU in the profiling window (another program had their CPUs for 15% of their time)"}},
		{"records: window only, its own", model.Case{Threads: 1, Stats: timed(100, 100), Window: &model.Window{NsPerOp: 180, Occupancy: 1, Running: 0.55, Runnable: 0.45, OSWait: 0.45, OSOwn: 0.4, OSWaitExact: true}}, busy, []string{"+80% off"}},
		{"steal", model.Case{Threads: 1, Stats: timed(100, 100), Window: &model.Window{NsPerOp: 100, Occupancy: 1, Running: 1, Steal: ptrTo(0.08)}}, busy, []string{"gave 8% of the CPUs' time"}},
		{"a little steal", model.Case{Threads: 1, Stats: timed(100, 100), Window: &model.Window{NsPerOp: 100, Occupancy: 1, Running: 1, Steal: ptrTo(0.04)}}, busy, nil},
		{"GC pacing differed", model.Case{Threads: 1, Stats: map[string]model.Stat{"ns/op": {Median: 100}, "cpu-ns/op": {Median: 100}, "gc/op": {Median: 1e-4}}, Window: &model.Window{NsPerOp: 100, Occupancy: 1, Running: 1, GCPerOp: 0.3e-4}}, busy, []string{"0.30× the timed"}},
		{"GC pacing held", model.Case{Threads: 1, Stats: map[string]model.Stat{"ns/op": {Median: 100}, "cpu-ns/op": {Median: 100}, "gc/op": {Median: 1e-4}}, Window: &model.Window{NsPerOp: 100, Occupancy: 1, Running: 1, GCPerOp: 1.1e-4}}, busy, nil},
		{"a little OS wait", model.Case{Threads: 1, Stats: timed(100, 100), Window: &model.Window{NsPerOp: 100, Occupancy: 1, Running: 1, OSWait: 0.04}}, busy, nil},
		{"few samples", model.Case{Threads: 1, Stats: timed(100, 100), Window: &model.Window{NsPerOp: 100, Occupancy: 1, Running: 1}}, func() *wallclock.Result {
			r := *busy
			r.CPUSamples = 20
			return &r
		}(), []string{"20 CPU samples"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := windowWarnings(&tc.sc, tc.w)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d warnings %q, want %d", len(got), got, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i].Message, w) {
					t.Errorf("warning %d = %q, want it to say %q", i, got[i], w)
				}
			}
		})
	}
}

func ptrTo(v float64) *float64 { return &v }

// TestWindowCounts: a scenario's own counters are kept for the profiling
// window too, per operation, so a self-timing scenario can check the
// budget against what it measured in the same window.
func TestWindowCounts(t *testing.T) {
	s := newFake("counts", perflab.Variant{Name: "alloc", New: func(perflab.Params) (perflab.Case, error) {
		return perflab.CaseFunc(func(int) perflab.Worker { return &countingWorker{} }), nil
	}})
	run := &model.Run{}
	r := &Runner{Scenario: s, Run: run, Save: &memSaver{}, Progress: &quietProgress{}, Rules: profiles.DefaultRules(), NoFlame: true,
		Opts: Options{Selection: perflab.Selection{Threads: []int{1}}, Count: 2, Time: 5 * time.Millisecond, Warmup: time.Millisecond,
			ProfileTime: 50 * time.Millisecond, Profile: []string{"wall"}}}
	if err := r.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	w := run.Cases[0].Window
	if w == nil {
		t.Fatal("no window")
	}
	if got := w.Counts["events/op"]; got != 1 {
		t.Errorf("window events/op = %v, want exactly 1 (counts %v)", got, w.Counts)
	}
}

// TestWorkersBuiltBeforeRuns: Case.NewWorker is called for every id, in
// order, before any worker runs, as perflab.Case promises.
func TestWorkersBuiltBeforeRuns(t *testing.T) {
	var built []int
	var bad []string
	var mu sync.Mutex
	s := newFake("built", perflab.Variant{Name: "v", New: func(perflab.Params) (perflab.Case, error) {
		built = nil
		return perflab.CaseFunc(func(id int) perflab.Worker {
			built = append(built, id)
			return perflab.WorkerFunc(func(int) {
				mu.Lock()
				defer mu.Unlock()
				if len(built) != 3 {
					bad = append(bad, fmt.Sprintf("a worker ran with %d of 3 workers built", len(built)))
				}
			})
		}), nil
	}})
	s.Threads = []int{3}
	run := &model.Run{}
	r := &Runner{Scenario: s, Run: run, Save: &memSaver{}, Progress: &quietProgress{},
		Opts: Options{Count: 1, Time: time.Millisecond, Warmup: time.Nanosecond, Profile: []string{}}}
	if err := r.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(built) != "[0 1 2]" || len(bad) > 0 {
		t.Errorf("built %v; %q", built, bad)
	}
}

// hasWarning says whether ws has a warning of kind whose sentence says
// text.
func hasWarning(ws []model.Warning, kind model.WarningKind, text string) bool {
	for _, w := range ws {
		if w.Kind == kind && strings.Contains(w.Message, text) {
			return true
		}
	}
	return false
}

// TestSetBudgetLeavesTracerOut: the execution tracer's own time (any stack
// with one of its functions, whatever is below it) is time the untraced,
// timed executions did not spend. SetBudget leaves it out of the budget,
// and its sched, says how much in Window.TracerOwn, and keeps it in
// the profile itself (the stored profile and the flame graph show it).
func TestSetBudgetLeavesTracerOut(t *testing.T) {
	rules, err := profiles.DefaultRules().WithWork(`^sha$`)
	if err != nil {
		t.Fatal(err)
	}
	wall := fakeProfile(map[string]int64{
		"sha;run":                           60,
		"after;run":                         10,
		"[wait] blocked (chan receive);run": 10,
		"runtime.(*traceBuf).varint;runtime.traceLocker.GoCreate;runtime.newproc1;run": 8,
		"runtime.memmove;runtime.traceStack;runtime.traceLocker.GoUnblock;run":         2,
		// A preemption inside the tracer is the tracer's too.
		"[sched] runnable (preempted);runtime.traceLocker.GoStart;run": 5,
		"[sched] runnable (preempted);sha;run":                         5,
		// runtime.traceback* is not the tracer (no capital after "trace").
		"runtime.tracebackPCs;run": 0,
	})
	wall.SampleType[1].Type = "wall"
	n := len(wall.Sample)
	sc := &model.Case{Window: &model.Window{CPUSamples: 100}}
	SetBudget(sc, wall, rules, 170)
	if got, want := sc.Window.TracerOwn, 15.0/100; math.Abs(got-want) > 1e-9 {
		t.Errorf("TracerOwn = %v, want %v", got, want)
	}
	// 85 of wall time left, budgeted as 170 ns: 2 ns a unit.
	want := map[string]float64{"work": 120, "other": 20, "wait": 20, "sched": 10}
	var sum float64
	for cat, v := range sc.Budget {
		sum += v
		if math.Abs(v-want[cat]) > 1e-9 {
			t.Errorf("budget %s = %v, want %v (budget %v)", cat, v, want[cat], sc.Budget)
		}
	}
	if math.Abs(sum-170) > 1e-9 {
		t.Errorf("budget sums to %v, want 170", sum)
	}
	if got := sc.SchedBy["work"]; math.Abs(got-10) > 1e-9 {
		t.Errorf("sched by work = %v, want 10 (the tracer's preemption left out): %v", got, sc.SchedBy)
	}
	if len(wall.Sample) != n {
		t.Errorf("the profile lost samples: %d, want %d", len(wall.Sample), n)
	}

	// Without the tracer's frames nothing is left out.
	plain := fakeProfile(map[string]int64{"sha;run": 60, "after;run": 10})
	plain.SampleType[1].Type = "wall"
	sc = &model.Case{Window: &model.Window{CPUSamples: 100}}
	SetBudget(sc, plain, rules, 70)
	if sc.Window.TracerOwn != 0 || math.Abs(sc.Budget["work"]-60) > 1e-9 {
		t.Errorf("TracerOwn %v, work %v; want 0 and 60", sc.Window.TracerOwn, sc.Budget["work"])
	}
}
