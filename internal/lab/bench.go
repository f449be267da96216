package lab

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/runner"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/profiles"
	"golang.org/x/perf/benchfmt"
)

// BenchOptions say what perflab bench measures and how.
type BenchOptions struct {
	// Dir is the directory the go command runs in ("" for the current).
	Dir string
	// Packages are go list patterns (default ".").
	Packages []string
	// Bench is the -bench regular expression (default ".": all).
	Bench string
	// Tags, Race and GCFlags are go build's -tags, -race and -gcflags,
	// for go list and go test -c: the build the benchmarks run in.
	Tags    string
	Race    bool
	GCFlags string
	// Count is the timed repetitions per case (default 10).
	Count int
	// Time is the -benchtime of a case's calibration (default 1s, go
	// test's), a process before its first repetition; every repetition
	// runs the b.N it chose (see Run).
	Time time.Duration
	// CPU are the -cpu values (default GOMAXPROCS): each is a case of
	// every benchmark, with threads set to it.
	CPU []int
	// Profile runs each case once more with the execution tracer and the
	// CPU profiler, for its wall-clock profile and budget.
	Profile     bool
	ProfileTime time.Duration // that run's length (default 1s)
	// Work are the patterns of functions whose time is work; empty means
	// the code of the package under test (see WorkPatterns).
	Work []string
	// Rules are the base classification rules, a --rules file's
	// included (nil: profiles.DefaultRules).
	Rules *profiles.Rules
	// Seed shuffles the order of cases in each round (0: random).
	Seed uint64
	// Args is the command line, recorded in each run.
	Args []string
	// Log receives progress lines (nil: none).
	Log func(string)
}

func (o *BenchOptions) defaults() {
	if len(o.Packages) == 0 {
		o.Packages = []string{"."}
	}
	if o.Bench == "" {
		o.Bench = "."
	}
	if o.Count == 0 {
		o.Count = 10
	}
	if o.Time == 0 {
		o.Time = time.Second
	}
	if len(o.CPU) == 0 {
		o.CPU = []int{runtime.GOMAXPROCS(0)}
	}
	if o.ProfileTime == 0 {
		o.ProfileTime = time.Second
	}
	if o.Rules == nil {
		o.Rules = profiles.DefaultRules()
	}
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano())
	}
	if o.Log == nil {
		o.Log = func(string) {}
	}
}

// BenchPlan is what PlanBench found to measure: each package's test
// binary, built once, and its benchmarks at each -cpu value. Close
// removes the binaries.
type BenchPlan struct {
	opts BenchOptions
	tmp  string
	pkgs []*benchPackage
	// Notes say what was left out and why (a package without tests or
	// without benchmarks that match), for the user.
	Notes []string
	// Unbuilt are the packages that did not build, of several: the
	// others are measured (one that does not build alone is a
	// *PlanError).
	Unbuilt []BuildFailure
}

// BuildFailure is a package whose test binary did not build, and the go
// command's message.
type BuildFailure struct {
	ImportPath string
	Err        error
}

// buildFlags are the go command's build flags the options ask for.
func (o *BenchOptions) buildFlags() []string {
	var out []string
	if o.Tags != "" {
		out = append(out, "-tags="+o.Tags)
	}
	if o.Race {
		out = append(out, "-race")
	}
	if o.GCFlags != "" {
		out = append(out, "-gcflags="+o.GCFlags)
	}
	return out
}

type benchPackage struct {
	bin   *testBinary
	cases []*benchCase
	work  []string // the work patterns its run classifies with
}

// WorkPatterns are the default work patterns for a package: its own
// functions and those of its external test package (pkg_test), methods
// and closures included. Everything else is classified by the built-in
// rules (sync, runtime, GC, allocation), and what they do not know is
// other unless called from this code.
func WorkPatterns(importPath string) []string {
	return []string{"^" + regexp.QuoteMeta(importPath) + `(_test)?\.`}
}

// PlanBench builds each package's test binary (go test -c) and lists its
// benchmarks, sub-benchmarks included, that o.Bench selects. Everything
// the user got wrong is a *PlanError: a package that does not build, no
// benchmarks, a pattern that matches none.
func PlanBench(ctx context.Context, o BenchOptions) (_ *BenchPlan, err error) {
	o.defaults()
	pattern, err := compileBenchPattern(o.Bench)
	if err != nil {
		return nil, planErrorf("-bench %q: %v", o.Bench, err)
	}
	for _, c := range o.CPU {
		if c < 1 {
			return nil, planErrorf("--cpu %d: want a GOMAXPROCS of 1 or more", c)
		}
	}
	withTests, without, err := listPackages(ctx, o.Dir, o.Packages, o.buildFlags())
	if err != nil {
		return nil, err
	}
	p := &BenchPlan{opts: o}
	for _, b := range without {
		p.Notes = append(p.Notes, b.noTestsText())
	}
	if len(withTests) == 0 {
		if len(without) == 1 {
			return nil, planErrorf("%s, so no benchmarks to run", without[0].noTestsText())
		}
		return nil, planErrorf("%s: no test files, so no benchmarks to run", strings.Join(o.Packages, " "))
	}
	if p.tmp, err = os.MkdirTemp("", "perflab-bench-*"); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	var paths goPaths
	var pathsErr error
	if o.Profile {
		paths, pathsErr = goEnvPaths(ctx, o.Dir)
	}
	var unmatched []string
	for i, b := range withTests {
		o.Log(fmt.Sprintf("building %s", b.ImportPath))
		var target *rateTarget
		if o.Profile {
			target, b.rateErr = b.rateTarget(paths, pathsErr)
		}
		if err := b.build(ctx, o.Dir, p.tmp, i, o.buildFlags(), target); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if len(withTests) == 1 {
				return nil, err
			}
			// One package of several that does not build is its own
			// failure: the others are measured.
			p.Unbuilt = append(p.Unbuilt, BuildFailure{ImportPath: b.ImportPath, Err: err})
			continue
		}
		if b.rateErr != nil {
			p.Notes = append(p.Notes, b.rateNote())
		}
		names, err := b.topLevel(ctx)
		if err != nil {
			return nil, err
		}
		if len(names) == 0 {
			p.Notes = append(p.Notes, b.ImportPath+": no benchmarks")
			continue
		}
		pkg := &benchPackage{bin: b, work: o.Work}
		if len(pkg.work) == 0 {
			pkg.work = WorkPatterns(b.ImportPath)
		}
		for _, name := range names {
			if !pattern.matchTop(name) {
				continue
			}
			o.Log(fmt.Sprintf("listing %s.%s", path.Base(b.ImportPath), name))
			// An op's length is not known yet: the probe runs one of each
			// sub-benchmark, and may take as long as a repetition's setup.
			pr := b.probe(ctx, name, pattern.forTop(name), o.CPU[0], processTimeout(o.Time+timeoutSlack))
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			pkg.add(pr, o.CPU)
		}
		if len(pkg.cases) == 0 {
			unmatched = append(unmatched, fmt.Sprintf("%s (%s)", b.ImportPath, strings.Join(names, ", ")))
			continue
		}
		p.pkgs = append(p.pkgs, pkg)
	}
	if len(p.pkgs) == 0 {
		if len(p.Unbuilt) > 0 {
			var msgs []string
			for _, u := range p.Unbuilt {
				msgs = append(msgs, u.Err.Error())
			}
			return nil, planErrorf("no package to measure: %s", strings.Join(msgs, "\n"))
		}
		if len(unmatched) == 0 {
			return nil, planErrorf("%s: no benchmarks (no func BenchmarkX(b *testing.B) in the test files)", strings.Join(o.Packages, " "))
		}
		return nil, planErrorf("-bench %q matches no benchmark; there are: %s", o.Bench, strings.Join(unmatched, "; "))
	}
	for _, u := range unmatched {
		p.Notes = append(p.Notes, "-bench matches none of "+u)
	}
	return p, nil
}

// add makes the cases of one probed top-level benchmark, at each -cpu
// value. A benchmark that failed when probed is a case that failed; a
// parent whose sub-benchmark failed is not a case of its own.
func (pkg *benchPackage) add(pr probed, cpus []int) {
	names := slices.Clone(pr.names)
	for name := range pr.failed {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		isParent := false
		for _, other := range names {
			isParent = isParent || strings.HasPrefix(other, name+"/")
		}
		if isParent {
			continue
		}
		variant, params, order := splitBenchName(name)
		for _, cpu := range cpus {
			c := &benchCase{pkg: pkg.bin, full: name, cpu: cpu, variant: variant, params: params, order: order, probeWall: pr.wall}
			if !slices.Contains(pr.names, name) {
				c.failed = pr.failed[name]
				if c.failed == "" {
					c.failed = "failed"
				}
			}
			pkg.cases = append(pkg.cases, c)
		}
	}
}

// Cases returns the number of cases the plan measures.
func (p *BenchPlan) Cases() int {
	n := 0
	for _, pkg := range p.pkgs {
		n += len(pkg.cases)
	}
	return n
}

// Packages returns the import paths of the packages the plan measures.
func (p *BenchPlan) Packages() []string {
	var out []string
	for _, pkg := range p.pkgs {
		out = append(out, pkg.bin.ImportPath)
	}
	return out
}

// Work returns the work patterns a package's run classifies with.
func (p *BenchPlan) Work(importPath string) []string {
	for _, pkg := range p.pkgs {
		if pkg.bin.ImportPath == importPath {
			return pkg.work
		}
	}
	return nil
}

// Close removes the test binaries.
func (p *BenchPlan) Close() {
	if p.tmp != "" {
		os.RemoveAll(p.tmp)
	}
}

// liveBench is a case while it is measured.
type liveBench struct {
	c    *benchCase
	run  *model.Run
	sc   *model.Case
	rule *profiles.Rules
	// n is the b.N the case's calibration chose, which every repetition
	// runs (-benchtime=Nx): the testing package's ramp-up to -benchtime,
	// run1 and two to four growing runN calls, is then paid once; and
	// a repetition's process's CPU differs from the baseline's (CPU at
	// 2x) by n-2 ops (see benchcpu.go). wall is how long the calibration
	// took.
	n    int
	wall time.Duration
	// baseline is the CPU of the case's process at 2x, hasBaseline
	// whether it was measured.
	baseline    time.Duration
	hasBaseline bool
}

// timeout is the timeout of a process of the case expected to take about
// expect.
func (lb *liveBench) timeout(expect time.Duration) time.Duration {
	return processTimeout(expect)
}

// BenchRun is one package's stored run and where it went.
type BenchRun struct {
	Run *model.Run
	Dir string // the run's directory, once committed
}

// Run measures every case of the plan and stores one run per package in
// st: Count rounds, each running every case once, in a new shuffled
// order, one process per repetition; then, with Profile, one profiling
// run per case.
//
// One process per repetition, not per round or per case: a process runs
// its -bench matches in source order, so only separate processes can be
// shuffled and interleaved, which spreads the machine's drift over every
// case instead of piling it on whichever ran during it; and a case that
// panics takes down its own process only. A process costs its start and
// the testing package's b.N=1 run (84 and 139 ms here under a load average
// of 15 on two cores). Before its first repetition each case runs a
// calibration, a process at the duration -benchtime whose b.N every
// repetition reuses (-benchtime=Nx), so the ramp-up go test repeats for
// every -count is paid once, and baselineRuns processes at -benchtime=2x,
// for cpu/op (benchcpu.go): three more starts, and three more of its
// setup. The calibration is not a repetition, so that every repetition has
// cpu/op: one process of about --time more per case than when the first
// repetition calibrated, as in the figures that follow (measured then).
// Measured against go test -count=10 on the fixture's three Mutex
// and Hash/size=1024 benchmarks at -benchtime 200ms, alternating, three
// pairs: 11.3, 17.4, 17.0 s against 13.0, 16.4, 17.2 s, and ns/op
// intervals of the same width (±20–93% against ±25–74%, the load's). At
// -benchtime 1s with the profiling runs, scripts/bench-vs-gotest.sh: 209
// against 192 s in all, at a load of 10–14 (docs/history.md).
func (p *BenchPlan) Run(ctx context.Context, st *store.Store) ([]*BenchRun, error) {
	o := p.opts
	// The CPU is named as perflab run names it (runner.CPUName), which is
	// the name go test prints on its "cpu:" line: results.txt shares a
	// benchstat table with plain go test output (TestBench holds the two
	// together).
	env := runner.Environment()
	if v, err := goCmd(ctx, o.Dir, "env", "GOVERSION"); err == nil {
		env.GoVersion = strings.TrimSpace(string(v))
	}
	var live []*liveBench
	var runs []*BenchRun
	var writers []*store.Writer
	defer func() {
		for _, w := range writers {
			if w != nil {
				w.Commit()
			}
		}
	}()
	for _, pkg := range p.pkgs {
		rules, err := o.Rules.WithWork(pkg.work...)
		if err != nil {
			return nil, &PlanError{Err: fmt.Errorf("--work: %w", err)}
		}
		run := p.newRun(pkg, env, rules)
		w, err := st.Create(run)
		if err != nil {
			return nil, err
		}
		writers = append(writers, w)
		runs = append(runs, &BenchRun{Run: run})
		for i, c := range pkg.cases {
			lb := &liveBench{c: c, run: run, sc: &run.Cases[i], rule: rules}
			if c.failed == "" {
				live = append(live, lb)
			}
		}
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0))
	order := slices.Clone(live)
	// where the run is, for its note if the context ends it.
	where := ""
	stop := func() ([]*BenchRun, error) { return p.interrupted(ctx, runs, writers, where) }
	for round := 1; round <= o.Count; round++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		where = fmt.Sprintf("in round %d/%d", round, o.Count)
		for _, lb := range order {
			if ctx.Err() != nil {
				return stop()
			}
			if lb.sc.Status == model.StatusFailed {
				continue
			}
			o.Log(fmt.Sprintf("round %d/%d: %s", round, o.Count, lb.c.goName()))
			lb.repetition(ctx)
			if ctx.Err() != nil {
				return stop() // in this round: its repetition was cut
			}
		}
		for _, w := range writers {
			if err := w.Checkpoint(); err != nil {
				return p.finish(runs, writers, err)
			}
		}
	}
	if o.Profile {
		// Only the cases the rounds measured are profiled, and counted.
		var profiled []*liveBench
		for _, lb := range live {
			if lb.sc.Status == model.StatusOK {
				profiled = append(profiled, lb)
			}
		}
		for i, lb := range profiled {
			if ctx.Err() != nil {
				return stop()
			}
			where = fmt.Sprintf("while profiling case %d/%d", i+1, len(profiled))
			o.Log(fmt.Sprintf("profiling %d/%d: %s", i+1, len(profiled), lb.c.goName()))
			w := writers[slices.IndexFunc(runs, func(r *BenchRun) bool { return r.Run == lb.run })]
			if err := lb.profile(ctx, w, p.tmp, o.ProfileTime); err != nil {
				if ctx.Err() != nil {
					return stop()
				}
				lb.sc.Warnings = append(lb.sc.Warnings, model.Warn(model.WarnProfiling, 0, "profiling: "+err.Error()))
			}
			if err := w.Checkpoint(); err != nil {
				return p.finish(runs, writers, err)
			}
		}
	}
	for _, r := range runs {
		r.Run.Complete = true
	}
	return p.finish(runs, writers, nil)
}

// interrupted commits every run, marked incomplete with the note perflab
// run gives ("interrupted by SIGINT in round 3/10"), and returns
// runner.ErrInterrupted with what ended it. By what is the context's
// cause, where one was given (the CLI's is the signal, "by SIGINT").
func (p *BenchPlan) interrupted(ctx context.Context, runs []*BenchRun, writers []*store.Writer, where string) ([]*BenchRun, error) {
	by := causeOf(ctx)
	measured := false
	for _, r := range runs {
		w := where
		if !r.Run.Measured() {
			w = "before any case was measured"
		}
		measured = measured || r.Run.Measured()
		r.Run.Note = model.InterruptedNote(by, w)
	}
	err := runner.ErrInterrupted
	switch {
	case !measured:
		// Not "the rounds measured so far are saved": there were none
		// (as perflab run says it).
		err = runner.EmptyInterrupted(model.InterruptedNote(by, "before any case was measured"))
	case by != "":
		err = fmt.Errorf("%w (%v)", runner.ErrInterrupted, context.Cause(ctx))
	}
	return p.finish(runs, writers, err)
}

// finish commits every run, marking them incomplete if err ended them.
func (p *BenchPlan) finish(runs []*BenchRun, writers []*store.Writer, err error) ([]*BenchRun, error) {
	for i, r := range runs {
		r.Run.Finished = time.Now().UTC()
		if err != nil {
			r.Run.Complete = false
			if r.Run.Note == "" {
				r.Run.Note = err.Error()
			}
		}
		dir, cerr := writers[i].Commit()
		writers[i] = nil
		if cerr != nil {
			err = errors.Join(err, cerr)
		}
		r.Dir = dir
	}
	return runs, err
}

// newRun is the stored run of one package: an ordinary perflab run whose
// scenario is the package's import path and whose cases are its
// benchmarks at each -cpu value.
func (p *BenchPlan) newRun(pkg *benchPackage, env model.Env, rules *profiles.Rules) *model.Run {
	o := p.opts
	started := time.Now().UTC()
	prof := []string{}
	if o.Profile {
		prof = []string{"wall", "cpu"}
	}
	run := &model.Run{
		ID:       store.NewID(started, "bench-"+idSafe(path.Base(pkg.bin.ImportPath))),
		Scenario: pkg.bin.ImportPath,
		Started:  started,
		Env:      env,
		Package:  pkg.bin.ImportPath,
		Config: model.Config{
			Args: o.Args, Count: o.Count, Time: model.Duration(o.Time),
			Profile: prof, ProfileTime: model.Duration(o.ProfileTime), Seed: o.Seed,
			Threads:        slices.Clone(o.CPU),
			Params:         map[string][]string{},
			Classification: model.NewClassification(pkg.work, o.Rules.User()),
		},
	}
	for _, c := range pkg.cases {
		if !slices.Contains(run.Config.Variants, c.variant) {
			run.Config.Variants = append(run.Config.Variants, c.variant)
		}
		for _, k := range c.order {
			if !slices.Contains(run.ParamOrder, k) {
				run.ParamOrder = append(run.ParamOrder, k)
			}
			if v := c.params[k]; !slices.Contains(run.Config.Params[k], v) {
				run.Config.Params[k] = append(run.Config.Params[k], v)
			}
		}
		sc := model.Case{
			Name: c.caseName(), Variant: c.variant, Params: c.params, Threads: c.cpu,
			Bench: "Benchmark" + strings.TrimPrefix(c.goName(), "Benchmark"), Status: model.StatusSkipped,
		}
		if c.failed != "" {
			sc.Status, sc.Error = model.StatusFailed, c.failed
		}
		run.Cases = append(run.Cases, sc)
	}
	return run
}

var idUnsafe = regexp.MustCompile(`[^0-9A-Za-z._-]+`)

// idSafe makes s usable in a run id.
func idSafe(s string) string {
	s = strings.Trim(idUnsafe.ReplaceAllString(s, "-"), ".-")
	if s == "" {
		return "pkg"
	}
	return s
}

// repetition runs the case once, in a process of its own, at the b.N its
// calibration chose, and adds what it measured; a failure or panic makes
// the case failed, keeping the repetitions it had.
//
// The case's first repetition is preceded by its calibration: a process
// at the duration -benchtime, whose b.N every repetition then runs
// (-benchtime=Nx), and the cpu/op baseline at 2x (benchcpu.go). The
// calibration is not a repetition: its process's CPU holds the ramp-up's
// runs, so it could have no cpu/op, and counted, it left cpu/op one value
// short of time/op (at --count 6, five: no 95% interval, ±∞ in the table,
// and five cpu-ns/op lines of six in results.txt).
func (lb *liveBench) repetition(ctx context.Context) {
	if lb.n == 0 {
		r, res := lb.runOnce(ctx, time.Duration(lb.run.Config.Time).String(), 3*time.Duration(lb.run.Config.Time)+lb.c.probeWall)
		if r == nil {
			return
		}
		lb.n, lb.wall = r.Iters, res.wall
		if lb.n > 2 {
			lb.baseline, lb.hasBaseline = lb.cpuBaseline(ctx)
		}
		if ctx.Err() != nil {
			return
		}
	}
	r, res := lb.runOnce(ctx, fmt.Sprintf("%dx", lb.n), lb.wall)
	if r == nil {
		return
	}
	m := metrics(r)
	if lb.hasBaseline && r.Iters == lb.n {
		if v, ok := cpuPerOp(res.cpu, lb.baseline, r.Iters); ok {
			m["cpu-ns/op"] = v
		}
	}
	lb.sc.Reps = append(lb.sc.Reps, model.Rep{Ops: int64(r.Iters), Metrics: m})
	summarise(lb.sc)
}

// runOnce runs the case's benchmark in a process of its own at benchtime,
// expected to take about expect, and returns its result; nil, with the
// case made failed saying why, when it printed none (nil without a word
// when the context ended it).
func (lb *liveBench) runOnce(ctx context.Context, benchtime string, expect time.Duration) (*benchfmt.Result, *binaryRun) {
	c := lb.c
	res := runBinary(ctx, c.pkg, exactPattern(c.full), benchtime, c.cpu, lb.timeout(expect))
	if ctx.Err() != nil {
		return nil, res
	}
	r := findResult(res, c)
	if r == nil {
		lb.sc.Status = model.StatusFailed
		lb.sc.Error = res.failed[c.full]
		if res.timedOut != 0 {
			lb.sc.Error = res.timeoutText()
		}
		if lb.sc.Error == "" && res.stopped[c.full] && !res.saysWhy() {
			lb.sc.Error = stoppedText
		}
		if lb.sc.Error == "" {
			lb.sc.Error = res.errText()
		}
		if lb.sc.Error == "" {
			lb.sc.Error = "the benchmark printed no result"
		}
		return nil, res
	}
	return r, res
}

// findResult is the result line of c in a run's output.
func findResult(res *binaryRun, c *benchCase) *benchfmt.Result {
	for _, r := range res.results {
		if stripCPU(r.Name.String(), c.cpu) == c.full {
			return r
		}
	}
	return nil
}

// metrics are a result's values by unit, in go test's own units (ns/op,
// MB/s; benchfmt tidies them to sec/op and B/s as it reads), and ops/s.
func metrics(r *benchfmt.Result) map[string]float64 {
	m := map[string]float64{}
	for _, v := range r.Values {
		// A metric the benchmark reported as NaN or ±Inf (a ratio of 0/0)
		// is no figure, and JSON cannot hold it: run.json would not save.
		if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) {
			continue
		}
		if v.OrigUnit != "" {
			m[v.OrigUnit] = v.OrigValue
		} else {
			m[v.Unit] = v.Value
		}
	}
	// The throughput a scenario run's table shows; results.txt leaves it
	// out, as it does a scenario's.
	if ns := m["ns/op"]; ns > 0 {
		m["ops/s"] = 1e9 / ns
	}
	return m
}

// summarise recomputes a case's statistics from its repetitions, as the
// runner does for a scenario's.
func summarise(sc *model.Case) {
	sc.Status = model.StatusOK
	series := map[string][]float64{}
	for _, rep := range sc.Reps {
		for unit, v := range rep.Metrics {
			series[unit] = append(series[unit], v)
		}
	}
	sc.Stats = map[string]model.Stat{}
	sc.Warnings = nil
	for unit, xs := range series {
		st, warns := runner.Summarise(xs)
		sc.Stats[unit] = st
		if unit == "ns/op" {
			sc.Warnings = append(sc.Warnings, warns...)
		}
	}
}

// profileN is the b.N that runs a case for about d at its median time/op.
func profileN(sc *model.Case, d time.Duration) int {
	ns := sc.Stats["ns/op"].Median
	if ns <= 0 {
		return 1
	}
	return max(1, int(float64(d.Nanoseconds())/ns))
}
