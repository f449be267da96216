// Package store keeps perflab runs on disk: one directory per run under a
// root (default ./perflab-runs), named by a sortable id. A run is written
// into a hidden ".<id>.partial" directory, checkpointed as it goes, and
// renamed into place when it ends, so a crash or Ctrl-C never leaves a
// half-written run where readers look, and what was measured is kept.
// The runner checkpoints after every round and every profiled case.
//
// Layout of a run directory:
//
//	run.json                  metadata and results (the Run type)
//	results.txt               benchfmt text that benchstat reads unchanged
//	cases/<slug>/wall.pb.gz   pprof profiles, one per captured kind
//	cases/<slug>/wall.svg     category-coloured flame graph
package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/perflab/perflab/profiles"
)

// DefaultDir is the run store used when neither --out nor PERFLAB_DIR says
// otherwise.
const DefaultDir = "perflab-runs"

// EnvDir is the environment variable that overrides DefaultDir.
const EnvDir = "PERFLAB_DIR"

// Dir returns the store directory to use: flag if set, else $PERFLAB_DIR,
// else DefaultDir.
func Dir(flag string) string {
	if flag != "" {
		return flag
	}
	if d := os.Getenv(EnvDir); d != "" {
		return d
	}
	return DefaultDir
}

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

// Stat summarises one metric over a case's repetitions.
type Stat struct {
	N        int     `json:"n"`
	Mean     float64 `json:"mean"`
	MeanLo   float64 `json:"mean_lo"` // 99.9% confidence interval of the mean
	MeanHi   float64 `json:"mean_hi"`
	Median   float64 `json:"median"`
	MedianLo float64 `json:"median_lo"` // 95% confidence interval of the median
	MedianHi float64 `json:"median_hi"`
	Min      float64 `json:"min"`
	Max      float64 `json:"max"`
}

// HalfWidth is the median's 95% confidence interval as a fraction of the
// median: the larger distance from the median to either bound; +Inf when
// there were too few repetitions for an interval (or it is not a number).
// Every renderer and the runner's warnings use this one definition.
func (s Stat) HalfWidth() float64 {
	if s.Median == 0 {
		return 0
	}
	if math.IsInf(s.MedianLo, 0) || math.IsInf(s.MedianHi, 0) || math.IsNaN(s.MedianLo) || math.IsNaN(s.MedianHi) {
		return math.Inf(1)
	}
	return math.Max(s.MedianHi/s.Median-1, 1-s.MedianLo/s.Median)
}

// Duration is a time.Duration that reads and writes as "1.5s" in JSON.
type Duration time.Duration

// MarshalJSON writes d as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	*d = Duration(v)
	return err
}

// Store is a directory of runs.
type Store struct {
	Root string
}

// Open returns the store at root. The directory need not exist yet.
func Open(root string) *Store { return &Store{Root: root} }

var idRE = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z._-]{0,127}$`)

// ValidID reports whether id can name a run: letters, digits, dot, dash and
// underscore, not starting with a dot, so it can never walk out of the store.
func ValidID(id string) bool { return idRE.MatchString(id) && !strings.Contains(id, "..") }

// Latest is the id alias for the newest run.
const Latest = "latest"

// NewID returns a sortable id for a run of scenario started at t.
func NewID(t time.Time, scenario string) string {
	return t.UTC().Format("20060102-150405") + "-" + scenario
}

// Create starts writing a new run. It fails early, with a clear error, when
// the store directory cannot be written.
func (s *Store) Create(r *Run) (*Writer, error) {
	if err := os.MkdirAll(s.Root, 0o755); err != nil {
		return nil, fmt.Errorf("run store %s: %w", s.Root, err)
	}
	if !ValidID(r.ID) {
		return nil, fmt.Errorf("invalid run id %q", r.ID)
	}
	// The partial directory is claimed with Mkdir alone, which fails with
	// EEXIST when another writer (a concurrent web save, another run in
	// the same second) took the id first: then the next suffix is tried.
	// Checking with Lstat and then creating raced (issue 14: 3 of 192
	// concurrent saves failed as "not writable").
	w := &Writer{store: s, run: r}
	if err := w.claim(); err != nil {
		return nil, err
	}
	// Held until Commit: a partial run whose lock is free has no writer
	// left, and Recover may save it. Where locks do not work (some network
	// file systems) the run is written without one.
	w.lock, _ = lockDir(w.dir)
	if err := w.Checkpoint(); err != nil {
		w.unlock()
		os.RemoveAll(w.dir)
		return nil, err
	}
	return w, nil
}

// unlock releases the writer's lock on its run directory.
func (w *Writer) unlock() {
	if w.lock != nil {
		w.lock.Close()
		w.lock = nil
	}
}

// claim finds the first free id of w.run.ID, ID-2, ID-3, … (free: neither
// a run nor a partial run has it) and creates its partial directory.
func (w *Writer) claim() error {
	base := w.run.ID
	for i := 2; i < 10000; i++ {
		_, err := os.Lstat(filepath.Join(w.store.Root, w.run.ID))
		if errors.Is(err, fs.ErrNotExist) {
			dir := filepath.Join(w.store.Root, "."+w.run.ID+".partial")
			err = os.Mkdir(dir, 0o755)
			if err == nil {
				w.dir = dir
				return nil
			}
			if !errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("run store %s is not writable: %w", w.store.Root, err)
			}
		} else if err != nil {
			return fmt.Errorf("run store %s: %w", w.store.Root, err)
		}
		w.run.ID = fmt.Sprintf("%s-%d", base, i)
		if !ValidID(w.run.ID) {
			return fmt.Errorf("invalid run id %q", w.run.ID)
		}
	}
	return fmt.Errorf("run store %s: no free id for %s", w.store.Root, base)
}

// Writer writes one run's directory.
type Writer struct {
	store *Store
	run   *Run
	dir   string
	done  bool
	// held is the empty partial directory that holds the id reclaim
	// took, until Commit has renamed the run to it.
	held string
	// lock is the run directory, locked while it is written (lockDir).
	lock *os.File
}

// Dir returns the directory files are currently written to.
func (w *Writer) Dir() string { return w.dir }

// WriteFile writes data to rel (slash-separated, inside the run directory)
// atomically: a reader sees the old file or the whole new one.
func (w *Writer) WriteFile(rel string, data []byte) error {
	if !validRel(rel) {
		return fmt.Errorf("invalid file name %q in run", rel)
	}
	path := filepath.Join(w.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return writeAtomic(path, data)
}

// Checkpoint writes results.txt and run.json as they stand, so an
// interrupted run keeps what it measured.
func (w *Writer) Checkpoint() error {
	// The command line may hold a password (run --push http://u:pw@host);
	// only its redacted form is ever written.
	w.run.Config.Args = RedactArgs(w.run.Config.Args)
	var res bytes.Buffer
	if err := WriteResults(&res, w.run); err != nil {
		return err
	}
	if err := w.WriteFile(ResultsFile, res.Bytes()); err != nil {
		return err
	}
	data, err := json.MarshalIndent(w.run, "", "  ")
	if err != nil {
		return err
	}
	return w.WriteFile("run.json", append(data, '\n'))
}

// Commit writes run.json a last time and moves the run into place. It
// returns the final directory.
func (w *Writer) Commit() (string, error) {
	if w.done {
		return "", errors.New("run already committed")
	}
	if err := w.Checkpoint(); err != nil {
		return w.dir, fmt.Errorf("saving run (what was measured is in %s): %w", w.dir, err)
	}
	final := filepath.Join(w.store.Root, w.run.ID)
	// The id was free when claimed, but a run committed in the meantime
	// under it (its partial was gone by then) would make the rename fail
	// (a non-empty directory) or replace an empty one: take the next free
	// id instead. Rename onto a missing name is atomic.
	defer w.release()
	for tries := 0; ; tries++ {
		if _, err := os.Lstat(final); errors.Is(err, fs.ErrNotExist) {
			err := os.Rename(w.dir, final)
			if err == nil {
				break
			}
			if !errors.Is(err, fs.ErrExist) && !errors.Is(err, syscall.ENOTEMPTY) || tries > 100 {
				return w.dir, fmt.Errorf("moving run into place (it is in %s): %w", w.dir, err)
			}
		}
		if err := w.reclaim(); err != nil {
			return w.dir, fmt.Errorf("moving run into place (it is in %s): %w", w.dir, err)
		}
		final = filepath.Join(w.store.Root, w.run.ID)
	}
	w.done = true
	w.dir = final
	w.unlock()
	return final, nil
}

// reclaim takes a fresh id for the run (claim's) and rewrites its run.json,
// which names the run; the run stays where it is, whole, for Commit to
// rename into place in one step. The fresh id's partial directory stays
// claimed until then (held), so no other writer can take that id: removing
// it to rename the run onto its name let one claim it in between
// (TestConcurrentCreate, one CI run: "rename …-upload.partial
// …-upload-140.partial: file exists").
func (w *Writer) reclaim() error {
	old := w.dir
	if err := w.claim(); err != nil {
		return err
	}
	w.release()
	w.held, w.dir = w.dir, old
	if reclaimHook != nil {
		reclaimHook()
	}
	return w.Checkpoint()
}

// release gives up the id reclaim held, if any.
func (w *Writer) release() {
	if w.held != "" {
		os.Remove(w.held)
		w.held = ""
	}
}

// reclaimHook, when set (by a test), runs in reclaim once the fresh id is
// claimed: where another writer could race it.
var reclaimHook func()

func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err1 := f.Sync(); err == nil {
		err = err1
	}
	if err1 := f.Close(); err == nil {
		err = err1
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// validRel accepts clean, relative, slash-separated paths without dot
// segments or hidden files.
func validRel(rel string) bool {
	if rel == "" || strings.HasPrefix(rel, "/") || strings.Contains(rel, "\\") || strings.ContainsRune(rel, 0) {
		return false
	}
	for _, seg := range strings.Split(rel, "/") {
		if seg == "" || strings.HasPrefix(seg, ".") {
			return false
		}
	}
	return true
}

// Unlisted is an entry of the store that looks like a run but is not
// listed: refused or unreadable (a symbolic link, a corrupt run.json), or
// partial (being written now, or left by a killed process). ID is the
// run's id, which sorts by the time it started, as runs' ids do.
type Unlisted struct {
	ID      string
	Partial bool
	// Abandoned says a partial run has no writer left (Recover saves it).
	Abandoned bool
	Err       error
}

func (u *Unlisted) Error() string { return u.Err.Error() }
func (u *Unlisted) Unwrap() error { return u.Err }

// List returns the runs in the store, newest first. Entries that are not
// runs are skipped: those that look like runs but are refused or cannot be
// read (a symbolic link, a corrupt run.json, a partial run being written or
// left by a killed process) are returned in skipped, each an *Unlisted
// saying why, so that no run vanishes from a listing without a word.
func (s *Store) List() (runs []*Run, skipped []error, err error) {
	entries, err := os.ReadDir(s.Root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		name := e.Name()
		if id, ok := partialID(name); ok {
			dir := filepath.Join(s.Root, name)
			u := &Unlisted{ID: id, Partial: true, Err: fmt.Errorf("%s: run %s is partial: it is being written now (what it measured so far is in %s)", name, id, dir)}
			if e.IsDir() && abandoned(dir) {
				u.Abandoned = true
				u.Err = fmt.Errorf("%s: run %s is partial: the process writing it ended without saving it (killed?); what it measured by its last checkpoint is in %s and can be recovered as an incomplete run", name, id, dir)
			}
			skipped = append(skipped, u)
			continue
		}
		if !ValidID(name) {
			continue
		}
		if !e.IsDir() && e.Type()&fs.ModeSymlink == 0 {
			continue // a file named like a run: not one
		}
		r, err := s.load(name)
		if err != nil {
			skipped = append(skipped, &Unlisted{ID: name, Err: err})
			continue
		}
		runs = append(runs, r)
	}
	SortNewestFirst(runs)
	return runs, skipped, nil
}

// SortNewestFirst sorts runs as List returns them: by start, newest
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

// partialID returns the id of a partial run's directory name,
// ".<id>.partial".
func partialID(name string) (string, bool) {
	id, ok := strings.CutPrefix(name, ".")
	if !ok {
		return "", false
	}
	id, ok = strings.CutSuffix(id, ".partial")
	return id, ok && ValidID(id)
}

// ErrNoRuns means a store holds no runs; ErrNoRun that it has no run of
// the id asked for. The store's errors wrap them and say which store; the
// caller says what to do (the CLI names a command, the web a page).
var (
	ErrNoRuns = errors.New("no runs")
	ErrNoRun  = errors.New("no run")
	// ErrInvalidID: what was given as a run's id cannot be one.
	ErrInvalidID = errors.New("invalid run id")
	// ErrCorrupt: a run's run.json is not one (it does not decode, or
	// names another run): the reader can say so, not fail (issue 26).
	ErrCorrupt = errors.New("corrupt run.json")
	// ErrUnreadable: the store has entries that look like runs, and
	// none of them can be read (with ErrNoRuns).
	ErrUnreadable = errors.New("none of its runs can be read")
	// ErrNoCase: the run has no case of the name asked for.
	ErrNoCase = errors.New("no case")
)

// unreadableRuns is Load's error for a store whose entries that look like
// runs all fail to load: it is ErrNoRuns and ErrUnreadable.
type unreadableRuns struct {
	root             string
	partial, refused int
}

func (e unreadableRuns) Error() string {
	switch {
	case e.refused == 0:
		return fmt.Sprintf("no run in %s is finished: %s (being written now, or the process writing it was killed)", e.root, isAre(e.partial, "partial"))
	case e.partial == 0:
		return fmt.Sprintf("no run in %s can be read: %s", e.root, isAre(e.refused, "refused or unreadable"))
	}
	return fmt.Sprintf("no run in %s can be read: %s, %d refused or unreadable", e.root, isAre(e.partial, "partial"), e.refused)
}

// isAre says how many are what: "the one there is partial", "the 3 there
// are partial".
func isAre(n int, what string) string {
	if n == 1 {
		return "the one there is " + what
	}
	return fmt.Sprintf("the %d there are %s", n, what)
}

func (e unreadableRuns) Is(target error) bool { return target == ErrNoRuns || target == ErrUnreadable }

// Load reads the run with the given id, or for "latest" or an empty id the
// newest run that measured something: an empty run, interrupted before its
// first repetition, is latest only when there is no other.
func (s *Store) Load(id string) (*Run, error) {
	if id == "" || id == Latest {
		runs, skipped, err := s.List()
		if err != nil {
			return nil, err
		}
		if len(runs) == 0 && len(skipped) > 0 {
			// Not "no runs": there are, and the user must hear why
			// none can be used.
			e := unreadableRuns{root: s.Root}
			for _, err := range skipped {
				if u, ok := err.(*Unlisted); ok && u.Partial {
					e.partial++
				} else {
					e.refused++
				}
			}
			return nil, e
		}
		if len(runs) == 0 {
			return nil, fmt.Errorf("%w in %s", ErrNoRuns, s.Root)
		}
		return LatestOf(runs), nil
	}
	if !ValidID(id) {
		return nil, fmt.Errorf("%w %q", ErrInvalidID, id)
	}
	return s.load(id)
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

// Ref is what a reference to a run or a case resolved to.
type Ref struct {
	// Store is the store the run is in: the one Resolve was called on, or
	// the parent of a run directory given by path.
	Store *Store
	Run   *Run
	// Case is nil when the reference named a whole run.
	Case *Case
}

// Resolve finds the run, and the case if one is named, that ref refers to,
// in every form a command takes: a run id, "latest", "ID/CASE" (the case's
// full name or slug), the path of a run directory (what `perflab run`
// prints as saved), or the path of one of its case directories
// (RUN/cases/SLUG).
func (s *Store) Resolve(ref string) (*Ref, error) {
	if ref == "" {
		ref = Latest
	}
	if run, c, st, ok, err := resolvePath(ref); ok || err != nil {
		if err != nil {
			return nil, err
		}
		return &Ref{Store: st, Run: run, Case: c}, nil
	}
	id, name, _ := strings.Cut(ref, "/")
	run, err := s.Load(id)
	if err != nil {
		return nil, err
	}
	out := &Ref{Store: s, Run: run}
	if name != "" {
		c, err := run.FindCase(name)
		if err != nil {
			return nil, err
		}
		out.Case = c
	}
	return out, nil
}

// resolvePath reads ref as a path: a run directory (it holds run.json),
// a case directory inside one, or a run directory followed by a case name
// ("perflab-runs/ID/variant=a/threads=1": case names hold slashes). ok is
// false when ref is none of these. The run is read through its store, so
// a run directory that is a symbolic link is refused.
func resolvePath(ref string) (run *Run, c *Case, st *Store, ok bool, err error) {
	abs, err := filepath.Abs(filepath.Clean(ref))
	if err != nil {
		return nil, nil, nil, false, nil
	}
	runDir, name := "", ""
	if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
		runDir = abs
		if filepath.Base(filepath.Dir(abs)) == "cases" {
			runDir, name = filepath.Dir(filepath.Dir(abs)), filepath.Base(abs)
		}
		if _, err := os.Lstat(filepath.Join(runDir, "run.json")); err != nil {
			return nil, nil, nil, false, nil
		}
	} else {
		// RUN-DIR/CASE NAME: the longest prefix of ref itself (never the
		// working directory or above it) that holds a run.json.
		clean := filepath.Clean(ref)
		for dir := filepath.Dir(clean); dir != "." && dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
			if _, err := os.Lstat(filepath.Join(dir, "run.json")); err == nil {
				name = filepath.ToSlash(strings.TrimPrefix(clean, dir+string(filepath.Separator)))
				if runDir, err = filepath.Abs(dir); err != nil {
					return nil, nil, nil, false, nil
				}
				break
			}
		}
		if runDir == "" {
			return nil, nil, nil, false, nil
		}
	}
	st = Open(filepath.Dir(runDir))
	run, err = st.Load(filepath.Base(runDir))
	if err != nil {
		return nil, nil, nil, true, err
	}
	if name != "" {
		if c, err = run.FindCase(name); err != nil {
			return nil, nil, nil, true, err
		}
	}
	return run, c, st, true, nil
}

func (s *Store) load(id string) (*Run, error) {
	data, err := s.ReadFile(id, "run.json", MaxRunJSON)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w %q in %s", ErrNoRun, id, s.Root)
	}
	if err != nil {
		return nil, err // it names the run, or the path
	}
	var r Run
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("run %s: %w: %w", id, ErrCorrupt, err)
	}
	if r.ID != id {
		return nil, fmt.Errorf("run %s: %w: it names run %q", id, ErrCorrupt, r.ID)
	}
	// Runs stored before args were redacted may hold a password.
	r.Config.Args = RedactArgs(r.Config.Args)
	return &r, nil
}

// Path returns the path of file rel inside run id, refusing anything that
// could leave the run directory or hang a reader: invalid ids, dot
// segments, absolute paths, symbolic links (the run directory itself
// included) and anything but a regular file at the end. Readers should
// use OpenFile or ReadFile, which also guard the open itself.
func (s *Store) Path(id, rel string) (string, error) {
	p, _, err := s.check(id, rel)
	return p, err
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

// statJSON is Stat on the wire. JSON has no infinities, and benchmath
// reports an interval it cannot compute (too few samples) as ±Inf: such a
// bound is written as null and read back as ±Inf.
type statJSON struct {
	N        int      `json:"n"`
	Mean     float64  `json:"mean"`
	MeanLo   *float64 `json:"mean_lo"`
	MeanHi   *float64 `json:"mean_hi"`
	Median   float64  `json:"median"`
	MedianLo *float64 `json:"median_lo"`
	MedianHi *float64 `json:"median_hi"`
	Min      float64  `json:"min"`
	Max      float64  `json:"max"`
}

func finite(x float64) *float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return nil
	}
	return &x
}

func orInf(p *float64, sign int) float64 {
	if p == nil {
		return math.Inf(sign)
	}
	return *p
}

// MarshalJSON writes s, with unknown interval bounds as null.
func (s Stat) MarshalJSON() ([]byte, error) {
	return json.Marshal(statJSON{s.N, s.Mean, finite(s.MeanLo), finite(s.MeanHi), s.Median,
		finite(s.MedianLo), finite(s.MedianHi), s.Min, s.Max})
}

// UnmarshalJSON reads s; null bounds become -Inf and +Inf.
func (s *Stat) UnmarshalJSON(b []byte) error {
	var j statJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = Stat{j.N, j.Mean, orInf(j.MeanLo, -1), orInf(j.MeanHi, 1), j.Median,
		orInf(j.MedianLo, -1), orInf(j.MedianHi, 1), j.Min, j.Max}
	return nil
}
