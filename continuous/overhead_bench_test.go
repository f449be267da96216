//go:build unix

package continuous_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/continuous"
	_ "github.com/perflab/perflab/scenarios/all"
)

// maxWallOverhead is issue 12's target for the continuous wall-clock
// profiler's cost: at most 3% of the throughput.
const maxWallOverhead = 0.03

// The benchmark's profiler runs with Start's duty cycle (a third of the
// time traced) at a tenth of its period, so a pair of repetitions takes 3 s
// rather than 30; a window's fixed costs (starting and stopping the tracer,
// encoding and sending the profile) weigh ten times more than at the
// default 5 s of 15 s, so the figure errs high.
const (
	benchPeriod = 1500 * time.Millisecond
	benchWindow = 500 * time.Millisecond
	benchPairs  = 7
)

func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runFor runs every worker until d has passed, each calling Run(n), and
// returns the operations done.
func runFor(workers []perflab.Worker, n int, d time.Duration) int64 {
	var ops atomic.Int64
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				w.Run(n)
				ops.Add(int64(n))
			}
		}()
	}
	wg.Wait()
	return ops.Load()
}

func median(xs []float64) float64 {
	sort.Float64s(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

// BenchmarkWallOverhead measures, on one case of every built-in scenario
// (its first variant at the scenario's largest default goroutine count), the
// throughput with the continuous wall-clock profiler running against
// without, in alternating pairs of repetitions in one process, with the CPU
// profiler on in both (a service under Start has pyroscope-go's), and fails
// above 3%. The target is checked on throughput per CPU second of the
// whole process, which counts the profiler's own parsing and uploads and
// which a shared machine's load disturbs far less than wall time.
func BenchmarkWallOverhead(b *testing.B) {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer sink.Close()
	for _, name := range []string{"cipher-cache", "suite-lookup", "uuid-hash", "cipher-stream"} {
		s, err := perflab.Lookup(name)
		if err != nil {
			b.Fatal(err)
		}
		specs, err := s.Matrix(perflab.Selection{Variants: []string{s.Variants[0].Name}})
		if err != nil {
			b.Fatal(err)
		}
		spec := specs[len(specs)-1]
		b.Run(s.CaseName(spec), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				v, _ := s.Variant(spec.Variant)
				cs, err := v.New(spec.Params)
				if err != nil {
					b.Fatal(err)
				}
				var workers []perflab.Worker
				for id := 0; id < spec.Threads; id++ {
					workers = append(workers, cs.NewWorker(id))
				}
				// Run calls of about 5 ms, and a warmup.
				n := 1
				for t0 := time.Now(); ; t0 = time.Now() {
					workers[0].Run(n)
					if time.Since(t0) > 5*time.Millisecond || n > 1<<28 {
						break
					}
					n *= 2
				}
				runFor(workers, n, 200*time.Millisecond)
				if err := pprof.StartCPUProfile(io.Discard); err != nil {
					b.Fatal(err)
				}
				var with, without, cpuWith, cpuWithout []float64
				for pair := 0; pair < benchPairs; pair++ {
					for k := 0; k < 2; k++ {
						on := (pair+k)%2 == 0
						var stop func()
						cpu0, t0 := processCPU(), time.Now()
						if on {
							if stop, err = continuous.StartWall(sink.URL, benchPeriod, benchWindow); err != nil {
								b.Fatal(err)
							}
						}
						ops := float64(runFor(workers, n, benchPeriod))
						if stop != nil {
							stop() // its last window's parse and upload count too
						}
						wall, cpu := ops/time.Since(t0).Seconds(), ops/(processCPU()-cpu0).Seconds()
						if on {
							with, cpuWith = append(with, wall), append(cpuWith, cpu)
						} else {
							without, cpuWithout = append(without, wall), append(cpuWithout, cpu)
						}
					}
				}
				pprof.StopCPUProfile()
				if cl, ok := cs.(io.Closer); ok {
					cl.Close()
				}
				wall, cpu := median(with)/median(without), median(cpuWith)/median(cpuWithout)
				b.ReportMetric(wall, "profiled/unprofiled-wall")
				b.ReportMetric(cpu, "profiled/unprofiled-cpu")
				if cpu < 1-maxWallOverhead {
					b.Errorf("%s: CPU throughput with the wall-clock profiler on is %.3f of off (target ≥ %.2f; wall %.3f)", s.CaseName(spec), cpu, 1-maxWallOverhead, wall)
				}
			}
		})
	}
}
