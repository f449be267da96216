//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package runner

import "time"

// processCPU is not available on this platform; CPU time per op reads 0.
func processCPU() time.Duration { return 0 }
