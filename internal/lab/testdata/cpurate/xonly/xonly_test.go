// Package xonly_test is a package with external tests only. Its
// TestOwnProfile says whether the CPU profile's rate was set before it
// started its own: the runtime then complains on standard error.
package xonly_test

import (
	"crypto/sha256"
	"io"
	"runtime/pprof"
	"testing"
)

var sink [32]byte

func BenchmarkHash(b *testing.B) {
	buf := make([]byte, 1024)
	for b.Loop() {
		sink = sha256.Sum256(buf)
	}
}

func TestOwnProfile(t *testing.T) {
	if err := pprof.StartCPUProfile(io.Discard); err != nil {
		t.Skip(err) // the testing package's, -test.cpuprofile
	}
	pprof.StopCPUProfile()
}
