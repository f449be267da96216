package truth

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/runner"
	"github.com/perflab/perflab/profiles"
)

var (
	variantsFlag = flag.String("truth.variants", "", "comma-separated truth variants to run (default all)")
	threadsFlag  = flag.String("truth.threads", "", "comma-separated goroutine counts (default 1,2,4)")
	dumpFlag     = flag.String("truth.dump", "", "directory to write every case's profiles to, for go tool pprof")
	traceFlag    = flag.String("truth.trace", runner.TraceSlices, "where the budget's trace is taken: slices (perflab's default) or window")
)

// tolerance is how far, in share points, a budget row may be from the
// truth. Where a budget splits running time by CPU samples, a share p of
// it from n samples is good to about ±100·√(p(1−p)/n) points: ±2.5 for
// p = 0.5 at the 400 samples two busy cores give in the suite's window;
// where a case has fewer, a sampled row gets three standard errors if that
// is wider (sampledTolerance). The truth's model is good to about a point.
const tolerance = 0.05

// options are the runner options of the suite: repetitions of 300 ms, long
// against the 10–20 ms a fourth worker can wait for a time slice, so that
// uneven starts and finishes are a small part of each; six rounds, each
// with a traced slice as long as its timed repetition (perflab's default,
// --trace slices), the fewest that give the tracer's paired effect an
// interval (runner.MinIntervalReps), and 1.8 s of traced time per case, for
// about 360 CPU samples at two cores. The recorder times the workers in
// the traced slices only (Recorder.TracedOnly), the executions the budget
// describes.
func options() (runner.Options, error) {
	o := runner.Options{Count: 6, Time: 300 * time.Millisecond, Warmup: 200 * time.Millisecond, ProfileTime: 1800 * time.Millisecond,
		// Only the profiles the budget is made from: the mutex and block
		// window would be recorded as part of the budget's window.
		Profile: []string{"wall", "cpu"},
		Trace:   *traceFlag}
	if o.Trace != runner.TraceSlices && o.Trace != runner.TraceWindow {
		return o, fmt.Errorf("-truth.trace %q: want %s or %s", o.Trace, runner.TraceSlices, runner.TraceWindow)
	}
	if *variantsFlag != "" {
		o.Selection.Variants = strings.Split(*variantsFlag, ",")
	}
	if *threadsFlag != "" {
		for _, f := range strings.Split(*threadsFlag, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				return o, fmt.Errorf("-truth.threads: %v", err)
			}
			o.Selection.Threads = append(o.Selection.Threads, n)
		}
	}
	return o, nil
}

// newRunner is the one place the suite builds a runner, so a change of the
// runner's classification hook is a one-line change here.
func newRunner(s *perflab.Scenario, run *model.Run, prog runner.Progress, opts runner.Options) (*runner.Runner, error) {
	rules, err := profiles.DefaultRules().WithUser(UserRules...)
	if err != nil {
		return nil, err
	}
	if rules, err = rules.WithWork(s.Work...); err != nil {
		return nil, err
	}
	return &runner.Runner{Scenario: s, Run: run, Save: &memSaver{}, Progress: prog, Opts: opts, Rules: rules, NoFlame: true}, nil
}

// memSaver keeps a run's files in memory.
type memSaver struct {
	mu    sync.Mutex
	files map[string][]byte
}

func (m *memSaver) WriteFile(rel string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.files == nil {
		m.files = map[string][]byte{}
	}
	m.files[rel] = data
	return nil
}

func (m *memSaver) Checkpoint() error { return nil }

// recordingProgress records the workers' timelines in the traced
// executions (Recorder.TracedOnly): the runner runs one case at a time and
// calls Step(case) after each of its turns — a round's timed repetition
// and traced slice, or a profiling window — between repetitions, so a Step
// closes one case's recording and opens the next's. Each recording is one
// traced slice (or window), analysed alone: its truth is the slice's, as
// its trace is.
type recordingProgress struct {
	rec      *Recorder
	procs    int
	started  bool
	truths   map[string][]Truth
	errs     map[string]error
	warnings []string
}

func (p *recordingProgress) Phase(name string, total int) {
	if !p.started {
		p.rec.Start()
		p.started = true
	}
}

func (p *recordingProgress) Step(name string) {
	logs, m, err := p.rec.Stop()
	defer p.rec.Start()
	if err == nil && len(logs) == 0 {
		return // no traced execution since the last step
	}
	var t Truth
	if err == nil {
		t, err = Analyze(logs, m, p.procs)
	}
	if err != nil {
		if p.errs[name] == nil {
			p.errs[name] = err
		}
		return
	}
	p.truths[name] = append(p.truths[name], t)
}

func (p *recordingProgress) Warn(msg string) { p.warnings = append(p.warnings, msg) }

// TestTruthBudget runs the truth scenario through the real runner, at one,
// two and four goroutines, and checks every row of every case's budget
// against what the workers timed of themselves in the same traced
// executions: shares, never absolute times, so a loaded machine slows
// both alike.
func TestTruthBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation of every lock and channel operation changes the timings; `make truth` runs this suite without -race")
	}
	if testing.Short() {
		t.Skip("two minutes of measurement; run without -short")
	}
	procs := runtime.GOMAXPROCS(0)
	opts, err := options()
	if err != nil {
		t.Fatal(err)
	}
	threads := opts.Selection.Threads
	if len(threads) == 0 {
		threads = Scenario(nil).Threads
	}
	rec, err := NewRecorder(slices.Max(threads))
	if err != nil {
		t.Fatal(err)
	}
	rec.TracedOnly = true
	s := Scenario(rec)
	prog := &recordingProgress{rec: rec, procs: procs, truths: map[string][]Truth{}, errs: map[string]error{}}
	if *spinFlag > 0 {
		stop, err := startSpinners(*spinFlag)
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			cpu, err := stop()
			if err != nil {
				t.Error(err)
			}
			t.Logf("beside %d spinning process(es), which took %v of CPU", *spinFlag, cpu.Round(time.Second))
		}()
	}
	t.Logf("trace %s, beside %d spinning process(es); load %s", opts.Trace, *spinFlag, loadAvg())
	run := &model.Run{}
	r, err := newRunner(s, run, prog, opts)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := r.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d cases in %v, GOMAXPROCS=%d; runner warnings: %q", len(run.Cases), time.Since(start).Round(time.Second), procs, prog.warnings)
	if *dumpFlag != "" {
		if err := dump(*dumpFlag, r.Save.(*memSaver)); err != nil {
			t.Error(err)
		}
	}

	var all strings.Builder
	var cal calibration
	for _, c := range run.Cases {
		name := c.Variant + "/threads=" + strconv.Itoa(c.Threads)
		t.Run(name, func(t *testing.T) {
			if c.Status != model.StatusOK {
				t.Fatalf("case %s: %s", c.Status, c.Error)
			}
			if err := prog.errs[c.Name]; err != nil {
				t.Fatalf("truth: %v", err)
			}
			trs, ok := prog.truths[c.Name]
			if !ok {
				t.Fatal("no truth recorded: was the case traced?")
			}
			tr := Mean(trs)
			rows := compare(c, tr)
			if !c.BudgetTrust.Untrusted() {
				cal.add(rows)
			}
			table := formatTable(c, tr, rows)
			all.WriteString(table)
			if len(c.Budget) == 0 {
				t.Fatalf("no budget (warnings %q)\n%s", c.Warnings, table)
			}
			var bad []string
			for _, r := range rows {
				if r.asserted && r.off() {
					bad = append(bad, r.name)
				}
			}
			if len(bad) > 0 && c.BudgetTrust.Untrusted() {
				// Issue 22: a share off the truth is allowed only on a row
				// the budget marks as untrusted, with its reason (the
				// table's ?): never a wrong unmarked row.
				t.Logf("MARKED (%s): rows %s off the truth, on a budget marked untrusted:\n%s", report.TrustReason(c.BudgetTrust), strings.Join(bad, ", "), table)
				return
			}
			if len(bad) > 0 {
				t.Errorf("budget rows %s off the truth by more than %.0f points (or three standard errors of their CPU samples):\n%s", strings.Join(bad, ", "), 100*tolerance, table)
			} else {
				t.Logf("\n%s", table)
			}
		})
	}
	t.Logf("perflab's ± (a 95%% interval from the CPU samples) on the work rows of trusted budgets: %s", cal)
	t.Logf("all cases: budget and truth shares in points; timed is the workers' own counters in the timed pass (means, no runnable correction)\n%s", all.String())
}

// calibration gathers how far the work rows of trusted budgets are from
// the truth in units of perflab's own standard error (its ± over 1.96):
// near 1 root-mean-square and 95% within the ±, the ± is what it says.
type calibration struct {
	z []float64
}

func (c *calibration) add(rows []row) {
	for _, r := range rows {
		// work only: its truth is a point (the thread CPU clock), where
		// other's is a range that hides how far inside it a row is.
		if r.name == "work" && r.perr > 0 {
			c.z = append(c.z, r.diff()/(r.perr/1.96))
		}
	}
}

func (c calibration) String() string {
	if len(c.z) == 0 {
		return "no rows"
	}
	var ss float64
	in := 0
	for _, z := range c.z {
		ss += z * z
		if math.Abs(z) <= 1.96 {
			in++
		}
	}
	return fmt.Sprintf("%d of %d rows within it, off the truth by %.2f standard errors root-mean-square", in, len(c.z), math.Sqrt(ss/float64(len(c.z))))
}

// loadAvg is the machine's load average (/proc/loadavg), for the log: the
// suite's figures are read with it.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// dump writes the run's files under dir.
func dump(dir string, m *memSaver) error {
	for rel, data := range m.files {
		path := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// row is one line of a case's comparison.
type row struct {
	name   string
	budget float64
	// truth is the workers' own figure; lo and hi bound it when the
	// collector may have taken CPUs from them (Truth.Displaced).
	truth, lo, hi float64
	// timed is the share the workers' counters give in the timed pass,
	// without the runnable correction (NaN where the counters cannot say).
	timed float64
	// note explains a row, e.g. how a combined row is made up.
	note string
	// asserted rows must be within tolerance, or within tol() where
	// that is wider; the others are shown only.
	asserted bool
	// sampledAt is sampledTolerance at a share, for the rows the CPU
	// samples split (nil for the others); at least is a floor, for a
	// combined row its members' widest.
	sampledAt func(share float64) float64
	atLeast   float64
	// perr is the product's own ± on the row (model.Case.BudgetErr, a
	// 95% half-width, as a share), 0 where it has none: shown, and
	// summarised over the suite to check its calibration.
	perr float64
}

// tol is how far the row may be off by the CPU samples' chance: three
// standard errors at the truth's share nearest the budget, the
// hypothesis the row tests. At the budget's own share the error shrinks
// as the budget errs toward 0 or 100%: a CI run read work 37.0 against a
// truth of 31.8 from 67 samples (sleep, one goroutine, beside a
// spinner), a tolerance of 4.5 points at 37.0 and 6.3 at 31.8.
func (r row) tol() float64 {
	t := r.atLeast
	if r.sampledAt != nil {
		t = max(t, r.sampledAt(min(max(r.budget, r.lo), r.hi)))
	}
	return t
}

// diff is how far the budget is outside the truth's range.
func (r row) diff() float64 {
	switch {
	case r.budget < r.lo:
		return r.budget - r.lo
	case r.budget > r.hi:
		return r.budget - r.hi
	}
	return 0
}

func (r row) off() bool { return math.Abs(r.diff()) > max(tolerance, r.tol()) }

// sampledTolerance is how far a share that the running time's split by CPU
// samples decides can be off by chance: three standard errors of the
// samples' fraction q = share/running, n samples, in the running share.
// The 5-point tolerance assumes the 400 samples of two busy cores; one
// goroutine has one core's 200, where a work share near half is good to
// ±3.4 points (one error) and a CI run read 61.5 against a 53.9 bound
// (alloc at one goroutine; the next four runs were within the bound).
// The samples are not independent draws, so the error is widened by the
// dispersion perflab's own ± is (runner.SampleDispersion, 1.5): held to
// three independent-sample errors, a quiet CI run read nolock at one
// goroutine work 67.6 against 76.4 from 221 samples (8.8 points, 8.5
// allowed), and the same run's trusted work rows strayed 1.26 such
// errors root-mean-square.
//
// A fan-out's running is mostly its helpers', charged to its workers'
// waits and split by the helpers' own samples (HelpedRunning,
// HelperSamples), as perflab's ± has it: each pool adds its error, at
// one fraction q of the two pools' running. Held to the workers' few
// samples alone (17, running 5%), a quiet CI run failed fanout-chan at
// one goroutine on its wall work, 53.8 against 59.6 from 159 helper
// samples: 5.8 points, 5 allowed, where those samples allow about 7.
func sampledTolerance(share float64, pools ...samplePool) float64 {
	var running, v float64
	for _, p := range pools {
		if p.n > 0 && p.running > 0 {
			running += p.running
		}
	}
	if running <= 0 {
		return 0
	}
	q := min(1, share/running)
	for _, p := range pools {
		if p.n > 0 && p.running > 0 {
			v += p.running * p.running * q * (1 - q) / float64(p.n)
		}
	}
	return 3 * runner.SampleDispersion * math.Sqrt(v)
}

// samplePool is running time (a share of the workers' time) split by n
// CPU samples.
type samplePool struct {
	running float64
	n       int
}

// compare lines up a case's budget shares with its truth. Alloc and gc are
// one row: time.Now around an allocation loop includes its assists and
// write barriers, which the budget rightly calls gc.
//
// In the alloc variant, alloc+gc and sched are asserted only together.
// Collections make workers wait in ways the model cannot place: an assist
// that finds no mark work parks (blocked, gc, though inside the allocation
// loop the model counts as wanting a CPU), and a goroutine stopped for a
// stack scan is blocked too. Measured at four workers on two Ps: model
// sched 40%, budget sched 22% and gc 39%; their sums 77% and 74%.
func compare(c model.Case, tr Truth) []row {
	var sum float64
	for _, v := range c.Budget {
		sum += v
	}
	share := func(cat string) float64 {
		if sum <= 0 {
			return 0
		}
		return c.Budget[cat] / sum
	}
	timed := func(units ...string) float64 {
		// Means, which add up as medians do not.
		total := c.Stats[CountTotal+"/op"].Mean
		if total <= 0 {
			return math.NaN()
		}
		var v float64
		for _, u := range units {
			v += c.Stats[u+"/op"].Mean
		}
		return v / total
	}
	tw, tl, tq, ta := timed(CountWork), timed(CountLock), timed(CountWait), timed(CountAlloc)
	var pools []samplePool
	if w := c.Window; w != nil {
		pools = []samplePool{{w.Running, w.CPUSamples}, {w.HelpedRunning, w.HelperSamples}}
	}
	sampled := func(share float64) float64 { return sampledTolerance(share, pools...) }
	perr := func(cats ...string) float64 {
		var v float64
		for _, cat := range cats {
			e := c.BudgetErr[cat]
			v += e * e
		}
		if sum <= 0 {
			return 0
		}
		return math.Sqrt(v) / sum
	}
	d, k := tr.Displaced, tr.Delayed
	gcApart := c.Variant != "alloc"
	rows := []row{
		{name: "work", budget: share("work"), truth: tr.Work, lo: tr.Lowest(tr.Work, true), hi: tr.Work, timed: tw, asserted: true, sampledAt: sampled, perr: perr("work")},
		{name: "lock", budget: share("lock"), truth: tr.Lock, lo: tr.Lowest(tr.Lock, false), hi: tr.Lock, timed: tl, asserted: true},
		{name: "wait", budget: share("wait"), truth: tr.Wait, lo: tr.Lowest(tr.Wait, false), hi: tr.Wait, timed: tq, asserted: true},
		{name: "alloc+gc", budget: share("alloc") + share("gc"), truth: tr.Alloc, lo: tr.Lowest(tr.Alloc, true), hi: tr.Alloc + d,
			timed: ta, asserted: gcApart, note: fmt.Sprintf("alloc %.1f gc %.1f", 100*share("alloc"), 100*share("gc")), sampledAt: sampled},
		{name: "sched", budget: share("sched"), truth: tr.Sched, lo: tr.Sched, hi: tr.Sched + d + k, timed: math.NaN(), asserted: gcApart,
			note: fmt.Sprintf("of it start-up, before Run: %.1f", 100*tr.Startup)},
		{name: "other", budget: share("other"), truth: tr.Other, lo: tr.Lowest(tr.Other, true), hi: tr.Other, timed: 1 - tw - tl - tq - ta, asserted: true, sampledAt: sampled, perr: perr("other")},
	}
	if tr.WorkCPU > 0 {
		// The thread CPU clock says exactly what of the hashing was on a
		// CPU, whatever the load; the rest of its wall time was
		// runnable, to Go or to the kernel: sched, at least, with the
		// start-up wait.
		rows[0].note = fmt.Sprintf("thread CPU clock; model %.1f", 100*tr.Work)
		rows[0].truth, rows[0].lo, rows[0].hi = tr.WorkCPU, tr.WorkCPU, tr.WorkCPU
		if lo := tr.WorkWall - tr.WorkCPU + tr.Startup; lo > rows[4].lo {
			// The truth too: a group of rows with sched in it
			// (combine) is held within the spread of the truths'
			// sum. A fan-out's model has no sched, so its
			// wait+sched+other read 39.2 against 27.1–31.3 beside a
			// spinning process, its helpers' hashing 9.1 points off
			// a CPU.
			rows[4].note += fmt.Sprintf("; at least the hashing's wall less its CPU, %.1f", 100*(tr.WorkWall-tr.WorkCPU))
			rows[4].lo, rows[4].hi = lo, max(lo, rows[4].hi)
			rows[4].truth = max(rows[4].truth, lo)
		}
	}
	if !gcApart {
		rows[3].note += "; asserted with sched only"
		rows[4].note += "; asserted with alloc+gc only"
		// Its running part is what the split leaves of work and other.
		rows = append(rows, row{name: "alloc+gc+sched", budget: share("alloc") + share("gc") + share("sched"),
			truth: tr.Alloc + tr.Sched, lo: tr.Alloc + tr.Sched, hi: min(1, tr.Alloc+tr.Sched+d+k), timed: math.NaN(), asserted: true,
			atLeast: sampled(share("work") + share("other"))})
	}
	for _, g := range combined[c.Variant] {
		rows = combine(rows, g, d+k)
		// Where work and the group are all there is (no lock, no
		// alloc or gc), the group is work's complement, and off by
		// what work is: its error is work's, which its own sampled
		// parts, taken at the stopwatch's tiny other (the helpers'
		// channel operations are wait to it, other to the budget), do
		// not say. A quiet run read pool-chan at one goroutine work
		// 52.7 against 58.2 (±8.9 sampled) and the group 47.3 against
		// 41.8, off by the same 5.4, allowed 5.
		if complement(rows, g) {
			sum := &rows[len(rows)-1]
			sum.atLeast = max(sum.atLeast, rows[0].tol())
		}
	}
	rows = append(rows, wallRows(c, tr, share, sampled)...)
	if w := c.Window; w != nil {
		untraced(rows, w.TracerOwn, w.OSWait+w.HelpedOSWait)
	}
	known := map[string]bool{"work": true, "lock": true, "wait": true, "alloc": true, "gc": true, "sched": true, "other": true}
	var extra []string
	for cat := range c.Budget {
		if !known[cat] {
			extra = append(extra, cat)
		}
	}
	slices.Sort(extra)
	for _, cat := range extra {
		rows = append(rows, row{name: cat, budget: share(cat), timed: math.NaN(), asserted: true, note: "a category the suite does not know"})
	}
	return rows
}

// wallRows hold the budget, read as "where the wall time went", against
// the workers' stopwatches, with no model: each row plus the sched the
// budget says was taken from it (runner.SchedBy: a goroutine preempted, by
// Go or by the kernel, while it hashed is sched of work) against the time
// the workers' clocks measured in it (Truth.Stopwatch); the sched left,
// with no stack (released, waiting to start), against the start-up wait.
// Beside a spinning process the budget moves the time a thread waited for
// a CPU to sched, where a stopwatch around the hashing counts it as
// hashing: these rows say the budget knows what it moved. The rows
// combined for the model (combined) are combined here too.
func wallRows(c model.Case, tr Truth, share func(string) float64, sampled func(float64) float64) []row {
	var sum float64
	for _, v := range c.Budget {
		sum += v
	}
	by := func(cats ...string) float64 {
		var v float64
		for _, cat := range cats {
			v += c.SchedBy[cat]
		}
		if sum <= 0 {
			return 0
		}
		return v / sum
	}
	sw := tr.Stopwatch
	// The time the threads waited for a CPU while their goroutines ran
	// (Window.OSWait) is placed by the budget over the goroutines' CPU
	// samples, as running time is: it knows the thread waited, not
	// where in its running it was preempted. The kernel preempts at a
	// system call's return more than elsewhere (a futex wake in Unlock,
	// the workers' own clock reads), so up to all of it can be in
	// another row than the stopwatch's. Measured at a load of 12,
	// mutex-all at two goroutines: stopwatch lock 45.4, budget lock 35.9
	// and none of its sched, with the threads waiting 52% of the time.
	var osw float64
	if c.Window != nil {
		osw = c.Window.OSWait
	}
	mk := func(name string, truth float64, cats ...string) row {
		var b float64
		for _, cat := range cats {
			b += share(cat)
		}
		b += by(cats...)
		return row{name: name, budget: b, truth: truth, lo: max(0, truth-osw), hi: min(1, truth+osw), timed: math.NaN(), asserted: true, sampledAt: sampled,
			note: fmt.Sprintf("of it sched %.1f", 100*by(cats...))}
	}
	rows := []row{
		mk("work", sw.Work, "work"),
		mk("lock", sw.Lock, "lock"),
		mk("wait", sw.Wait, "wait"),
		mk("alloc+gc", sw.Alloc, "alloc", "gc"),
		// The OS wait of a goroutine whose running had no CPU sample
		// has no stack to be placed at: up to all of it is here (alloc
		// at four goroutines beside a spinner: 27.6 against a start-up
		// wait of 18.5, the threads waiting 38% of the time).
		{name: "sched", budget: by("sched"), truth: sw.Startup, lo: sw.Startup, hi: min(1, sw.Startup+osw), timed: math.NaN(), asserted: true,
			note: "sched with no stack, against the start-up wait"},
		mk("other", sw.Other, "other"),
	}
	// Each row on its own: the workers' clock reads move where the
	// kernel preempts them (reading a thread's CPU clock updates the
	// kernel's account of its time slice, which ends the slice at the
	// read, not at the next tick), which the OS wait's allowance covers.
	// Measured at a load of 7–9, nolock at one goroutine: stopwatch work
	// 51.5, other (mostly the clock reads) 47.9 of which 10 on a CPU;
	// the budget, work 34.4 + sched of it 41.1, other 10.3 + 13.4.
	groups := combined[c.Variant]
	for _, g := range groups {
		rows = combine(rows, g, osw)
	}
	for i := range rows {
		rows[i].name = "wall " + rows[i].name
	}
	return rows
}

// combined are the rows asserted only together, per variant, where the
// workers' stopwatches cannot split what the budget can (or the other way
// round):
//
//   - fan-out and pool: the worker's wait for its helpers is work while one
//     of them hashes; the rest — the go statements (runtime.newproc, sched
//     to the budget, other to the stopwatch), helpers runnable before they
//     first run (sched), the wake-up after the last (wait) — is the
//     fan-out's own cost, which a stopwatch around the wait cannot divide.
//   - cond: time.Now around cond.Wait includes re-locking the mutex, which
//     the budget rightly calls lock.
//   - pipe: time.Now around Write and Read includes the os and poll
//     wrappers' own code and the tracer's work at every system call,
//     running to Go (other), where the call itself is wait.
var combined = map[string][][]string{
	"fanout-wg":   {{"wait", "sched", "other"}},
	"fanout-chan": {{"wait", "sched", "other"}},
	"pool-chan":   {{"wait", "sched", "other"}},
	"cond":        {{"lock", "wait"}},
	"pipe":        {{"wait", "other"}},
}

// combine adds a row asserting the named rows' sum and shows them only. Its
// range is the sum of theirs, but the collector and the kernel can move at
// most spread (Displaced + Delayed) into or out of a sum.
// complement says whether the rows not in group names, but for work,
// are none: under half a point in the budget and the truth.
func complement(rows []row, names []string) bool {
	for _, r := range rows {
		if r.name == "work" || r.name == strings.Join(names, "+") || slices.Contains(names, r.name) || !r.asserted {
			continue
		}
		if r.budget >= 0.005 || r.hi >= 0.005 {
			return false
		}
	}
	return true
}

// untraced restates the truth of rows for a budget that leaves out own,
// the share of the traced time in the tracer's own functions
// (runner.SetBudget). The workers' stopwatches ran with the tracer on, so
// their pieces hold that time too, and every share is of a goroutine time
// 1/(1−own) too long. A row that held none of it is its truth divided by
// 1−own; one that may have held up to h of it runs from (t−h)/(1−own) to
// t/(1−own).
//
// What is left out is the CPU samples' stacks with a tracer frame: the
// running time they place, and the wait for a CPU spread over them (osw,
// the workers' and their helpers' OSWait, is the most of that). So h is
//
//   - none for the hashing (work, wall work): the tracer writes events
//     only where a goroutine is created, blocks, wakes or makes a system
//     call, and the classifier calls its stacks other, never work;
//   - none for wall sched, the sched with no stack under its state frame
//     (released, waiting to start), where no tracer frame can be;
//   - at most osw for sched: a preemption by Go cannot land inside the
//     tracer (it holds its M), so its only sched is the wait for a CPU
//     spread over its samples;
//   - all of own for any other row.
func untraced(rows []row, own, osw float64) {
	if !(own > 0 && own < 1) {
		return
	}
	k := 1 / (1 - own)
	for i := range rows {
		r := &rows[i]
		if math.IsNaN(r.truth) {
			continue
		}
		held := own
		switch r.name {
		case "work", "wall work", "wall sched":
			held = 0
		case "sched":
			held = min(own, max(0, osw))
		}
		r.truth, r.lo, r.hi = k*r.truth, k*max(0, r.lo-held), k*r.hi
		r.truth = min(max(r.truth, r.lo), r.hi)
	}
}

func combine(rows []row, names []string, spread float64) []row {
	sum := row{name: strings.Join(names, "+"), asserted: true}
	for i := range rows {
		r := &rows[i]
		if !slices.Contains(names, r.name) {
			continue
		}
		sum.budget += r.budget
		sum.truth += r.truth
		sum.lo += r.lo
		sum.hi += r.hi
		if !math.IsNaN(r.timed) {
			sum.timed += r.timed
		}
		sum.atLeast = max(sum.atLeast, r.tol())
		r.asserted = false
		r.note = strings.TrimPrefix(r.note+"; asserted in "+sum.name+" only", "; ")
	}
	sum.lo = max(sum.lo, sum.truth-spread)
	sum.hi = min(sum.hi, sum.truth+spread)
	return append(rows, sum)
}

func formatTable(c model.Case, tr Truth, rows []row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %.0f ns/op, cpu %.0f ns/op; truth from %d repetitions, GOMAXPROCS %d",
		c.Name, c.Stats["ns/op"].Median, c.Stats["cpu-ns/op"].Median, tr.Reps, tr.Procs)
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	if m := tr.Machine; m.Cycles > 0 {
		fmt.Fprintf(&b, "\n  %d GC cycles: mark CPU %.0f ms dedicated, %.0f fractional, %.0f idle, %.0f assists; pauses %.0f ms CPU; so up to %.1f%% of worker time displaced",
			m.Cycles, ms(m.Dedicated), ms(m.Fractional), ms(m.Idle), ms(m.Assist), ms(m.Pause), 100*tr.Displaced)
	}
	if w := c.Window; w != nil && w.Traced != nil {
		fmt.Fprintf(&b, "\n  traced %.0f ns/op (median of %d %s), timed %.0f", w.Traced.Median, w.Traced.N, w.Source, c.Stats["ns/op"].Median)
		if e := w.Tracer; e != nil {
			fmt.Fprintf(&b, "; paired traced/untraced %.2f× [%.2f–%.2f] over %d rounds", e.Median, e.MedianLo, e.MedianHi, e.N)
		}
		fmt.Fprintf(&b, "; the tracer's own %.1f%% left out", 100*w.TracerOwn)
	}
	if c.BudgetTrust.Untrusted() {
		fmt.Fprintf(&b, "\n  budget marked ?: %s", report.TrustReason(c.BudgetTrust))
	}
	if w := c.Window; w != nil {
		fmt.Fprintf(&b, "\n  budget: threads waited for a CPU %.1f%% of the workers' time while running (exact %v), %.1f%% at a wake-up, helpers' %.1f%%; CPU samples %d, helpers' %d; hand-offs %.1f a ms of running",
			100*w.OSWait, w.OSWaitExact, 100*w.OSWake, 100*w.HelpedOSWait, w.CPUSamples, w.HelperSamples, w.Handoffs)
	}
	fmt.Fprintf(&b, "\n  load %s", loadAvg())
	if m := tr.Machine; m.RunDelay >= 0 {
		fmt.Fprintf(&b, "\n  threads waited %.0f ms in the kernel's run queue: up to %.1f%% of worker time without a CPU", ms(m.RunDelay), 100*tr.Delayed)
	} else {
		b.WriteString("\n  run-queue delay unknown: a loaded machine can make sched higher than the truth")
	}
	fmt.Fprintf(&b, "\n  %-14s %7s %13s %6s %6s\n", "row", "budget", "truth", "diff", "timed")
	for _, r := range rows {
		timed := "     —"
		if !math.IsNaN(r.timed) {
			timed = fmt.Sprintf("%6.1f", 100*r.timed)
		}
		truth := fmt.Sprintf("%.1f", 100*r.truth)
		if r.hi-r.lo >= 0.0005 {
			truth = fmt.Sprintf("%.1f–%.1f", 100*r.lo, 100*r.hi)
		}
		mark := ""
		switch {
		case r.asserted && r.off():
			mark = "  <-- off"
		case r.asserted && r.tol() > tolerance:
			mark = fmt.Sprintf("  (±%.1f: sampled)", 100*r.tol())
		case !r.asserted:
			mark = "  (shown)"
		}
		if r.perr > 0 {
			mark += fmt.Sprintf("  (perflab ±%.1f)", 100*r.perr)
		}
		note := ""
		if r.note != "" {
			note = "  (" + r.note + ")"
		}
		fmt.Fprintf(&b, "  %-14s %7.1f %13s %+6.1f %s%s%s\n", r.name, 100*r.budget, truth, 100*r.diff(), timed, mark, note)
	}
	for _, w := range c.Warnings {
		if w.Kind == model.WarnFewReps {
			continue // the suite's three timed rounds are for the timed column only
		}
		fmt.Fprintf(&b, "  warning: %s\n", w.Message)
	}
	return b.String()
}

// TestRowTolerance checks that a sampled row is judged at the truth's
// share: the CI run's sleep case at one goroutine beside a spinner (67 CPU
// samples, running 41% of the op) is within three standard errors of its
// truth (widened by runner.SampleDispersion), and the same row 10 points
// off is not.
func TestRowTolerance(t *testing.T) {
	at := func(share float64) float64 { return sampledTolerance(share, samplePool{0.41, 67}) }
	for _, tc := range []struct {
		name           string
		budget, lo, hi float64
		wantTol        float64
		off            bool
	}{
		{"above the truth, judged at the truth", 0.370, 0.318, 0.318, 0.0940, false},
		{"further above", 0.420, 0.318, 0.318, 0.0940, true},
		{"below a range, at its low end", 0.230, 0.313, 0.326, 0.0954, false},
		{"inside the range", 0.320, 0.313, 0.326, 0.0933, false},
		{"a truth of nothing: the floor", 0.040, 0, 0, 0, false},
		{"a truth of nothing, 6 points", 0.060, 0, 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := row{budget: tc.budget, lo: tc.lo, hi: tc.hi, asserted: true, sampledAt: at}
			if got := r.tol(); math.Abs(got-tc.wantTol) > 0.0005 {
				t.Errorf("tol() = %.4f, want %.4f", got, tc.wantTol)
			}
			if got := r.off(); got != tc.off {
				t.Errorf("off() = %v, want %v (diff %.3f, tol %.3f)", got, tc.off, r.diff(), r.tol())
			}
		})
	}
}
