package main

import "testing"

var sink [32]byte

func BenchmarkHash(b *testing.B) {
	buf := make([]byte, 1024)
	for b.Loop() {
		sink = hash(buf)
	}
}
