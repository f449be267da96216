package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/perflab/perflab/internal/model"
)

// errLocked: another process holds a partial run's lock: it is writing it.
var errLocked = errors.New("locked")

// ErrBeingWritten is wrapped by Recover's error for a partial run whose
// writer is still running.
var ErrBeingWritten = errors.New("it is being written now")

// recoveredNote is added to the note of a recovered run.
const recoveredNote = "recovered from a partial run: the process writing it ended without saving it (killed, or stopped by a second signal); what it measured by its last checkpoint is kept"

// abandoned reports whether partial run directory dir has no writer left:
// its lock is free (lockDir). Only a writer holds the lock for long.
func abandoned(dir string) bool {
	f, err := lockDir(dir)
	if err != nil {
		return false
	}
	if f != nil {
		f.Close()
	}
	return true
}

// Recover saves the partial run id, left by a process that ended without
// committing it (kill -9, a second signal, a crash), as an incomplete run:
// what it measured by its last checkpoint (each round's end) becomes
// readable by every command. It refuses a partial run whose writer is
// still running (ErrBeingWritten), and one whose run.json cannot be read,
// which it leaves as it was. (issue 26: such rounds could be neither read
// nor recovered.)
func (s *Store) Recover(id string) (*model.Run, error) {
	if !ValidID(id) {
		return nil, fmt.Errorf("%w %q", ErrInvalidID, id)
	}
	partial := filepath.Join(s.Root, "."+id+".partial")
	fi, err := os.Lstat(partial)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w %q left partial in %s", ErrNoRun, id, s.Root)
	}
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, refused("partial run %s in %s is not a directory", id, s.Root)
	}
	lock, err := lockDir(partial)
	if errors.Is(err, errLocked) {
		return nil, fmt.Errorf("partial run %s: %w, by a process that is still running: let it finish, or stop it", id, ErrBeingWritten)
	}
	if err != nil {
		return nil, fmt.Errorf("partial run %s: %w", id, err)
	}
	if lock != nil {
		defer lock.Close()
	}
	final := filepath.Join(s.Root, id)
	if _, err := os.Lstat(final); !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("partial run %s: a run %s is already in %s (the partial one is in %s)", id, id, s.Root, partial)
	}
	// Into place first, so that it is read through the store's one door
	// like any run; back again if it cannot be read.
	if err := os.Rename(partial, final); err != nil {
		return nil, fmt.Errorf("partial run %s: %w", id, err)
	}
	r, err := s.load(id)
	if err != nil {
		if rerr := os.Rename(final, partial); rerr != nil {
			return nil, fmt.Errorf("partial run %s cannot be read (%v), and could not be put back: %w", id, err, rerr)
		}
		return nil, fmt.Errorf("partial run %s cannot be recovered: %w", id, err)
	}
	r.Complete = false
	if r.Note != "" {
		r.Note += "; "
	}
	r.Note += recoveredNote
	data, err := json.MarshalIndent(r, "", "  ")
	if err == nil {
		err = writeAtomic(filepath.Join(final, "run.json"), append(data, '\n'))
	}
	if err != nil {
		return nil, fmt.Errorf("run %s is in place, but its note could not be written: %w", id, err)
	}
	return r, nil
}
