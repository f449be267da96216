// Package cpufix has benchmarks on one goroutine whose untimed setup
// burns CPU: their cpu/op must be their timed loop's, about their time/op
// at -cpu 1, not the process's (issue 23).
package cpufix

import (
	"crypto/sha256"
	"testing"
	"time"
)

var sink [32]byte

// spin hashes for d of wall time: setup that costs CPU.
func spin(d time.Duration) {
	buf := make([]byte, 1024)
	for start := time.Now(); time.Since(start) < d; {
		sink = sha256.Sum256(buf)
	}
}

// BenchmarkSetupLoop burns 50 ms of CPU before b.ResetTimer, in each of
// testing's runN calls, then hashes in a b.N loop.
func BenchmarkSetupLoop(b *testing.B) {
	spin(50 * time.Millisecond)
	buf := make([]byte, 1024)
	b.ResetTimer()
	for range b.N {
		sink = sha256.Sum256(buf)
	}
}

// BenchmarkSetupBLoop does the same with b.Loop, which runs once.
func BenchmarkSetupBLoop(b *testing.B) {
	spin(50 * time.Millisecond)
	buf := make([]byte, 1024)
	for b.Loop() {
		sink = sha256.Sum256(buf)
	}
}
