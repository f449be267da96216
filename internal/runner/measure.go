package runner

import (
	"context"
	"math"
	"runtime"
	"runtime/metrics"
	"slices"
	"time"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/live"
	"github.com/perflab/perflab/internal/model"
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
	spec perflab.CaseSpec
	name string
	// lc is the case's state and workers, once set up (internal/live).
	lc    *live.Case
	bytes int64 // per op, from perflab.Byteser; 0 if not reported
	n     int   // ops per worker per repetition, from calibration
	// repWall is the median wall time of its timed repetitions so far.
	repWall time.Duration
	// bytesPerGC is the bytes allocated per GC cycle in the timed
	// repetitions (B/op over gc/op), which the profiling window holds its
	// GC to; 0 leaves the window's GC alone.
	bytesPerGC float64
	failed     error
	// opsPerMicro adds an ops/µs metric (Scenario.OpsPerMicrosecond).
	opsPerMicro bool
	// stop is the run's context: when it ends, a repetition stops
	// waiting for its workers (see live.Case.Run). nil waits always.
	stop context.Context
	// windowLost says the profiling window lost context-switch records.
	windowLost bool
	// sliceWarnings are the warnings of its traced slices, each once.
	sliceWarnings []model.Warning
}

// errAbandoned is wrapped, with the context's error, when the run ends
// during a case's New or a repetition (live.ErrAbandoned).
var errAbandoned = live.ErrAbandoned

// errInterrupted is wrapped when the run ended a repetition, whether its
// workers returned within live.StopGrace or were abandoned.
var errInterrupted = live.ErrInterrupted

// repResult is one timed repetition.
type repResult struct {
	ops     int64
	wall    time.Duration
	metrics map[string]float64
	// round is the round the repetition was timed in (0-based).
	round int
}

// runWorkers runs every worker of c for n operations (live.Case.Run) and
// returns the wall time between releasing them and the last one finishing.
// before and after, if non-nil, are filled just outside the timed region.
// When c.stop ends first (Ctrl-C, SIGTERM), the repetition is abandoned
// with an error wrapping errAbandoned.
func (c *liveCase) runWorkers(n int, s *sampler, before, after *counters) (time.Duration, error) {
	ctx := c.stop
	if ctx == nil {
		ctx = bgctx
	}
	if before == nil && after == nil {
		return c.lc.Run(ctx, n, nil)
	}
	return c.lc.Run(ctx, n, &live.Meter{
		Before: func() { s.read(before) },
		After:  func() { s.read(after) },
	})
}

// workerRegion is the runtime/trace region type around each worker's Run,
// startRegion the one around its wait for the release.
const (
	workerRegion = live.Region
	startRegion  = live.StartRegion
)

// workerFrame is the function of every worker goroutine, as profiles name
// it.
const workerFrame = live.WorkerFrame

// rep runs one timed repetition and returns its figures per operation.
func (c *liveCase) rep(s *sampler) (repResult, error) {
	countsBefore := c.lc.Counts()
	// Like testing.B, start every repetition from a collected heap so one
	// case's garbage is not billed to the next.
	runtime.GC()
	var b, a counters
	wall, err := c.runWorkers(c.n, s, &b, &a)
	if err != nil {
		return repResult{}, err
	}
	ops := int64(c.n) * int64(c.lc.Threads())
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
	addPerOp(m, countsBefore, c.lc.Counts(), fops)
	return repResult{ops: ops, wall: wall, metrics: m}, nil
}

// calibrate finds how many operations per worker make one repetition last
// about target (live.Case.Calibrate).
func (c *liveCase) calibrate(target time.Duration) error {
	ctx := c.stop
	if ctx == nil {
		ctx = bgctx
	}
	n, err := c.lc.Calibrate(ctx, target)
	if err == nil {
		c.n = n
	}
	return err
}

// recalReps is how many repetitions at the calibrated count re-time it.
const recalReps = 3

// recalibrate runs repetitions until warm has passed and recalReps have
// run, and re-times the count by the median time per operation of the
// last recalReps: the first calibration runs cold and from one sample.
// A repetition more than maxRecalOff off target rescales the count for
// the next at once: Calibrate's count ran 1.2 times the target (its aim),
// and three repetitions of it took 0.71 s a case where 0.6 s were
// wanted.
//
// These repetitions are the warm-up. A separate 300 ms one before them
// (two more of cipher-cache's repetitions, 11 s of make run) bought
// nothing measurable on the quiet 2-core VM. Without it, the first of the
// three ran 0.93–1.04 times the other two (median 1.00, 24 cases), and
// round 1's time/op over the median of rounds 2–10 had a median of 1.00,
// 1.04 and 0.98 in three runs of the 24 cases (cases above 1.05: 4, 10,
// 3); with it, 1.00 and 1.00 in two (9 and 8).
func (c *liveCase) recalibrate(target time.Duration, warm time.Time) error {
	var perOp []float64 // each repetition's wall time per operation of a worker
	for len(perOp) < recalReps || time.Now().Before(warm) {
		d, err := c.runWorkers(c.n, nil, nil, nil)
		if err != nil {
			return err
		}
		perOp = append(perOp, float64(d)/float64(c.n))
		c.retime(target, float64(d)/float64(c.n))
	}
	perOp = perOp[len(perOp)-recalReps:]
	slices.Sort(perOp)
	c.retime(target, perOp[recalReps/2])
	return nil
}

// retime rescales the count to last target at perOp a worker's operation,
// if at the count it is more than maxRecalOff off target. It grows the
// count at most live.MaxGrowth times, to at most live.MaxCount, as
// Calibrate does: a no-op worker's repetition can time at a few
// nanoseconds, and the count it implied overflowed int (a CI run saw
// ops -4.9e18).
func (c *liveCase) retime(target time.Duration, perOp float64) {
	if perOp <= 0 {
		return
	}
	if ratio := float64(target) / (perOp * float64(c.n)); math.Abs(ratio-1) > maxRecalOff {
		c.n = scaleCount(c.n, min(ratio, live.MaxGrowth))
	}
}

// scaleCount is n times ratio, rounded and kept within 1..live.MaxCount;
// n itself (so kept) for a ratio that is not a number, which min and max
// would pass on to int's conversion, a huge negative count on amd64.
func scaleCount(n int, ratio float64) int {
	if math.IsNaN(ratio) {
		ratio = 1
	}
	return int(max(1, min(math.Round(float64(n)*ratio), live.MaxCount)))
}

// maxRecalOff is how far off target the re-timed count's repetition may
// be before it is rescaled. Calibrate aims 20% past the target so that
// its last step rarely falls short; with a fifth allowed here the
// repetitions kept most of that: cipher-cache's 240 timed repetitions at
// --time 200ms took 225 ms on average (54.1 s), and each traced slice,
// as long as its case's repetition, as much more.
const maxRecalOff = 0.05

// runAbout runs c's workers once for about d: the calibrated count
// scaled by d over the case's median timed repetition (the count alone
// before any). Repetitions until d had passed (runFor) overran it by 0.6
// of a repetition on average: 0.655 s for cipher-cache's 0.5 s mutex and
// block windows.
func (c *liveCase) runAbout(d time.Duration) (time.Duration, error) {
	n := c.n
	if c.repWall > 0 {
		n = scaleCount(c.n, float64(d)/float64(c.repWall))
	}
	return c.runWorkers(n, nil, nil, nil)
}

// addPerOp sets m[name+"/op"] to what each counter counted from before to
// after, per operation of ops.
func addPerOp(m map[string]float64, before, after map[string]int64, ops float64) {
	for name, v := range after {
		m[name+"/op"] = float64(v-before[name]) / ops
	}
}
