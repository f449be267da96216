package flame

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortStacks holds the radix sort to a stable slices.SortFunc with
// slices.Compare, and its shared prefixes to the ones counted frame by
// frame, on stacks with duplicates, prefixes of each other, empty ones
// and frames near the int32 limit.
func TestSortStacks(t *testing.T) {
	for _, tc := range []struct {
		name         string
		n, depth, fn int
	}{
		{"empty", 0, 0, 1},
		{"one", 1, 5, 3},
		{"few frames, many duplicates and prefixes", 2000, 6, 2},
		{"wide", 3000, 30, 500},
		{"deep chains", 300, 2000, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.n), 1))
			var buf []int32
			start := []int32{0}
			for range tc.n {
				d := rng.IntN(tc.depth + 1)
				for range d {
					f := int32(rng.IntN(tc.fn))
					if f == 1 {
						f = 1<<31 - 1
					}
					buf = append(buf, f)
				}
				start = append(start, int32(len(buf)))
			}
			seq := func(k int32) []int32 { return buf[start[k]:start[k+1]] }
			order := make([]int32, tc.n)
			for i := range order {
				order[i] = int32(i)
			}
			want := slices.Clone(order)
			slices.SortStableFunc(want, func(a, b int32) int { return slices.Compare(seq(a), seq(b)) })
			lcp := sortStacks(order, seq)
			if !slices.Equal(order, want) {
				t.Fatalf("order differs from a stable sort")
			}
			for i := 1; i < len(order); i++ {
				a, b := seq(order[i-1]), seq(order[i])
				l := 0
				for l < len(a) && l < len(b) && a[l] == b[l] {
					l++
				}
				if int(lcp[i]) != l {
					t.Fatalf("stack %d: shared prefix %d, want %d", i, lcp[i], l)
				}
			}
		})
	}
}
