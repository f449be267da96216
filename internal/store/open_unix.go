//go:build unix

package store

import "syscall"

// openFlags keep an open of a checked path from following a link put in
// its place, or blocking on a FIFO, after the check.
const (
	openFlags    = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
	nonblockFlag = syscall.O_NONBLOCK
)
