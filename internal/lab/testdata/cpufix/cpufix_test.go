// Package cpufix has benchmarks on one goroutine whose untimed setup
// burns CPU: their cpu/op must be their timed loop's, about their time/op
// at -cpu 1, not the process's (issue 23).
package cpufix

import (
	"crypto/sha256"
	"testing"
)

var sink [32]byte

// setupHashes is about 50 ms of hashing here: a fixed amount of work,
// not a wall time, whose CPU a busy machine would shorten by whatever
// part of it the process spent descheduled.
const setupHashes = 80000

// spin is setup that costs CPU: setupHashes hashes.
func spin() {
	buf := make([]byte, 1024)
	for range setupHashes {
		sink = sha256.Sum256(buf)
	}
}

// BenchmarkSetupLoop burns 50 ms of CPU before b.ResetTimer, in each of
// testing's runN calls, then hashes in a b.N loop.
func BenchmarkSetupLoop(b *testing.B) {
	spin()
	buf := make([]byte, 1024)
	b.ResetTimer()
	for range b.N {
		sink = sha256.Sum256(buf)
	}
}

// BenchmarkSetupBLoop does the same with b.Loop, which runs once.
func BenchmarkSetupBLoop(b *testing.B) {
	spin()
	buf := make([]byte, 1024)
	for b.Loop() {
		sink = sha256.Sum256(buf)
	}
}
