package runner

import (
	"errors"
	"io"
	"runtime/trace"
	"slices"
	"testing"
	"time"

	"github.com/perflab/perflab"
	_ "github.com/perflab/perflab/scenarios/all"
)

// maxTracerOverhead is issue 9's target for the tracer's cost on throughput
// in the profiling window: at most 5% slower.
const maxTracerOverhead = 0.05

// tracerPairs is how many traced and untraced windows are paired per case.
const tracerPairs = 9

// BenchmarkTracerOverhead measures, for one case of every built-in scenario
// (its first variant at its default parameters, at each end of its default
// goroutine counts), the throughput of the runner's own profiling window
// (tracedWindow: execution tracer and CPU profiler on, ProfileTime long)
// against the same window with nothing on, in pairs in one process with the
// order alternating, and fails when the median of the pairs' ratios is more
// than 5% slower. The budget's shares come from that window, so a tracer
// that slowed the work would bias them — by at most about the slowdown in
// points, when all of it lands in one category.
//
// The target is on wall-clock throughput, ops/s, which is what a slowdown
// is. Process CPU is reported beside it but is no proxy for a lock-bound
// case: there, the tracer's ~70 ns per scheduling event lengthens each
// hand-off, and the waiters on the idle core spin longer (measured on
// mutex/keys=1024/threads=4: +0.6 s of CPU over 2.2 s, a third of it in
// procyield inside Mutex.lockSlow) while ops/s fell 6%.
func BenchmarkTracerOverhead(b *testing.B) {
	for _, name := range []string{"cipher-cache", "suite-lookup", "uuid-hash", "cipher-stream"} {
		s, err := perflab.Lookup(name)
		if err != nil {
			b.Fatal(err)
		}
		specs, err := s.Matrix(perflab.Selection{Variants: []string{s.Variants[0].Name}})
		if err != nil {
			b.Fatal(err)
		}
		for _, spec := range []perflab.CaseSpec{specs[0], specs[len(specs)-1]} {
			b.Run(s.CaseName(spec), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					c := &liveCase{spec: spec, name: s.CaseName(spec)}
					r := &Runner{Scenario: s, Progress: &quietProgress{}, Opts: Options{Time: 100 * time.Millisecond, Warmup: 100 * time.Millisecond}}
					r.Opts.Defaults()
					if err := r.setupCase(c); err != nil {
						b.Fatal(err)
					}
					wall, cpu := pairedWindows(b, r, c, tracerPairs)
					if cl, ok := c.cs.(interface{ Close() error }); ok {
						cl.Close()
					}
					b.ReportMetric(median(wall), "traced/untraced-wall")
					b.ReportMetric(slices.Min(wall), "min-wall")
					b.ReportMetric(slices.Max(wall), "max-wall")
					b.ReportMetric(median(cpu), "traced/untraced-cpu")
					if got := median(wall); got < 1-maxTracerOverhead {
						b.Errorf("%s: throughput with the tracer on is %.3f of off (median of %d pairs, range %.3f–%.3f; target ≥ %.2f)",
							c.name, got, len(wall), slices.Min(wall), slices.Max(wall), 1-maxTracerOverhead)
					}
				}
			})
		}
	}
}

// pairedWindows runs pairs of profiling windows of c, one traced as the
// runner traces it and one with nothing on, alternating which goes first
// so drift in machine load falls on both sides, and returns each pair's
// ratio of throughputs, traced over untraced: by wall time and by the
// process's CPU time (getrusage, which includes the tracer's own work).
func pairedWindows(tb testing.TB, r *Runner, c *liveCase, pairs int) (wall, cpu []float64) {
	for pair := 0; pair < pairs; pair++ {
		var wallOps, cpuOps [2]float64
		for k := 0; k < 2; k++ {
			traced := (pair+k)%2 == 0
			cpu0 := processCPU()
			var ops int64
			var elapsed time.Duration
			var err error
			if traced {
				tw := r.tracedWindow(c, true)
				ops, elapsed, err = tw.ops, tw.elapsed, tw.err
				if err == nil && !tw.traceOn {
					err = errors.New("the execution tracer did not start")
				}
			} else {
				ops, elapsed, err = r.runFor(c, r.Opts.ProfileTime)
			}
			used := processCPU() - cpu0
			if err != nil {
				tb.Fatal(err)
			}
			side := 1
			if traced {
				side = 0
			}
			wallOps[side], cpuOps[side] = float64(ops)/elapsed.Seconds(), float64(ops)/used.Seconds()
		}
		wall, cpu = append(wall, wallOps[0]/wallOps[1]), append(cpu, cpuOps[0]/cpuOps[1])
	}
	return wall, cpu
}

// BenchmarkTracerHandoff measures what the execution tracer adds to one
// goroutine hand-off: two goroutines pass a value back and forth over
// unbuffered channels, with the tracer off and on, in alternating blocks.
// A round trip is two blocks, two wake-ups and two starts, each a traced
// event, most with a stack. It is the price a lock- or channel-bound case
// pays per scheduling event in the profiling window (see
// BenchmarkTracerOverhead), and it has no target: it is the runtime's.
func BenchmarkTracerHandoff(b *testing.B) {
	const trips = 200_000
	pingpong := func() time.Duration {
		a, c := make(chan int), make(chan int)
		go func() {
			for v := range a {
				c <- v
			}
		}()
		start := time.Now()
		for i := range trips {
			a <- i
			<-c
		}
		d := time.Since(start)
		close(a)
		return d
	}
	for i := 0; i < b.N; i++ {
		var off, on []float64
		for block := 0; block < 5; block++ {
			off = append(off, float64(pingpong().Nanoseconds())/trips)
			if err := trace.Start(io.Discard); err != nil {
				b.Fatal(err)
			}
			on = append(on, float64(pingpong().Nanoseconds())/trips)
			trace.Stop()
		}
		b.ReportMetric(median(off), "untraced-ns/trip")
		b.ReportMetric(median(on), "traced-ns/trip")
		b.ReportMetric((median(on)-median(off))/6, "traced-ns/event")
	}
}
