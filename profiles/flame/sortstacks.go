package flame

import "slices"

// sortStacks sorts order, indexes of stacks, by their frames compared
// lexicographically (a stack before the longer ones it is a prefix of),
// keeping equal stacks in their order, and returns the length of the
// prefix each stack shares with the one before it in the sorted order.
//
// It is a most-significant-digit radix sort: the stacks that agree up to
// depth d are put in order by their frame at depth d only, and a group of
// one is done. Comparing whole stacks (slices.SortFunc with
// slices.Compare) re-read the long prefixes that stacks share at every
// comparison: it was a third of drawing a million unique stacks (issue
// 26). The shared prefixes come out of the partitioning for free.
func sortStacks(order []int32, seq func(int32) []int32) (lcp []int32) {
	n := len(order)
	lcp = make([]int32, n)
	keys := make([]uint64, n) // frame+1 (0: the stack ends) << 32 | position
	tmp := make([]int32, n)
	type group struct{ lo, hi, d int }
	work := []group{{0, n, 0}}
	for len(work) > 0 {
		g := work[len(work)-1]
		work = work[:len(work)-1]
		lo, hi, d := g.lo, g.hi, g.d
		for hi-lo > 1 {
			// The frame at depth d of each stack; if all are the same,
			// the group goes one level deeper as it is.
			same := true
			for i := lo; i < hi; i++ {
				s := seq(order[i])
				k := uint64(0)
				if d < len(s) {
					k = uint64(uint32(s[d])) + 1
				}
				keys[i] = k<<32 | uint64(i-lo)
				same = same && keys[i]>>32 == keys[lo]>>32
			}
			if same && keys[lo]>>32 != 0 {
				d++
				continue
			}
			if !same {
				slices.Sort(keys[lo:hi])
				for i := lo; i < hi; i++ {
					tmp[i] = order[lo+int(uint32(keys[i]))]
				}
				copy(order[lo:hi], tmp[lo:hi])
			}
			// Runs of one frame are the subgroups; the stacks that end at
			// d (key 0, first) are equal and done.
			for i := lo; i < hi; {
				j := i + 1
				for j < hi && keys[j]>>32 == keys[i]>>32 {
					j++
				}
				if i > lo {
					lcp[i] = int32(d)
				}
				if keys[i]>>32 == 0 {
					for x := i + 1; x < j; x++ {
						lcp[x] = int32(d)
					}
				} else if j-i > 1 {
					work = append(work, group{i, j, d + 1})
				}
				i = j
			}
			break
		}
	}
	return lcp
}
