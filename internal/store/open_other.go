//go:build !unix

package store

// openFlags: elsewhere the Lstat check before the open is the guard.
const (
	openFlags    = 0
	nonblockFlag = 0
)
