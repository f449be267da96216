package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Limits on what the store reads. A run.json holds every repetition of
// every case: 1,000 cases × 100 repetitions × 12 metrics is about 20 MB of
// JSON, so MaxRunJSON leaves room while keeping a tampered run.json from
// taking the reader's memory. MaxFile bounds any other file read whole
// (a profile's compressed bytes, as profiles.MaxCompressed does).
const (
	MaxRunJSON = 64 << 20
	MaxFile    = 256 << 20
)

// ErrRefused is wrapped by the store's errors for a file it will not
// open: a symbolic link (the run directory itself included), anything
// that is not a regular file (a FIFO, a device, a socket), a path out of
// the run, or a file over its size limit.
var ErrRefused = errors.New("refused")

// ErrTooLarge is wrapped (with ErrRefused) for a file over a size limit.
var ErrTooLarge = errors.New("file too large")

// refused builds an error that wraps ErrRefused.
func refused(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrRefused}, args...)...)
}

// runDir returns the directory of run id after checking, with Lstat, that
// it is a directory and not a symbolic link.
func (s *Store) runDir(id string) (string, error) {
	if !ValidID(id) {
		return "", refused("invalid run id %q", id)
	}
	dir := filepath.Join(s.Root, id)
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return "", refused("run %s in %s is a symbolic link", id, s.Root)
	}
	if !fi.IsDir() {
		return "", refused("run %s in %s is not a directory", id, s.Root)
	}
	return dir, nil
}

// OpenFile opens file rel (slash-separated) of run id for reading,
// through the one guarded door of the store: the run directory and every
// segment of rel are checked with Lstat first (no symbolic links, no dot
// segments, directories on the way and a regular file with one hard link
// at the end); the file is opened with O_NOFOLLOW and O_NONBLOCK, so that
// one swapped for a link or a FIFO after the check cannot be followed or
// hang the open; and the open file is checked again to be the regular
// file that was checked, still with one link. The caller closes the file.
func (s *Store) OpenFile(id, rel string) (*os.File, fs.FileInfo, error) {
	p, before, err := s.check(id, rel)
	if err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(p, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && (!fi.Mode().IsRegular() || !os.SameFile(before, fi)) {
		err = refused("%s in run %s changed while it was opened", rel, id)
	}
	if err == nil && links(fi) > 1 {
		err = hardLinked(id, rel, links(fi))
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// ReadFile reads file rel of run id through OpenFile, refusing one larger
// than limit bytes (MaxFile if limit is not positive) before reading it,
// and reading at most limit bytes whatever the file claims.
func (s *Store) ReadFile(id, rel string, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = MaxFile
	}
	f, fi, err := s.OpenFile(id, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, tooLarge(id, rel, limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(id, rel, limit)
	}
	return data, nil
}

func tooLarge(id, rel string, limit int64) error {
	return fmt.Errorf("%w: %s in run %s is larger than %s: %w", ErrRefused, rel, id, sizeText(limit), ErrTooLarge)
}

func sizeText(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// check validates rel inside run id and returns its path and what Lstat
// says of it.
func (s *Store) check(id, rel string) (string, fs.FileInfo, error) {
	if !validRel(rel) {
		return "", nil, refused("invalid path %q in run %q", rel, id)
	}
	p, err := s.runDir(id)
	if err != nil {
		return "", nil, err
	}
	segs := strings.Split(rel, "/")
	var fi fs.FileInfo
	for i, seg := range segs {
		p = filepath.Join(p, seg)
		if fi, err = os.Lstat(p); err != nil {
			return "", nil, err
		}
		last := i == len(segs)-1
		switch m := fi.Mode(); {
		case m&fs.ModeSymlink != 0:
			return "", nil, refused("%s in run %s is a symbolic link", rel, id)
		case !last && !m.IsDir():
			return "", nil, refused("%s in run %s: %s is not a directory", rel, id, strings.Join(segs[:i+1], "/"))
		case last && !m.IsRegular():
			return "", nil, refused("%s in run %s is not a regular file (%s)", rel, id, kindOf(m))
		case last && links(fi) > 1:
			return "", nil, hardLinked(id, rel, links(fi))
		}
	}
	return p, fi, nil
}

// hardLinked refuses a file with more than one hard link: the store never
// makes one, and the other name can be a file outside the store that a
// run's path would then read and serve (issue 26).
func hardLinked(id, rel string, n uint64) error {
	return refused("%s in run %s has %d hard links (a file of a run has one; the others may be outside the store); if it is yours, replace it with a copy", rel, id, n)
}

func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

// OpenUserFile opens a file a user named on the command line (not one
// inside a store): symbolic links are followed, since the user chose the
// path, but only a regular file is read, and the open cannot block on a
// FIFO. It returns the file and its size.
func OpenUserFile(path string) (*os.File, int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, refused("%s is not a regular file (%s)", path, kindOf(fi.Mode()))
	}
	f, err := os.OpenFile(path, os.O_RDONLY|nonblockFlag, 0)
	if err != nil {
		return nil, 0, err
	}
	if fi2, err := f.Stat(); err != nil || !fi2.Mode().IsRegular() {
		f.Close()
		return nil, 0, refused("%s is not a regular file", path)
	}
	return f, fi.Size(), nil
}
