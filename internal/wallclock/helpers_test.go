package wallclock

import (
	"testing"
	"time"

	"github.com/perflab/perflab/profiles"
	"golang.org/x/exp/trace"
)

// stack makes a trace stack of funcs, leaf first.
func stack(funcs ...string) trace.Stack {
	frames := make([]trace.StackFrame, len(funcs))
	for i, f := range funcs {
		frames[i] = trace.StackFrame{PC: uint64(i + 1), Func: f}
	}
	return trace.MakeStack(frames)
}

// TestHelperSampleRoot: a fed helper's function is learnt from a CPU sample
// only where the profiler unwound the sample whole, and a runtime root says
// the goroutine is not a helper at all.
func TestHelperSampleRoot(t *testing.T) {
	const pool = "example.com/pool.worker"
	for _, tt := range []struct {
		name   string
		sample trace.Stack
		root   string
		helper bool
	}{
		{name: "unwound whole",
			sample: stack("crypto/internal/fips140/sha256.blockSHANI", pool, "runtime.goexit"),
			root:   pool, helper: true},
		// Under the race detector, or in the vDSO, a sample can stop
		// short: its last frame is no root.
		{name: "stopped at time.now",
			sample: stack("runtime.nanotime1", "time.now"),
			helper: true},
		{name: "stopped at racecall",
			sample: stack("__tsan_read", "runtime.racecall"),
			helper: true},
		{name: "pseudo frame",
			sample: stack("runtime._System", "runtime._System"),
			helper: true},
		// A goroutine parked since before the trace has no stack when
		// a worker wakes it: the sweeper, readied by the worker's mark
		// termination, is the runtime's.
		{name: "the runtime's",
			sample: stack("runtime.sweepone", "runtime.bgsweep", "runtime.goexit"),
			root:   "runtime.bgsweep"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := &accountant{}
			w := &gor{counted: true}
			g := &gor{helper: true, parent: w, state: trace.GoRunning,
				pieces: []piece{{from: 0, to: 10, weight: 1, run: true}}}
			a.helperSample(g, 20, tt.sample)
			if g.root != tt.root || g.helper != tt.helper {
				t.Errorf("root %q, helper %v; want %q, %v", g.root, g.helper, tt.root, tt.helper)
			}
			if tt.helper {
				if got := g.pieces[0].root; got != tt.root {
					t.Errorf("earlier running piece's root %q, want %q", got, tt.root)
				}
				if len(g.runSamples) != 1 {
					t.Errorf("%d samples kept for its running piece, want 1", len(g.runSamples))
				}
			} else if len(g.pieces) > 0 || len(g.runSamples) > 0 || g.parent != nil {
				t.Errorf("the runtime's goroutine keeps %d pieces, %d samples, parent %v", len(g.pieces), len(g.runSamples), g.parent != nil)
			}
		})
	}
}

// TestHelperSamplesCount: Result.HelperSamples counts the samples taken
// within the charged running, each at its share, once: not once more for
// each key that fell back to other samples, nor none where the shares of
// several keys each round to 0.
func TestHelperSamplesCount(t *testing.T) {
	const ms = 1e6
	hash, other := stack("crypto/internal/fips140/sha256.block", "w.hash", "runtime.goexit"), stack("w.other", "runtime.goexit")
	type pool = map[trace.Stack]float64
	for _, tt := range []struct {
		name    string
		run     map[helpKey]float64 // ms charged
		charged map[helpKey]pool    // samples within it
		all     map[string]map[trace.Stack]int
		want    int
	}{
		{name: "one key",
			run:     map[helpKey]float64{{1, "w"}: 300},
			charged: map[helpKey]pool{{1, "w"}: {hash: 29, other: 1}},
			all:     map[string]map[trace.Stack]int{"w": {hash: 29, other: 31}},
			want:    30},
		// Three helpers at once: each sample a third of its instant.
		{name: "thirds over three waits",
			run:     map[helpKey]float64{{1, "w"}: 3, {2, "w"}: 3, {3, "w"}: 3},
			charged: map[helpKey]pool{{1, "w"}: {hash: 1. / 3}, {2, "w"}: {hash: 1. / 3}, {3, "w"}: {hash: 1. / 3}},
			all:     map[string]map[trace.Stack]int{"w": {hash: 3}},
			want:    1},
		{name: "a third: at least one",
			run:     map[helpKey]float64{{1, "w"}: 3},
			charged: map[helpKey]pool{{1, "w"}: {hash: 1. / 3}},
			all:     map[string]map[trace.Stack]int{"w": {hash: 1}},
			want:    1},
		// Short waits elsewhere, none of whose running was sampled,
		// are split by the function's samples, which are not more
		// samples of the charged time.
		{name: "fallback to the function's samples",
			run:     map[helpKey]float64{{1, "w"}: 300, {2, "w"}: 1, {3, "w"}: 1},
			charged: map[helpKey]pool{{1, "w"}: {hash: 30}},
			all:     map[string]map[trace.Stack]int{"w": {hash: 30, other: 30}},
			want:    30},
		{name: "fallback to the same waits' samples",
			run:     map[helpKey]float64{{1, "w"}: 300, {1, ""}: 20},
			charged: map[helpKey]pool{{1, "w"}: {hash: 30}},
			all:     map[string]map[trace.Stack]int{"w": {hash: 30}},
			want:    30},
		{name: "profiler off",
			run:  map[helpKey]float64{{1, "w"}: 300},
			want: 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := &accountant{rules: profiles.DefaultRules(), res: &Result{}, helpRun: map[helpKey]time.Duration{},
				helpSamples: map[helpKey]map[trace.Stack]float64{}, helperSamples: tt.all}
			// The keys' chains: via 1..3, each one wait at a stack.
			for range 3 {
				a.viaID(stack("sync.(*WaitGroup).Wait", "w.op"), 0)
			}
			for k, d := range tt.run {
				a.helpRun[k] = time.Duration(d * ms)
			}
			for k, p := range tt.charged {
				a.helpSamples[k] = p
			}
			newBuilder().addHelped(a)
			if a.res.HelperSamples != tt.want {
				t.Errorf("HelperSamples %d, want %d", a.res.HelperSamples, tt.want)
			}
		})
	}
}

// TestHelperStampsBounded: a helper's timed samples are bounded over the
// trace, however long it runs and however its running is cut in pieces.
func TestHelperStampsBounded(t *testing.T) {
	a := &accountant{}
	g := &gor{helper: true, state: trace.GoRunning}
	s := stack("w.spin", "w.helper", "runtime.goexit")
	kept := 0
	for i := range 3 * maxStamps {
		a.helperSample(g, trace.Time(i), s)
		if i%100 == 99 { // a running piece ends
			kept += len(g.runSamples)
			a.help(g, trace.Time(i-99), trace.Time(i+1))
		}
	}
	kept += len(g.runSamples)
	if kept > maxStamps {
		t.Errorf("%d timed samples kept of one helper; want at most %d", kept, maxStamps)
	}
	if n := a.helperSamples["w.helper"][s]; n != 3*maxStamps {
		t.Errorf("the function's pool has %d samples; want all %d", n, 3*maxStamps)
	}
}
