package testmain_test

import (
	"testing"

	"github.com/perflab/perflab/internal/lab/testdata/cpurate/testmain"
)

// os, runtime and strings are names the rate file must not take.
var os, runtime, strings = 1, 2, 3

var sink [32]byte

func BenchmarkHash(b *testing.B) {
	buf := make([]byte, 1024+os+runtime+strings)
	for b.Loop() {
		sink = testmain.Hash(buf)
	}
}
