//go:build perflabtag

package tagged

import "testing"

// BenchmarkTagged exists with -tags perflabtag.
func BenchmarkTagged(b *testing.B) {
	for b.Loop() {
	}
}
