package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/model"
)

// hostileStore returns a store with one good run, "good", holding
// cases/a/wall.pb.gz, and the run's directory.
func hostileStore(t *testing.T) (*Store, string) {
	t.Helper()
	s := Open(filepath.Join(t.TempDir(), "runs"))
	w, err := s.Create(&model.Run{ID: "good", Scenario: "x", Started: time.Now(),
		Cases: []model.Case{{Name: "variant=a", Status: model.StatusOK, Profiles: map[string]string{"wall": "cases/a/wall.pb.gz"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile("cases/a/wall.pb.gz", []byte("profile")); err != nil {
		t.Fatal(err)
	}
	dir, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

// TestOpenFileRefuses: every way out of a run, and every file that is not
// a regular one, is refused by the one door, before anything is read.
func TestOpenFileRefuses(t *testing.T) {
	s, dir := hostileStore(t)
	outside := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outside, []byte("secret"), 0o644)
	os.Symlink(outside, filepath.Join(dir, "cases/a/link.pb.gz"))
	os.Symlink(filepath.Dir(outside), filepath.Join(dir, "cases/linkdir"))
	if err := syscall.Mkfifo(filepath.Join(dir, "cases/a/fifo.pb.gz"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "cases/a/dir.pb.gz"), 0o755)
	// A hard link to a file outside the store (issue 26: read by flame
	// and push, and served).
	if err := os.Link(outside, filepath.Join(dir, "cases/a/hard.pb.gz")); err != nil {
		t.Fatal(err)
	}
	device := false
	if err := syscall.Mknod(filepath.Join(dir, "cases/a/dev.pb.gz"), syscall.S_IFCHR|0o644, 1<<8|3); err == nil {
		device = true // root: a copy of /dev/null
	} else if err := os.Symlink("/dev/zero", filepath.Join(dir, "cases/a/dev.pb.gz")); err != nil {
		t.Fatal(err)
	}
	// A run directory that is a link to a run elsewhere.
	elsewhere, edir := hostileStore(t)
	_ = elsewhere
	os.Symlink(edir, filepath.Join(s.Root, "linked"))

	for _, tt := range []struct{ name, id, rel, want string }{
		{"symlink file", "good", "cases/a/link.pb.gz", "symbolic link"},
		{"symlink dir", "good", "cases/linkdir/secret", "symbolic link"},
		{"fifo", "good", "cases/a/fifo.pb.gz", "FIFO"},
		{"hard link", "good", "cases/a/hard.pb.gz", "has 2 hard links"},
		{"device", "good", "cases/a/dev.pb.gz", ""},
		{"directory", "good", "cases/a/dir.pb.gz", "a directory"},
		{"dotdot", "good", "../x/run.json", "invalid path"},
		{"absolute", "good", "/etc/passwd", "invalid path"},
		{"file as dir", "good", "cases/a/wall.pb.gz/x", "not a directory"},
		{"symlinked run directory", "linked", "run.json", "symbolic link"},
		{"invalid id", "..", "run.json", "invalid run id"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan struct{})
			var err error
			go func() {
				defer close(done)
				var f *os.File
				f, _, err = s.OpenFile(tt.id, tt.rel)
				if f != nil {
					f.Close()
				}
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("OpenFile hung")
			}
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("OpenFile(%q, %q) = %v, want refused", tt.id, tt.rel, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
			if _, err := s.Path(tt.id, tt.rel); err == nil {
				t.Errorf("Path(%q, %q) accepted", tt.id, tt.rel)
			}
		})
	}
	if device {
		t.Log("device node tested as a character device")
	}
	if data, err := s.ReadFile("good", "cases/a/wall.pb.gz", 0); err != nil || string(data) != "profile" {
		t.Errorf("good file: %q, %v", data, err)
	}
	if _, err := s.ReadFile("good", "cases/a/wall.pb.gz", 3); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := s.Load("linked"); !errors.Is(err, ErrRefused) {
		t.Errorf("Load of a symlinked run: %v", err)
	}
	if _, err := s.Resolve(filepath.Join(s.Root, "linked")); !errors.Is(err, ErrRefused) {
		t.Errorf("Resolve of a symlinked run directory by path: %v", err)
	}
}

// TestRunJSONBounded: a run.json over MaxRunJSON is refused unread (the
// file here is sparse), and a FIFO in its place does not hang Load.
func TestRunJSONBounded(t *testing.T) {
	s, dir := hostileStore(t)
	if err := os.Truncate(filepath.Join(dir, "run.json"), MaxRunJSON+1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load("good"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("huge run.json: %v", err)
	}
	os.Remove(filepath.Join(dir, "run.json"))
	syscall.Mkfifo(filepath.Join(dir, "run.json"), 0o644)
	done := make(chan error, 1)
	go func() { _, err := s.Load("good"); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrRefused) {
			t.Errorf("FIFO run.json: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Load of a FIFO run.json hung")
	}
}

// TestListSaysWhatItSkips: symbolic links and partial runs are not
// listed, and the listing says so.
func TestListSaysWhatItSkips(t *testing.T) {
	s, _ := hostileStore(t)
	_, edir := hostileStore(t)
	os.Symlink(edir, filepath.Join(s.Root, "linked"))
	w, err := s.Create(&model.Run{ID: "running", Scenario: "x", Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	_ = w
	runs, skipped, err := s.List()
	if err != nil || len(runs) != 1 || runs[0].ID != "good" {
		t.Fatalf("runs %v, err %v", runs, err)
	}
	var msgs []string
	for _, e := range skipped {
		msgs = append(msgs, e.Error())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"run linked in", "is a symbolic link", "run running is partial"} {
		if !strings.Contains(all, want) {
			t.Errorf("skipped lacks %q:\n%s", want, all)
		}
	}
}

func TestResolveRunDirAndCaseName(t *testing.T) {
	s, dir := hostileStore(t)
	r, err := s.Resolve(dir + "/variant=a")
	if err != nil || r.Case == nil || r.Case.Name != "variant=a" {
		t.Fatalf("Resolve(RUN-DIR/CASE) = %+v, %v", r, err)
	}
	// The working directory is never taken for the run: only prefixes of
	// the reference itself.
	t.Chdir(dir)
	if _, err := Open(s.Root).Resolve("latest"); err != nil {
		t.Errorf("latest from inside a run directory: %v", err)
	}
}

// TestConcurrentCreate: concurrent writers of runs with the same id (web
// saves in the same second) each get a distinct id and all commit; none
// is told the store is not writable. (issue 14, part 8: 3 of 192 failed)
func TestConcurrentCreate(t *testing.T) {
	s := Open(filepath.Join(t.TempDir(), "runs"))
	const n = 192
	errs := make(chan error, n)
	ids := make(chan string, n)
	var start sync.WaitGroup
	start.Add(1)
	var done sync.WaitGroup
	for range n {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			w, err := s.Create(&model.Run{ID: "20261201-090000-upload", Scenario: "upload", Started: time.Now()})
			if err != nil {
				errs <- err
				return
			}
			dir, err := w.Commit()
			if err != nil {
				errs <- err
				return
			}
			ids <- filepath.Base(dir)
		}()
	}
	start.Done()
	done.Wait()
	close(errs)
	close(ids)
	for err := range errs {
		t.Error(err)
	}
	seen := map[string]bool{}
	for id := range ids {
		if seen[id] {
			t.Errorf("id %s given twice", id)
		}
		seen[id] = true
	}
	runs, skipped, err := s.List()
	if err != nil || len(runs) != n || len(skipped) != 0 {
		t.Errorf("%d runs listed (want %d), skipped %v, err %v", len(runs), n, skipped, err)
	}
	for _, r := range runs {
		if !seen[r.ID] {
			t.Errorf("run %s listed but not returned", r.ID)
		}
	}
}

// TestReclaimHoldsItsID: a run whose id was taken while it was written
// moves to the next free one, and holds it while it moves: a writer that
// starts meanwhile gets another id, and both runs commit whole.
func TestReclaimHoldsItsID(t *testing.T) {
	s := Open(filepath.Join(t.TempDir(), "runs"))
	const id = "20261201-090000-upload"
	a, err := s.Create(&model.Run{ID: id, Scenario: "upload", Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.WriteFile("cases/x/wall.pb.gz", []byte("profile")); err != nil {
		t.Fatal(err)
	}
	// A run committed under a's id while a was written.
	if err := os.MkdirAll(filepath.Join(s.Root, id, "cases"), 0o755); err != nil {
		t.Fatal(err)
	}
	var b *Writer
	reclaimHook = func() {
		reclaimHook = nil
		if b, err = s.Create(&model.Run{ID: id, Scenario: "upload", Started: time.Now()}); err != nil {
			t.Error(err)
		}
	}
	defer func() { reclaimHook = nil }()
	dirA, err := a.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if b == nil {
		t.Fatal("the hook did not run: a's id was not reclaimed")
	}
	dirB, err := b.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(dirA) != id+"-2" || filepath.Base(dirB) != id+"-3" {
		t.Errorf("a committed as %s, b as %s; want %s-2 and %s-3", filepath.Base(dirA), filepath.Base(dirB), id, id)
	}
	if got, err := os.ReadFile(filepath.Join(dirA, "cases", "x", "wall.pb.gz")); err != nil || string(got) != "profile" {
		t.Errorf("a's profile after the move: %q, %v", got, err)
	}
	ra, err := s.Load(filepath.Base(dirA))
	if err != nil || ra.ID != id+"-2" {
		t.Errorf("a's run.json: %+v, %v", ra, err)
	}
	for _, p := range []string{"." + id + ".partial", "." + id + "-2.partial"} {
		if _, err := os.Stat(filepath.Join(s.Root, p)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s is left: %v", p, err)
		}
	}
	// Listed: a's and b's; skipped: the bare directory that took a's id.
	if runs, skipped, err := s.List(); err != nil || len(runs) != 2 || len(skipped) != 1 {
		t.Errorf("%d runs listed, skipped %v, err %v; want a's and b's, and one skipped", len(runs), skipped, err)
	}
}
