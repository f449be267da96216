//go:build !linux

package truth

// runDelays is known on Linux only.
func runDelays() map[int]int64 { return nil }
