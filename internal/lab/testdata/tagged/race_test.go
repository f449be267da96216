//go:build race

package tagged

import "testing"

// BenchmarkRace exists with -race.
func BenchmarkRace(b *testing.B) {
	for b.Loop() {
	}
}
