//go:build !unix

package store

import "io/fs"

// openFlags: elsewhere the Lstat check before the open is the guard.
const (
	openFlags    = 0
	nonblockFlag = 0
)

// links: elsewhere hard links are not counted.
func links(fs.FileInfo) uint64 { return 1 }
