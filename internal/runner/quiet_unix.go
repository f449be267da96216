//go:build unix

package runner

import (
	"os"

	"golang.org/x/sys/unix"
)

// quietStderr runs f with the process's standard error (file descriptor
// 2) pointed at /dev/null, for the runtime's print in startCPUProfile,
// which no Go API can silence. f takes microseconds; the runner's own
// output is written from this goroutine, so none of it is lost. If
// descriptor 2 cannot be saved, f runs as it is.
func quietStderr(f func()) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		f()
		return
	}
	defer null.Close()
	saved, err := unix.Dup(2)
	if err != nil {
		f()
		return
	}
	defer unix.Close(saved)
	if err := unix.Dup2(int(null.Fd()), 2); err != nil {
		f()
		return
	}
	defer unix.Dup2(saved, 2)
	f()
}
