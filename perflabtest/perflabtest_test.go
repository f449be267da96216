package perflabtest

import (
	"testing"

	"github.com/perflab/perflab"
)

type countWorker struct{ n int64 }

func (w *countWorker) Run(n int)                { w.n += int64(n) }
func (w *countWorker) Counts() map[string]int64 { return map[string]int64{"events": w.n} }

// TestBenchmarkSplitsAndReports: b.N operations are split over the case's
// goroutines, and a Counter's totals come back per operation.
func TestBenchmarkSplitsAndReports(t *testing.T) {
	s := &perflab.Scenario{Name: "count", Variants: []perflab.Variant{{Name: "v", New: func(perflab.Params) (perflab.Case, error) {
		return perflab.CaseFunc(func(int) perflab.Worker { return &countWorker{} }), nil
	}}}}
	res := testing.Benchmark(func(b *testing.B) { Benchmark(b, s, perflab.CaseSpec{Variant: "v", Threads: 3}) })
	if res.N == 0 {
		t.Fatal("benchmark did not run")
	}
	if got := res.Extra["events/op"]; got != 1 {
		t.Errorf("events/op = %v, want 1 (each operation counts one event, whichever worker ran it)", got)
	}
}

// TestBenchmarkPanickingNew: a panic in the variant's New fails that
// benchmark, saying so, instead of ending the test binary (internal/live
// recovers it, as perflab run does).
func TestBenchmarkPanickingNew(t *testing.T) {
	s := &perflab.Scenario{Name: "boom", Variants: []perflab.Variant{{Name: "v", New: func(perflab.Params) (perflab.Case, error) {
		panic("no config")
	}}}}
	res := testing.Benchmark(func(b *testing.B) { Benchmark(b, s, perflab.CaseSpec{Variant: "v", Threads: 2}) })
	if res.N != 0 {
		t.Errorf("a benchmark whose New panicked ran %d operations", res.N)
	}
}
