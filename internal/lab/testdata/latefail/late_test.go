// Package latefail holds benchmarks that break only past b.N=1, where the
// probe cannot see it: the testing package then prints a result line of 0
// iterations and NaN ns/op before the panic, and a metric a benchmark
// reports can be NaN or infinite (0/0).
package latefail

import (
	"math"
	"testing"
)

var sink int

// BenchmarkLatePanic passes the probe's b.N=1 and panics at any larger b.N.
func BenchmarkLatePanic(b *testing.B) {
	if b.N > 1 {
		panic("latefail: panics past b.N=1")
	}
}

// BenchmarkNaNMetric is measured as usual and reports a ratio that is 0/0.
func BenchmarkNaNMetric(b *testing.B) {
	for i := range b.N {
		sink += i
	}
	b.ReportMetric(math.NaN(), "hits/op")
	b.ReportMetric(math.Inf(1), "ratio")
}

// BenchmarkFine is an ordinary benchmark beside them.
func BenchmarkFine(b *testing.B) {
	for i := range b.N {
		sink += i
	}
}
