package truth

import (
	"bytes"
	"fmt"
	"io"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab"
)

// BenchmarkTracerCost measures what the execution tracer (with the CPU
// profiler, as the runner's profiling window has them) does to each
// class's time/op: b.N pairs of 200 ms windows, traced and untraced in
// alternating order; it reports the median of the pairs' ratios
// (traced/untraced) and both times per operation. Issue 22 asks for the
// tracer's cost per scenario: a class whose operations emit many events (a
// system call per write and read, a goroutine per half) runs slower
// traced. A loaded machine moves one pair by ±50%: run it quiet, e.g.
//
//	go test -run '^$' -bench TracerCost -benchtime 9x ./internal/truth/
func BenchmarkTracerCost(b *testing.B) {
	if raceEnabled {
		b.Skip("the race detector changes the timings")
	}
	const window = 200 * time.Millisecond
	s := Scenario(nil)
	for _, v := range s.Variants {
		for _, n := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", v.Name, n), func(b *testing.B) {
				c, err := v.New(nil)
				if err != nil {
					b.Skip(err)
				}
				if cl, ok := c.(io.Closer); ok {
					defer cl.Close()
				}
				workers := make([]perflab.Worker, n)
				for i := range workers {
					workers[i] = c.NewWorker(i)
				}
				run(workers, window) // warm-up
				var ratios, plain, traced []float64
				for i := 0; b.Loop(); i++ {
					var x, y float64
					if i%2 == 0 {
						x = run(workers, window)
						y = runTraced(b, workers, window)
					} else {
						y = runTraced(b, workers, window)
						x = run(workers, window)
					}
					plain, traced = append(plain, x), append(traced, y)
					ratios = append(ratios, y/x)
				}
				b.ReportMetric(median(ratios), "traced/untraced")
				b.ReportMetric(median(plain), "untraced-ns/op")
				b.ReportMetric(median(traced), "traced-ns/op")
				b.ReportMetric(0, "ns/op") // the pairs' own time says nothing
			})
		}
	}
}

// run runs every worker for d, in batches of 64 operations, and returns
// the time per operation of the workers (wall time × workers / ops).
func run(workers []perflab.Worker, d time.Duration) float64 {
	var ops atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Since(start) < d {
				w.Run(64)
				ops.Add(64)
			}
		}()
	}
	wg.Wait()
	return float64(time.Since(start)) * float64(len(workers)) / float64(ops.Load())
}

// runTraced is run with the execution tracer and the CPU profiler on.
func runTraced(t testing.TB, workers []perflab.Worker, d time.Duration) float64 {
	var cpu bytes.Buffer
	if err := pprof.StartCPUProfile(&cpu); err != nil {
		t.Fatal(err)
	}
	defer pprof.StopCPUProfile()
	if err := trace.Start(io.Discard); err != nil {
		t.Fatal(err)
	}
	defer trace.Stop()
	return run(workers, d)
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
