// Package hang has a benchmark that hangs once it is timed for real: its
// probe (b.N=1) returns, its first repetition never does.
package hang

import (
	"testing"
	"time"
)

// BenchmarkHang sleeps for ever at any b.N above 1.
func BenchmarkHang(b *testing.B) {
	for range b.N {
		if b.N > 1 {
			time.Sleep(time.Hour)
		}
	}
}

// BenchmarkQuick must be measured beside it.
func BenchmarkQuick(b *testing.B) {
	x := 0
	for i := range b.N {
		x += i
	}
	_ = x
}
