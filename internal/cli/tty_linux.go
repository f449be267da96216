package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// isTTY says whether character device f answers TCGETS, as a terminal
// does and /dev/null does not.
func isTTY(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
