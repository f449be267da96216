// Package model is what a perflab run is: the data run.json records (a
// run, its environment and options, its cases with their repetitions,
// statistics, budgets, trust marks, warnings and windows) and the methods
// that only read it. It does no I/O: internal/store keeps runs on disk,
// and report, compare and the web read these types, as x/perf's benchfmt
// and benchproc keep a benchmark result apart from the files it is in.
//
// The JSON field names and their order are run.json's format, which
// other tools read: a change here is a change of that format
// (internal/store's testdata/run.json is its golden).
package model

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/perflab/perflab/profiles"
)

// Run is one stored run: how it was made and what it measured.
type Run struct {
	ID       string    `json:"id"`
	Scenario string    `json:"scenario"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
	// Complete is false when the run was interrupted or failed part-way;
	// Note says why.
	Complete bool   `json:"complete"`
	Note     string `json:"note,omitempty"`
	Env      Env    `json:"env"`
	Config   Config `json:"config"`
	// Benchmark and Package are the name and import path of the
	// scenario's `go test` benchmark, the names results.txt uses.
	Benchmark string `json:"benchmark,omitempty"`
	Package   string `json:"package,omitempty"`
	// ParamOrder lists the scenario's parameter names in its order, so
	// that every renderer groups and titles cases the same way without
	// parsing case names (absent in runs stored before it was recorded).
	ParamOrder []string `json:"param_order,omitempty"`
	Cases      []Case   `json:"cases"`
	// Rounds records the machine's load and CPU steal in each timed
	// round (absent where the system does not say, and in older runs).
	Rounds []Round `json:"rounds,omitempty"`
}

// Env records the machine and runtime settings a run was measured under.
type Env struct {
	GoVersion  string `json:"go_version"`
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	CPU        string `json:"cpu"`
	NumCPU     int    `json:"num_cpu"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	GOGC       string `json:"gogc"`
	Hostname   string `json:"hostname"`
	Commit     string `json:"commit,omitempty"`
	Dirty      bool   `json:"dirty,omitempty"`
}

// Config records the options of a run.
type Config struct {
	Args     []string            `json:"args"`
	Variants []string            `json:"variants,omitempty"`
	Params   map[string][]string `json:"params,omitempty"`
	Threads  []int               `json:"threads,omitempty"`
	Count    int                 `json:"count"`
	Time     Duration            `json:"time"`
	Warmup   Duration            `json:"warmup"`
	Profile  []string            `json:"profile"`
	// ProfileTime is how long each case ran under the wall-clock and CPU
	// profilers (mutex and block get half as long).
	ProfileTime Duration `json:"profile_time"`
	// Trace is where the budget's trace was taken: "slices" (short traced
	// repetitions beside the timed ones, in the rounds) or "window" (one
	// window per case after the rounds; "" in runs made before slices).
	Trace string `json:"trace,omitempty"`
	// Seed shuffled the order of cases in each round; --seed repeats it.
	Seed uint64 `json:"seed"`
	// Classification is what the run's stacks were classified with, so
	// that another binary (the stock perflab serving a run made by a
	// user's own binary, say) classifies them the same way. It is nil in
	// runs stored before it was recorded: readers then look the scenario's
	// work patterns up in their own registry.
	Classification *Classification `json:"classification,omitempty"`
}

// Classification records the inputs of a run's classification rules that
// are not built into perflab: the scenario's work patterns and the user's
// rules (perflab run --rules). The built-in rules are the reading
// binary's own. The rules are the same for every case of a run, so they
// are stored once per run.
//
// A run.json is untrusted input to the binary that reads it: call Check
// before compiling what it holds.
type Classification struct {
	// Work are the scenario's work patterns (perflab.Scenario.Work), RE2.
	Work []string `json:"work,omitempty"`
	// Rules are the user's rules, in the order they are consulted.
	Rules []Rule `json:"rules,omitempty"`
}

// Rule is one user classification rule (profiles.Rule): frames matching
// Pattern are Category; a Fallback rule decides only when no other frame
// of the stack is classified.
type Rule struct {
	Category string `json:"category"`
	Pattern  string `json:"pattern"`
	Fallback bool   `json:"fallback,omitempty"`
}

// Bounds on a stored Classification: far above what a scenario or a rules
// file needs (a few dozen patterns of a few dozen bytes), low enough that
// compiling a tampered run.json's patterns costs a reader little. RE2
// compiles and matches in time linear in the pattern's size, but that size
// counts expanded repetitions: a 4 KiB pattern of bounded repeats took 20 ms
// to compile here, so the total is bounded as well as each pattern.
const (
	MaxClassificationRules = profiles.MaxUserRules   // work patterns, and user rules, each
	MaxPatternBytes        = profiles.MaxRulePattern // bytes in one pattern
	MaxClassificationBytes = profiles.MaxRulesBytes  // bytes in all patterns together
)

// Check reports whether c is within the bounds a reader accepts. It does
// not compile the patterns or check the categories: package profiles does
// that, with errors that say what is wrong.
func (c *Classification) Check() error {
	if len(c.Work) > MaxClassificationRules {
		return fmt.Errorf("%d work patterns (at most %d)", len(c.Work), MaxClassificationRules)
	}
	if len(c.Rules) > MaxClassificationRules {
		return fmt.Errorf("%d rules (at most %d)", len(c.Rules), MaxClassificationRules)
	}
	total := 0
	for i, w := range c.Work {
		if len(w) > MaxPatternBytes {
			return fmt.Errorf("work pattern %d is %d bytes long (at most %d)", i+1, len(w), MaxPatternBytes)
		}
		total += len(w)
	}
	for i, r := range c.Rules {
		// Category names are short words; a long one is not a category,
		// and would only bloat the error that says so.
		if len(r.Category) > 64 {
			return fmt.Errorf("rule %d: category is %d bytes long, not a category name", i+1, len(r.Category))
		}
		if len(r.Pattern) > MaxPatternBytes {
			return fmt.Errorf("rule %d: pattern is %d bytes long (at most %d)", i+1, len(r.Pattern), MaxPatternBytes)
		}
		total += len(r.Pattern)
	}
	if total > MaxClassificationBytes {
		return fmt.Errorf("patterns of %d bytes in all (at most %d)", total, MaxClassificationBytes)
	}
	patterns := slices.Clone(c.Work)
	for _, r := range c.Rules {
		patterns = append(patterns, r.Pattern)
	}
	if cost := profiles.CompiledBytes(patterns...); cost > MaxCompiledBytes {
		return fmt.Errorf("its patterns would take about %d MiB compiled, more than %d MiB", cost>>20, MaxCompiledBytes>>20)
	}
	return nil
}

// MaxCompiledBytes bounds what a stored classification's patterns may
// take compiled (profiles.CompiledBytes), checked before they are: within
// the bounds above, bounded repeats made one run.json's patterns take
// ~800 MB compiled (issue 26), for serve and perflab flame alike. Real
// work patterns take a few KB.
const MaxCompiledBytes = 64 << 20

// Status is what became of a case.
type Status string

// Case status values.
const (
	StatusOK      Status = "ok"
	StatusFailed  Status = "failed"
	StatusSkipped Status = "skipped" // not measured: the run was interrupted first
	// StatusNotApplicable: the variant does not exist at these parameters
	// (its New returned perflab.ErrNotApplicable).
	StatusNotApplicable Status = "n/a"
)

// Case is one measured case: a variant at one point of the matrix.
type Case struct {
	Name    string            `json:"name"` // variant=mutex/keys=1024/key=ssk/threads=4
	Variant string            `json:"variant"`
	Params  map[string]string `json:"params"`
	Threads int               `json:"threads"`
	Status  Status            `json:"status"`
	Error   string            `json:"error,omitempty"`
	// Bench is the name `go test` gives the case in a perflab bench run
	// (BenchmarkCache/keys=128-4), which results.txt writes as it is, so
	// that benchstat lines the run up with plain go test output. Empty in
	// scenario runs, whose name results.txt derives from the run's.
	Bench string `json:"bench,omitempty"`
	// Reps are the raw per-repetition measurements, in the order measured.
	Reps []Rep `json:"reps,omitempty"`
	// Stats summarises each metric over the repetitions, keyed by unit:
	// "ns/op", "cpu-ns/op", "ops/s", "B/op", "allocs/op", "alloc-MB/s",
	// "gc/op", "gc-cpu-%", "MB/s" (when the case reports bytes), and the
	// scenario's own counters ("hits/op", …).
	Stats map[string]Stat `json:"stats,omitempty"`
	// Budget splits the wall time per operation (ns/op) into categories
	// (work, lock, wait, alloc, gc, sched, other) in the proportions of the
	// worker goroutines' time in the execution trace of the traced slices
	// (or, in runs made with --trace window and before slices, of the
	// profiling window).
	Budget map[string]float64 `json:"budget,omitempty"`
	// BudgetErr is, per category, the half-width (ns/op) of a 95% interval
	// on its part of Budget from the CPU samples that place time in
	// categories: the running time, and a thread's wait for a CPU while
	// Go had it running (runner.BudgetErr). Blocked time is exact, and a
	// category with none of the sampled time has no entry. Nil in runs
	// made before it was recorded, and without CPU samples.
	BudgetErr map[string]float64 `json:"budget_err,omitempty"`
	// BudgetTrust says whether the budget can be trusted, and if not why
	// (nil in runs made before it was judged: unknown).
	BudgetTrust *Trust `json:"budget_trust,omitempty"`
	// SchedBy splits the budget's sched (ns/op) by what the goroutines
	// were doing when they lost their CPU (work, alloc, other…; "sched"
	// for time with no stack to say, such as waiting to start): under
	// load, where the wall time went as well as where the CPU went. Nil
	// in runs made before it was recorded.
	SchedBy map[string]float64 `json:"budget_sched_by,omitempty"`
	// Window is what the profiling window measured (nil without a wall
	// profile, and in runs made before budgets came from the tracer).
	Window *Window `json:"window,omitempty"`
	// Profiles maps a profile kind (wall, cpu, mutex, block, fgprof) to its file,
	// relative to the run directory.
	Profiles map[string]string `json:"profiles,omitempty"`
	// Flame is the wall-clock flame graph SVG, relative to the run directory.
	Flame string `json:"flame,omitempty"`
	// Warnings are statistical or measurement warnings shown to the user,
	// as values with a kind (runs stored before kinds read theirs from
	// their sentences: Warning.UnmarshalJSON).
	Warnings []Warning `json:"warnings,omitempty"`
}

// Rep is one timed repetition of a case.
type Rep struct {
	Ops     int64              `json:"ops"`
	Metrics map[string]float64 `json:"metrics"` // unit → value
}

// Measured reports whether any case of the run has a repetition.
func (r *Run) Measured() bool {
	for _, c := range r.Cases {
		if len(c.Reps) > 0 {
			return true
		}
	}
	return false
}

// Case returns the case named name (its full name or its slug).
func (r *Run) Case(name string) (*Case, bool) {
	for i := range r.Cases {
		if r.Cases[i].Name == name || Slug(r.Cases[i].Name) == name {
			return &r.Cases[i], true
		}
	}
	return nil, false
}

// Slug turns a case name into a directory name: "variant=mutex/keys=128"
// becomes "variant=mutex,keys=128"; characters outside [A-Za-z0-9._=,-]
// become '_'.
func Slug(name string) string {
	b := []byte(name)
	for i, c := range b {
		switch {
		case c == '/':
			b[i] = ','
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '=', c == ',', c == '-':
		default:
			b[i] = '_'
		}
	}
	if len(b) > 0 && b[0] == '.' {
		b[0] = '_'
	}
	return string(b)
}

// SortNewestFirst sorts runs as store.List returns them: by start, newest
// first, then by id.
func SortNewestFirst(runs []*Run) {
	sort.Slice(runs, func(i, j int) bool {
		if !runs[i].Started.Equal(runs[j].Started) {
			return runs[i].Started.After(runs[j].Started)
		}
		return runs[i].ID > runs[j].ID
	})
}

// LatestOf is the run "latest" names among runs sorted newest first: the
// newest that measured something (an empty run, interrupted before its
// first repetition, or one whose every case failed, is latest only when
// there is no other); nil for none.
func LatestOf(runs []*Run) *Run {
	for _, r := range runs {
		if r.Measured() {
			return r
		}
	}
	if len(runs) > 0 {
		return runs[0]
	}
	return nil
}

// ErrNoCase: the run has no case of the name asked for (FindCase).
var ErrNoCase = errors.New("no case")

// ProfileKinds are the profiles a run can store per case, in the order
// they are offered: wall (the exact wall-clock profile from the execution
// tracer, behind budgets and flame graphs), cpu, mutex, block, and fgprof
// (the sampling wall-clock profiler, only when asked for).
var ProfileKinds = []string{"wall", "cpu", "mutex", "block", "fgprof"}
