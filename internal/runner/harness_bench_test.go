package runner

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
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

// perflabSamples measures the scenario's one case with perflab, count
// repetitions of one second each like testing.B's, and returns their ns/op.
func perflabSamples(tb testing.TB, s *perflab.Scenario, count int) []float64 {
	run := &store.Run{}
	r := &Runner{Scenario: s, Run: run, Save: &memSaver{}, Progress: &quietProgress{},
		Opts: Options{Count: count, Time: time.Second, Warmup: 100 * time.Millisecond, Profile: []string{}}}
	if err := r.Execute(context.Background()); err != nil {
		tb.Fatal(err)
	}
	var xs []float64
	for _, rep := range run.Cases[0].Reps {
		xs = append(xs, rep.Metrics["ns/op"])
	}
	return xs
}

// BenchmarkEmptyOp and BenchmarkSHA256Op are the testing.B side of the
// comparisons below: plain benchmarks of the same workers.
func BenchmarkEmptyOp(b *testing.B)  { (&emptyWorker{}).Run(b.N) }
func BenchmarkSHA256Op(b *testing.B) { (&shaWorker{}).Run(b.N) }

// testingSamples runs benchmark name with real testing.B in a child test
// process (testing.Benchmark cannot run inside a running benchmark: it
// waits for the benchmark lock) and reads its output with benchfmt.
func testingSamples(tb testing.TB, name string, count int) []float64 {
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^"+name+"$", "-test.benchtime=1s", fmt.Sprintf("-test.count=%d", count))
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
	if len(xs) != count {
		tb.Fatalf("%s: read %d results from:\n%s", name, len(xs), out)
	}
	return xs
}

func median(xs []float64) float64 {
	xs = append([]float64(nil), xs...)
	sort.Float64s(xs)
	n := len(xs)
	return (xs[(n-1)/2] + xs[n/2]) / 2
}

// interleaved measures the same work with testing.B and perflab in
// alternating blocks, so a change in machine load over the minute it takes
// falls on both sides, and returns both medians.
func interleaved(b *testing.B, bench string, s *perflab.Scenario) (tb, pl float64) {
	var tbs, pls []float64
	for block := 0; block < 5; block++ {
		tbs = append(tbs, testingSamples(b, bench, 2)...)
		pls = append(pls, perflabSamples(b, s, 2)...)
	}
	return median(tbs), median(pls)
}

// againstTestingB measures worker with testing.B (benchmark bench runs
// the same code) and with perflab, interleaved, and reports both medians
// and their ratio.
func againstTestingB(b *testing.B, bench string, worker func() perflab.Worker) {
	for i := 0; i < b.N; i++ {
		tb, pl := interleaved(b, bench, singleVariant("v", worker))
		b.ReportMetric(pl, "perflab-ns/op")
		b.ReportMetric(tb, "testingB-ns/op")
		b.ReportMetric(pl/tb, "perflab/testingB")
	}
}

// BenchmarkHarnessOverhead compares a near-empty operation measured by
// perflab and by testing.B. Target: ratio ≤ 1.1.
func BenchmarkHarnessOverhead(b *testing.B) {
	againstTestingB(b, "BenchmarkEmptyOp", func() perflab.Worker { return &emptyWorker{} })
}

// BenchmarkAgreementSHA256 compares SHA-256 of 64 bytes measured by
// perflab and by testing.B. Target: medians within 5%.
func BenchmarkAgreementSHA256(b *testing.B) {
	againstTestingB(b, "BenchmarkSHA256Op", func() perflab.Worker { return &shaWorker{} })
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
