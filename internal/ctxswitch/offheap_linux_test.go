package ctxswitch

import (
	"runtime"
	"runtime/metrics"
	"testing"
)

// TestOffHeap: elements added across chunks come back in order, can be
// changed in place, and are not live Go heap while kept.
func TestOffHeap(t *testing.T) {
	heap := func() uint64 {
		runtime.GC()
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	for _, n := range []int{0, 1, offHeapChunk - 1, offHeapChunk, 3*offHeapChunk + 5} {
		var o offHeap[stay]
		before := heap()
		for i := range n {
			if !o.add(stay{at: int64(i), tid: int32(i % 7)}) {
				t.Fatal("no memory mapped")
			}
		}
		if o.len() != n {
			t.Fatalf("len %d, want %d", o.len(), n)
		}
		// 24 bytes an element: 2.4 MB at the largest n, none of it on
		// the heap (a chunk's header is, a few bytes).
		if grew := int64(heap()) - int64(before); grew > 64<<10 {
			t.Errorf("%d elements grew the live heap by %d bytes", n, grew)
		}
		if n > 0 {
			o.at(n - 1).until = 42
		}
		got := o.collect()
		if len(got) != n {
			t.Fatalf("collected %d, want %d", len(got), n)
		}
		for i, s := range got {
			if s.at != int64(i) || s.tid != int32(i%7) {
				t.Fatalf("element %d = %+v", i, s)
			}
		}
		if n > 0 && got[n-1].until != 42 {
			t.Errorf("the change through at was lost: %+v", got[n-1])
		}
		if o.len() != 0 || o.chunks != nil {
			t.Errorf("collect left %d elements mapped", o.len())
		}
	}
}
