package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Remove deletes run id through the store's guarded door: the id must be
// valid, its directory a directory (a symbolic link is refused, not
// followed) that holds a run.json. The run is first renamed out of the
// listing (to .<id>.removing), so a reader sees all of it or none, then
// removed; os.RemoveAll removes links inside it without following them.
func (s *Store) Remove(id string) error {
	dir, err := s.runDir(id)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w %q in %s", ErrNoRun, id, s.Root)
	}
	if err != nil {
		return err
	}
	if fi, err := os.Lstat(filepath.Join(dir, "run.json")); err != nil || !fi.Mode().IsRegular() {
		return refused("%s in %s holds no run.json: not a run, not removed", id, s.Root)
	}
	return s.removeDir(dir, id)
}

// RemovePartial deletes the partial run id (.<id>.partial): one its
// writer left when it was killed. It refuses one whose writer still holds
// its lock (ErrBeingWritten), as Recover does: how long ago the run was
// last written (PartialModTime) cannot tell a killed writer from one
// whose round takes longer than the caller waited, and removing that one
// would lose the run under a process still measuring it. The lock is held
// while the directory is removed, so no writer can take it meanwhile.
func (s *Store) RemovePartial(id string) error {
	if !ValidID(id) {
		return refused("invalid run id %q", id)
	}
	dir := filepath.Join(s.Root, "."+id+".partial")
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return refused("partial run %s in %s is not a directory", id, s.Root)
	}
	lock, err := lockDir(dir)
	if errors.Is(err, errLocked) {
		return fmt.Errorf("partial run %s: %w, by a process that is still running: let it finish, or stop it", id, ErrBeingWritten)
	}
	if err != nil {
		return fmt.Errorf("partial run %s: %w", id, err)
	}
	if lock != nil {
		defer lock.Close()
	}
	return s.removeDir(dir, id)
}

// PartialModTime is when partial run id was last written: its run.json's
// modification time (the writer checkpoints it every round), else its
// directory's.
func (s *Store) PartialModTime(id string) (time.Time, error) {
	if !ValidID(id) {
		return time.Time{}, refused("invalid run id %q", id)
	}
	dir := filepath.Join(s.Root, "."+id+".partial")
	fi, err := os.Lstat(filepath.Join(dir, "run.json"))
	if err != nil {
		fi, err = os.Lstat(dir)
	}
	if err != nil {
		return time.Time{}, err
	}
	return fi.ModTime(), nil
}

func (s *Store) removeDir(dir, id string) error {
	gone := filepath.Join(s.Root, "."+id+".removing")
	os.RemoveAll(gone) // what an earlier, interrupted removal left
	if err := os.Rename(dir, gone); err != nil {
		return fmt.Errorf("removing run %s: %w", id, err)
	}
	if err := os.RemoveAll(gone); err != nil {
		return fmt.Errorf("removing run %s (what is left is in %s): %w", id, gone, err)
	}
	return nil
}
