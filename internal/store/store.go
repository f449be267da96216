// Package store keeps perflab runs on disk: one directory per run under a
// root (default ./perflab-runs), named by a sortable id. A run is written
// into a hidden ".<id>.partial" directory, checkpointed as it goes, and
// renamed into place when it ends, so a crash or Ctrl-C never leaves a
// half-written run where readers look, and what was measured is kept.
// The runner checkpoints after every round and every profiled case.
//
// Layout of a run directory:
//
//	run.json                  metadata and results (model.Run)
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
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/perflab/perflab/internal/model"
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
func (s *Store) Create(r *model.Run) (*Writer, error) {
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

// Abandon removes the run being written, what it holds included, and
// releases its lock: for a run whose files are worth nothing on their own
// (an import that failed). A server that kept the lock of each failed
// write held a file descriptor per failure. After Commit it does nothing.
func (w *Writer) Abandon() error {
	if w.done {
		return nil
	}
	w.done = true
	w.release()
	w.unlock()
	return os.RemoveAll(w.dir)
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
	run   *model.Run
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
func (s *Store) List() (runs []*model.Run, skipped []error, err error) {
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
	model.SortNewestFirst(runs)
	return runs, skipped, nil
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
	// ErrNoStore comes with ErrNoRuns when the store's directory does
	// not exist.
	ErrNoStore = errors.New("no such directory")
	ErrNoRun   = errors.New("no run")
	// ErrInvalidID: what was given as a run's id cannot be one.
	ErrInvalidID = errors.New("invalid run id")
	// ErrCorrupt: a run's run.json is not one (it does not decode, or
	// names another run): the reader can say so, not fail (issue 26).
	ErrCorrupt = errors.New("corrupt run.json")
	// ErrUnreadable: the store has entries that look like runs, and
	// none of them can be read (with ErrNoRuns).
	ErrUnreadable = errors.New("none of its runs can be read")
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
func (s *Store) Load(id string) (*model.Run, error) {
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
			if _, err := os.Stat(s.Root); errors.Is(err, fs.ErrNotExist) {
				// A typo in the store's name reads as an empty store,
				// and "run perflab run first" would send the user to
				// measure again what is stored elsewhere.
				return nil, fmt.Errorf("%w in %s: %w", ErrNoRuns, s.Root, ErrNoStore)
			}
			return nil, fmt.Errorf("%w in %s", ErrNoRuns, s.Root)
		}
		return model.LatestOf(runs), nil
	}
	if !ValidID(id) {
		return nil, fmt.Errorf("%w %q", ErrInvalidID, id)
	}
	return s.load(id)
}

// Ref is what a reference to a run or a case resolved to.
type Ref struct {
	// Store is the store the run is in: the one Resolve was called on, or
	// the parent of a run directory given by path.
	Store *Store
	Run   *model.Run
	// Case is nil when the reference named a whole run.
	Case *model.Case
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
func resolvePath(ref string) (run *model.Run, c *model.Case, st *Store, ok bool, err error) {
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

func (s *Store) load(id string) (*model.Run, error) {
	data, err := s.ReadFile(id, "run.json", MaxRunJSON)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w %q in %s", ErrNoRun, id, s.Root)
	}
	if err != nil {
		return nil, err // it names the run, or the path
	}
	var r model.Run
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
