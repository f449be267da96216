//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

// lockDir takes an exclusive lock (flock) on directory dir, without
// waiting: errLocked when another process holds it. The kernel releases it
// when the holder ends, however it ends (kill -9 too), so a partial run
// whose lock is free has no writer left. The lock follows the directory
// through a rename. The caller closes the file to release it.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errLocked
		}
		return nil, err
	}
	return f, nil
}
