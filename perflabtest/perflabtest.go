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
	"context"
	"errors"
	"testing"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/live"
)

// Benchmark runs one case under testing.B: b.N operations split as evenly as
// possible over c.Threads worker goroutines, so ns/op means the same as in a
// perflab run (wall time over total operations). Counter metrics are
// reported with b.ReportMetric and Byteser with b.SetBytes.
func Benchmark(b *testing.B, s *perflab.Scenario, c perflab.CaseSpec) {
	lc, err := live.New(context.Background(), s, c, nil)
	if errors.Is(err, perflab.ErrNotApplicable) {
		b.Skipf("%s: %v", s.CaseName(c), err)
	}
	if err != nil {
		b.Fatalf("%s: %v", s.CaseName(c), err)
	}
	defer lc.Close()
	if by := lc.Bytes(); by > 0 {
		b.SetBytes(by)
	}
	before := lc.Counts()
	b.ReportAllocs()
	// The timer runs from the workers' release to the last one's end, as a
	// perflab repetition's clock does.
	if _, err := lc.RunTotal(context.Background(), b.N, &live.Meter{Before: b.ResetTimer, After: b.StopTimer}); err != nil {
		b.Fatalf("%s: %v", s.CaseName(c), err)
	}
	for name, total := range lc.Counts() {
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
