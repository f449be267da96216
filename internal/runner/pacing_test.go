package runner

import (
	"context"
	"runtime/metrics"
	"runtime/trace"
	"testing"
	"time"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/profiles"
)

// gcSplitWorker allocates 1 KiB per operation, keeping almost nothing
// live (so its heap is below the GC's 4 MB minimum, where every live byte
// the harness adds changes how often it is collected), and counts the GC
// cycles that end during its runs, apart for runs with the execution tracer
// on (the profiling window) and off (calibration, warmup, timed rounds).
type gcSplitWorker struct {
	sample           []metrics.Sample
	traced, untraced [2]uint64 // cycles, ops
	_                [64]byte
	keep             []byte
}

var gcSplitSink []byte

func (w *gcSplitWorker) Run(n int) {
	metrics.Read(w.sample)
	c0 := w.sample[0].Value.Uint64()
	for i := 0; i < n; i++ {
		gcSplitSink = make([]byte, 1024)
	}
	metrics.Read(w.sample)
	side := &w.untraced
	if trace.IsEnabled() {
		side = &w.traced
	}
	side[0] += w.sample[0].Value.Uint64() - c0
	side[1] += uint64(n)
}

// TestWindowGCPacing checks that the profiling window collects garbage as
// often per operation as the timed repetitions do. It did not: the window's
// execution trace grew in a bytes.Buffer (4–20 MB a second), the profilers'
// sample buffers (about 4.5 MB) sit on the Go heap too, and for a small heap
// that raised the GC's heap goal from 4 MB to 14–35 MB: the window ran
// 0.22–0.37× the timed GC cycles per op, its time/op came out 15–50% below the timed
// median (suite-lookup stdlib, cipher-stream stdlib), and the budget, whose
// shares come from the window, understated gc and alloc.
func TestWindowGCPacing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a profiling window of a second")
	}
	w := &gcSplitWorker{sample: []metrics.Sample{{Name: gcCyclesMetric}}}
	s := &perflab.Scenario{Name: "gc-pacing", Threads: []int{1}, Variants: []perflab.Variant{{Name: "alloc", New: func(perflab.Params) (perflab.Case, error) {
		return perflab.CaseFunc(func(int) perflab.Worker { return w }), nil
	}}}}
	run := &store.Run{}
	r := &Runner{Scenario: s, Run: run, Save: &memSaver{}, Progress: &quietProgress{}, Rules: profiles.DefaultRules(),
		Opts: Options{Count: 5, Time: 100 * time.Millisecond, Warmup: 100 * time.Millisecond, ProfileTime: time.Second, Profile: []string{"wall"}}}
	if err := r.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	if w.traced[1] == 0 || w.untraced[0] == 0 {
		t.Fatalf("no profiling window, or no GC while untraced: traced %v, untraced %v (cycles, ops)", w.traced, w.untraced)
	}
	untraced := float64(w.untraced[0]) / float64(w.untraced[1])
	traced := float64(w.traced[0]) / float64(w.traced[1])
	ratio := traced / untraced
	t.Logf("GC cycles per Mop: untraced %.1f, profiling window %.1f (%.2f×)", untraced*1e6, traced*1e6, ratio)
	if ratio < 0.6 || ratio > 1.6 {
		t.Errorf("the profiling window ran %.2f× the GC cycles per op of the untraced repetitions (want 0.6–1.6×)", ratio)
	}
	if win := run.Cases[0].Window; win == nil || win.GCPerOp <= 0 {
		t.Errorf("the window's GC cycles per op were not recorded: %+v", win)
	}
}
