package runner

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/felixge/fgprof"
	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/live"
	"github.com/perflab/perflab/internal/model"
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
	run := &model.Run{}
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

// BenchmarkSHA256Op is the testing.B side of the agreement check below: a
// plain benchmark of the same worker.
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
// and their ratio, which it returns.
func againstTestingB(b *testing.B, bench string, worker func() perflab.Worker) float64 {
	var ratio float64
	for i := 0; i < b.N; i++ {
		tb, pl := interleaved(b, bench, singleVariant("v", worker))
		b.ReportMetric(pl, "perflab-ns/op")
		b.ReportMetric(tb, "testingB-ns/op")
		ratio = pl / tb
		b.ReportMetric(ratio, "perflab/testingB")
	}
	return ratio
}

// maxDisagreement is the README's target for perflab against testing.B on
// the same code: medians within 5%.
const maxDisagreement = 0.05

// BenchmarkAgreementSHA256 compares SHA-256 of 64 bytes measured by
// perflab and by testing.B, and fails when the medians differ by more than
// 5%.
func BenchmarkAgreementSHA256(b *testing.B) {
	if r := againstTestingB(b, "BenchmarkSHA256Op", func() perflab.Worker { return &shaWorker{} }); math.Abs(r-1) > maxDisagreement {
		b.Errorf("perflab ÷ testing.B = %.3f on SHA-256 of 64 B (target within ±%.0f%%)", r, 100*maxDisagreement)
	}
}

// Targets for the harness's cost per repetition. The timed region of a
// repetition is: release the parked workers, let each run n operations,
// wait for the last. Whatever the harness adds there (labels, the trace
// region, the wake-up) is added to every repetition's wall time and so
// biases ns/op by overhead/--time. The bias must stay under 0.1% of the
// default 200 ms repetition, and the harness may add at most 20 µs to a
// bare loop of the same shape (goroutines, a start channel, a WaitGroup).
const (
	maxRepBias    = 0.001
	maxRepExtraUs = 20
)

// BenchmarkRepetitionOverhead measures the timed region of repetitions of
// no operations — perflab's runWorkers against a bare loop of the same
// shape, interleaved — and fails when the harness biases a default
// repetition by more than 0.1% or adds more than 20 µs to the bare loop.
// (It replaces a near-empty-operation check that compared different code
// shapes and so could not see the harness: issue 10.)
func BenchmarkRepetitionOverhead(b *testing.B) {
	for i := 0; i < b.N; i++ {
		workers := []perflab.Worker{&emptyWorker{}, &emptyWorker{}}
		c := &liveCase{lc: live.Of(map[string]string{"case": "overhead"}, nil, workers...)}
		var harness, bare []float64
		for k := 0; k < 400; k++ {
			if k%2 == 0 {
				d, err := c.runWorkers(0, nil, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				harness = append(harness, float64(d.Nanoseconds()))
			} else {
				bare = append(bare, float64(bareRepetition(workers).Nanoseconds()))
			}
		}
		h, bb := median(harness), median(bare)
		b.ReportMetric(h/1e3, "harness-µs/rep")
		b.ReportMetric(bb/1e3, "bare-µs/rep")
		bias := h / float64(200*time.Millisecond)
		b.ReportMetric(100*bias, "bias-%-of-200ms")
		if bias > maxRepBias {
			b.Errorf("a repetition's timed region costs %.1f µs: %.3f%% of a 200 ms repetition (target ≤ %.1f%%)", h/1e3, 100*bias, 100*maxRepBias)
		}
		if extra := (h - bb) / 1e3; extra > maxRepExtraUs {
			b.Errorf("the harness adds %.1f µs to a bare repetition loop of the same shape (target ≤ %d µs)", extra, maxRepExtraUs)
		}
	}
}

// bareRepetition is runWorkers without the harness: the same goroutines,
// start channel and WaitGroup, no labels, no region, no recover.
func bareRepetition(workers []perflab.Worker) time.Duration {
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(len(workers))
	done.Add(len(workers))
	for _, w := range workers {
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			w.Run(0)
		}()
	}
	ready.Wait()
	t0 := time.Now()
	close(start)
	done.Wait()
	return time.Since(t0)
}

// BenchmarkWallProfilerOverhead runs SHA-256 workers in pairs of
// repetitions, one with the fgprof wall-clock profiler running and one
// without, alternating which goes first, and reports the ratio of median
// throughputs. Target: ≤ 5% slower (ratio ≥ 0.95).
func BenchmarkWallProfilerOverhead(b *testing.B) {
	for i := 0; i < b.N; i++ {
		c := &liveCase{lc: live.Of(nil, nil, &shaWorker{}, &shaWorker{})}
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
		ratio := (on[4] + on[5]) / (off[4] + off[5])
		b.ReportMetric(ratio, "profiled/unprofiled-throughput")
		if ratio < 0.95 {
			b.Errorf("throughput with fgprof on is %.3f of off (target ≥ 0.95)", ratio)
		}
	}
}
