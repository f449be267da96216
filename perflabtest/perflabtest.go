// Package perflabtest runs a perflab scenario's variants under go test
// -bench, with the case names and results.txt header that `perflab run`
// writes, so benchstat compares the two directly:
//
//	func BenchmarkCipherCache(b *testing.B) { perflabtest.BenchmarkScenario(b, Scenario) }
//
// It is a package of its own so that the perflab package, which every
// scenario and every binary built with perflabcmd links, does not import
// testing.
package perflabtest

import (
	"errors"
	"sync"
	"testing"

	"github.com/perflab/perflab"
)

// Benchmark runs one case under testing.B: b.N operations split as evenly as
// possible over c.Threads worker goroutines, so ns/op means the same as in a
// perflab run (wall time over total operations). Counter metrics are
// reported with b.ReportMetric and Byteser with b.SetBytes.
func Benchmark(b *testing.B, s *perflab.Scenario, c perflab.CaseSpec) {
	v, err := s.Variant(c.Variant)
	if err != nil {
		b.Fatal(err)
	}
	cs, err := v.New(c.Params)
	if errors.Is(err, perflab.ErrNotApplicable) {
		b.Skipf("%s: %v", s.CaseName(c), err)
	}
	if err != nil {
		b.Fatalf("%s: %v", s.CaseName(c), err)
	}
	if cl, ok := cs.(interface{ Close() error }); ok {
		defer cl.Close()
	}
	if by, ok := cs.(perflab.Byteser); ok {
		b.SetBytes(by.Bytes())
	}
	workers := make([]perflab.Worker, c.Threads)
	for i := range workers {
		workers[i] = cs.NewWorker(i)
	}
	before := sumCounts(workers)
	b.ReportAllocs()
	b.ResetTimer()
	if len(workers) == 1 {
		workers[0].Run(b.N)
	} else {
		var wg sync.WaitGroup
		for i, w := range workers {
			n := b.N / len(workers)
			if i < b.N%len(workers) {
				n++
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.Run(n)
			}()
		}
		wg.Wait()
	}
	b.StopTimer()
	for name, total := range sumCounts(workers) {
		b.ReportMetric(float64(total-before[name])/float64(b.N), name+"/op")
	}
}

// BenchmarkScenario runs every default case of s as a sub-benchmark named
// like a perflab case ("variant=mutex/keys=128/threads=4"), so
// `go test -bench` and benchstat see the same names as `perflab run`.
func BenchmarkScenario(b *testing.B, s *perflab.Scenario) {
	if b.Name() != s.BenchName() {
		b.Fatalf("benchmark %s runs scenario %s, whose results.txt names it %s: rename the function or set Scenario.Benchmark, so benchstat can compare the two", b.Name(), s.Name, s.BenchName())
	}
	cases, err := s.Matrix(perflab.Selection{})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range cases {
		b.Run(s.CaseName(c), func(b *testing.B) { Benchmark(b, s, c) })
	}
}

// sumCounts adds up the Counter metrics of workers.
func sumCounts(workers []perflab.Worker) map[string]int64 {
	out := map[string]int64{}
	for _, w := range workers {
		if c, ok := w.(perflab.Counter); ok {
			for k, v := range c.Counts() {
				out[k] += v
			}
		}
	}
	return out
}
