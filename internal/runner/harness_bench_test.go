package runner

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"os"
	"os/exec"
	"sort"
	"testing"
	"time"

	"github.com/felixge/fgprof"
	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/store"
	"golang.org/x/perf/benchfmt"
)

// These benchmarks check the harness against testing.B and itself; run
// them with `make bench` (-benchtime 1x: each iteration is a whole
// comparison) and read the ratio metrics.

type emptyWorker struct{ n int }

func (w *emptyWorker) Run(n int) {
	for i := 0; i < n; i++ {
		w.n++
	}
}

type shaWorker struct {
	buf [64]byte
	out byte
}

func (w *shaWorker) Run(n int) {
	for i := 0; i < n; i++ {
		d := sha256.Sum256(w.buf[:])
		w.out ^= d[0]
	}
}

func singleVariant(name string, mk func() perflab.Worker) *perflab.Scenario {
	return &perflab.Scenario{Name: name, Variants: []perflab.Variant{{Name: "v", New: func(perflab.Params) (perflab.Case, error) {
		return perflab.CaseFunc(func(int) perflab.Worker { return mk() }), nil
	}}}}
}

// perflabMedian measures the scenario's one case with perflab and returns
// the median ns/op.
func perflabMedian(tb testing.TB, s *perflab.Scenario) float64 {
	run := &store.Run{}
	r := &Runner{Scenario: s, Run: run, Save: &memSaver{}, Progress: &quietProgress{},
		Opts: Options{Count: 10, Time: 100 * time.Millisecond, Warmup: 100 * time.Millisecond, Profile: []string{}}}
	if err := r.Execute(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return run.Cases[0].Stats["ns/op"].Median
}

// BenchmarkEmptyOp and BenchmarkSHA256Op are the testing.B side of the
// comparisons below: plain benchmarks of the same workers.
func BenchmarkEmptyOp(b *testing.B)  { (&emptyWorker{}).Run(b.N) }
func BenchmarkSHA256Op(b *testing.B) { (&shaWorker{}).Run(b.N) }

// testingMedian runs benchmark name with real testing.B, ten times, in a
// child test process (testing.Benchmark cannot run inside a running
// benchmark: it waits for the benchmark lock), reads its output with
// benchfmt and returns the median ns/op.
func testingMedian(tb testing.TB, name string) float64 {
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^"+name+"$", "-test.benchtime=1s", "-test.count=10")
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("%s: %v\n%s", name, err, out)
	}
	var xs []float64
	rd := benchfmt.NewReader(bytes.NewReader(out), name)
	for rd.Scan() {
		if res, ok := rd.Result().(*benchfmt.Result); ok {
			if v, ok := res.Value("sec/op"); ok {
				xs = append(xs, v*1e9)
			}
		}
	}
	if len(xs) != 10 {
		tb.Fatalf("%s: read %d results from:\n%s", name, len(xs), out)
	}
	sort.Float64s(xs)
	return (xs[4] + xs[5]) / 2
}

// BenchmarkHarnessOverhead compares a near-empty operation measured by
// perflab and by testing.B. Target: ratio ≤ 1.1.
func BenchmarkHarnessOverhead(b *testing.B) {
	for i := 0; i < b.N; i++ {
		tb := testingMedian(b, "BenchmarkEmptyOp")
		pl := perflabMedian(b, singleVariant("empty", func() perflab.Worker { return &emptyWorker{} }))
		b.ReportMetric(pl, "perflab-ns/op")
		b.ReportMetric(tb, "testingB-ns/op")
		b.ReportMetric(pl/tb, "perflab/testingB")
	}
}

// BenchmarkAgreementSHA256 compares SHA-256 of 64 bytes measured by
// perflab and by testing.B. Target: medians within 5%.
func BenchmarkAgreementSHA256(b *testing.B) {
	for i := 0; i < b.N; i++ {
		tb := testingMedian(b, "BenchmarkSHA256Op")
		pl := perflabMedian(b, singleVariant("sha", func() perflab.Worker { return &shaWorker{} }))
		b.ReportMetric(pl, "perflab-ns/op")
		b.ReportMetric(tb, "testingB-ns/op")
		b.ReportMetric(pl/tb, "perflab/testingB")
	}
}

// BenchmarkWallProfilerOverhead runs SHA-256 workers in pairs of
// repetitions, one with the fgprof wall-clock profiler running and one
// without, alternating which goes first, and reports the ratio of median
// throughputs. Target: ≤ 5% slower (ratio ≥ 0.95).
func BenchmarkWallProfilerOverhead(b *testing.B) {
	for i := 0; i < b.N; i++ {
		c := &liveCase{workers: []perflab.Worker{&shaWorker{}, &shaWorker{}}}
		if err := c.calibrate(50 * time.Millisecond); err != nil {
			b.Fatal(err)
		}
		var on, off []float64
		for pair := 0; pair < 10; pair++ {
			for k := 0; k < 2; k++ {
				profiled := (pair+k)%2 == 0
				var stop func() error
				if profiled {
					stop = fgprof.Start(io.Discard, fgprof.FormatPprof)
				}
				d, err := c.runWorkers(c.n, nil, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				if stop != nil {
					stop()
				}
				ops := float64(2*c.n) / d.Seconds()
				if profiled {
					on = append(on, ops)
				} else {
					off = append(off, ops)
				}
			}
		}
		sort.Float64s(on)
		sort.Float64s(off)
		b.ReportMetric((on[4]+on[5])/(off[4]+off[5]), "profiled/unprofiled-throughput")
	}
}
