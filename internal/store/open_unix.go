//go:build unix

package store

import (
	"io/fs"
	"syscall"
)

// openFlags keep an open of a checked path from following a link put in
// its place, or blocking on a FIFO, after the check.
const (
	openFlags    = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
	nonblockFlag = syscall.O_NONBLOCK
)

// links returns the number of hard links to the file fi describes, 1 where
// the system does not say.
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
