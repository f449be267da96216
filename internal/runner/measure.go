package runner

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"runtime/trace"
	"sort"
	"sync"
	"time"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/store"
)

// counters is a snapshot of the process-wide figures a repetition is
// measured by. Differences between two snapshots are the repetition's cost.
type counters struct {
	wall       time.Time
	cpu        time.Duration // user+sys of the whole process (getrusage)
	allocBytes uint64
	allocObjs  uint64
	gcCycles   uint64
	gcCPU      float64 // seconds, runtime estimate
	totalCPU   float64 // seconds, runtime estimate
}

// metricNames are the runtime's own CPU estimates, read with
// runtime/metrics. They are only comparable with each other (not with
// getrusage), so the GC share is gc/total over total.
var metricNames = []string{
	"/cpu/classes/gc/total:cpu-seconds",
	"/cpu/classes/total:cpu-seconds",
}

type sampler struct {
	samples []metrics.Sample
	mem     runtime.MemStats
}

func newSampler() *sampler {
	s := &sampler{samples: make([]metrics.Sample, len(metricNames))}
	for i, n := range metricNames {
		s.samples[i].Name = n
	}
	return s
}

// read fills c, outside the timed region. Allocation counts come from
// runtime.ReadMemStats, which flushes every P's cached spans first:
// runtime/metrics counts small allocations only when a span is refilled, so
// a repetition's last allocations could go missing (measured: 50 allocations
// of 64 B read as 0). The stop-the-world it costs is outside the clock.
func (s *sampler) read(c *counters) {
	s.readGC(c)
	runtime.ReadMemStats(&s.mem)
	c.allocBytes, c.allocObjs, c.gcCycles = s.mem.TotalAlloc, s.mem.Mallocs, uint64(s.mem.NumGC)
	c.cpu = processCPU()
	c.wall = time.Now()
}

// readGC fills c's GC and total CPU estimates from runtime/metrics.
func (s *sampler) readGC(c *counters) {
	metrics.Read(s.samples)
	f := func(i int) float64 {
		if s.samples[i].Value.Kind() == metrics.KindFloat64 {
			return s.samples[i].Value.Float64()
		}
		return 0
	}
	c.gcCPU, c.totalCPU = f(0), f(1)
}

// liveCase is a case being measured: its shared state, its workers and
// what has been measured so far.
type liveCase struct {
	spec    perflab.CaseSpec
	name    string
	cs      perflab.Case
	workers []perflab.Worker
	bytes   int64 // per op, from perflab.Byteser; 0 if not reported
	n       int   // ops per worker per repetition, from calibration
	// bytesPerGC is the bytes allocated per GC cycle in the timed
	// repetitions (B/op over gc/op), which the profiling window holds its
	// GC to; 0 leaves the window's GC alone.
	bytesPerGC float64
	labels     *pprof.LabelSet
	failed     error
	// opsPerMicro adds an ops/µs metric (Scenario.OpsPerMicrosecond).
	opsPerMicro bool
	// stop is the run's context: when it ends, a repetition stops
	// waiting for its workers (see runWorkers). nil waits always.
	stop context.Context
	// windowLost says the profiling window lost context-switch records.
	windowLost bool
	// sliceWarnings are the warnings of its traced slices, each once.
	sliceWarnings []store.Warning
	// abandoned is set when a repetition was abandoned with its workers
	// still running: they cannot be killed, so the case's state must not
	// be closed under them.
	abandoned bool
}

// errAbandoned is wrapped, with the context's error, by runWorkers when the
// run ends during a repetition.
var errAbandoned = errors.New("repetition abandoned, its workers left to finish")

// repResult is one timed repetition.
type repResult struct {
	ops     int64
	wall    time.Duration
	metrics map[string]float64
	// round is the round the repetition was timed in (0-based).
	round int
}

// workerPanic is a panic in a scenario's worker, reported as the case's
// failure.
type workerPanic struct {
	value any
	stack []byte
}

func (p *workerPanic) Error() string {
	return fmt.Sprintf("worker panicked: %v\n%s", p.value, p.stack)
}

// runWorkers runs every worker of c for n operations on its own goroutine
// and returns the wall time between releasing them and the last one
// finishing. Goroutines are started and parked before the clock starts.
// before and after, if non-nil, are filled just outside the timed region.
//
// When c.stop ends first (Ctrl-C, SIGTERM), the repetition is abandoned:
// runWorkers stops waiting and returns an error wrapping errAbandoned, and
// the repetition is not counted. Worker goroutines cannot be killed; they
// finish their n operations in the background while the run is saved, or
// the process exits first (issue 14: a 5 s repetition, or a worker that
// hangs, kept Ctrl-C waiting). The clock is read by the goroutine the last
// worker wakes, as done.Wait did before, so the watchdog adds no wake-up to
// the timed region.
func (c *liveCase) runWorkers(n int, s *sampler, before, after *counters) (time.Duration, error) {
	if c.stop != nil {
		if err := c.stop.Err(); err != nil {
			return 0, err
		}
	}
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, len(c.workers))
	ready.Add(len(c.workers))
	done.Add(len(c.workers))
	for i, w := range c.workers {
		go workerLoop(w, n, c.labels, &ready, start, &done, &errs[i])
	}
	// The waiter and what it captures are allocated, and the stop channel
	// fetched, before the before-counters are read: allocs/op stays exact.
	var t0 time.Time
	var d time.Duration
	finished := make(chan struct{})
	go func() {
		// t0 is written before close(start), which comes before the
		// workers' Done: no race.
		done.Wait()
		d = time.Since(t0)
		close(finished)
	}()
	var stopped <-chan struct{}
	if c.stop != nil {
		stopped = c.stop.Done()
	}
	ready.Wait()
	if before != nil {
		s.read(before)
	}
	t0 = time.Now()
	close(start)
	select {
	case <-finished:
	case <-stopped:
		c.abandoned = true
		return time.Since(t0), fmt.Errorf("%w: %w", errAbandoned, c.stop.Err())
	}
	if after != nil {
		s.read(after)
	}
	for _, err := range errs {
		if err != nil {
			return d, err
		}
	}
	return d, nil
}

// workerLoop is the body of every worker goroutine. Profiles are filtered
// to goroutines that have this function on their stack, so the harness's
// own goroutines (waits, the profiler's ticker) do not pollute budgets. Keep
// its name in sync with workerFrame.
//
//go:noinline
func workerLoop(w perflab.Worker, n int, labels *pprof.LabelSet, ready *sync.WaitGroup, start chan struct{}, done *sync.WaitGroup, errp *error) {
	defer done.Done()
	defer func() {
		if v := recover(); v != nil {
			*errp = &workerPanic{value: v, stack: debug.Stack()}
		}
	}()
	if labels != nil {
		pprof.SetGoroutineLabels(pprof.WithLabels(bgctx, *labels))
	}
	ready.Done()
	// The start region covers the wait for the release: internal/wallclock
	// leaves out the time parked on start (before the clock) but counts the
	// time from the release until the worker gets a CPU as sched — with
	// more workers than Ps, half of them wait a time slice to begin, and
	// that is in the repetition's wall time (3–20% of the goroutine time at
	// four workers on two cores, measured by internal/truth).
	starting := trace.StartRegion(bgctx, startRegion)
	<-start
	starting.End()
	// The region marks the worker's own time for the execution trace of the
	// profiling window (internal/wallclock counts only inside it). When no
	// trace is running StartRegion is one atomic load, once a repetition.
	region := trace.StartRegion(bgctx, workerRegion)
	w.Run(n)
	region.End()
}

// workerRegion is the runtime/trace region type around each worker's Run,
// startRegion the one around its wait for the release.
const (
	workerRegion = "perflab.worker"
	startRegion  = "perflab.start"
)

// workerFrame is workerLoop's function name as it appears in profiles.
const workerFrame = "github.com/perflab/perflab/internal/runner.workerLoop"

// rep runs one timed repetition and returns its figures per operation.
func (c *liveCase) rep(s *sampler) (repResult, error) {
	countsBefore := sumCounts(c.workers)
	// Like testing.B, start every repetition from a collected heap so one
	// case's garbage is not billed to the next.
	runtime.GC()
	var b, a counters
	wall, err := c.runWorkers(c.n, s, &b, &a)
	if err != nil {
		return repResult{}, err
	}
	ops := int64(c.n) * int64(len(c.workers))
	fops := float64(ops)
	m := map[string]float64{
		"ns/op":      float64(wall.Nanoseconds()) / fops,
		"cpu-ns/op":  float64((a.cpu - b.cpu).Nanoseconds()) / fops,
		"ops/s":      fops / wall.Seconds(),
		"B/op":       float64(a.allocBytes-b.allocBytes) / fops,
		"allocs/op":  float64(a.allocObjs-b.allocObjs) / fops,
		"alloc-MB/s": float64(a.allocBytes-b.allocBytes) / 1e6 / wall.Seconds(),
		"gc/op":      float64(a.gcCycles-b.gcCycles) / fops,
	}
	// The runtime's CPU classes are brought up to date only when a GC cycle
	// ends (Go 1.26), so the after-figures cover the repetition only up to
	// its last collection: 1.6–6.7% across repetitions with identical gc/op
	// (issue 9). The before-figures were read just after rep's runtime.GC,
	// so ending the window with another one makes it cover the whole
	// repetition, plus the collection of its own garbage — which is its
	// cost — outside the clock.
	runtime.GC()
	var g counters
	s.readGC(&g)
	if total := g.totalCPU - b.totalCPU; total > 0 {
		m["gc-cpu-%"] = 100 * (g.gcCPU - b.gcCPU) / total
	}
	if c.opsPerMicro {
		m["ops/µs"] = fops / (wall.Seconds() * 1e6)
	}
	if c.bytes > 0 {
		m["MB/s"] = float64(c.bytes) * fops / 1e6 / wall.Seconds()
	}
	addPerOp(m, countsBefore, sumCounts(c.workers), fops)
	return repResult{ops: ops, wall: wall, metrics: m}, nil
}

// calibrate finds how many operations per worker make one repetition last
// about target, growing the count like testing.B does.
func (c *liveCase) calibrate(target time.Duration) error {
	n := 1
	for {
		d, err := c.runWorkers(n, nil, nil, nil)
		if err != nil {
			return err
		}
		if d >= target*8/10 || n >= 1<<40 {
			c.n = n
			return nil
		}
		next := n * 100
		if d > 0 {
			// Aim 20% past the target so the last step rarely falls short.
			predicted := float64(n) * float64(target) / float64(d) * 1.2
			if predicted < float64(next) {
				next = int(predicted)
			}
		}
		if next <= n {
			next = n + 1
		}
		n = next
	}
}

// recalibrate re-times the calibrated count, after warmup, as the median
// of three repetitions, and rescales it if the repetition is off target by
// more than a fifth: the first calibration runs cold and from one sample.
func (c *liveCase) recalibrate(target time.Duration) error {
	var ds [3]time.Duration
	for i := range ds {
		d, err := c.runWorkers(c.n, nil, nil, nil)
		if err != nil {
			return err
		}
		ds[i] = d
	}
	sort.Slice(ds[:], func(i, j int) bool { return ds[i] < ds[j] })
	med := ds[1]
	if med <= 0 {
		return nil
	}
	if ratio := float64(target) / float64(med); ratio > 1.2 || ratio < 0.8 {
		c.n = max(1, int(float64(c.n)*ratio))
	}
	return nil
}

// addPerOp sets m[name+"/op"] to what each counter counted from before to
// after, per operation of ops.
func addPerOp(m map[string]float64, before, after map[string]int64, ops float64) {
	for name, v := range after {
		m[name+"/op"] = float64(v-before[name]) / ops
	}
}

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
