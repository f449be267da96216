package ctxswitch

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// offHeap is an append-only array of T kept in anonymous memory mapped
// outside the Go heap, in chunks, for what the recorder gathers while the
// profiling window runs: on the heap it would be live bytes the window's
// GC pacing does not know of (a second of a channel hand-off's context
// switches, 20,000–40,000 stays, is about a megabyte, a quarter of the
// runtime's 4 MB minimum heap). T must hold no pointers. The zero value is
// empty; free unmaps it.
type offHeap[T any] struct {
	chunks [][]T
	mems   [][]byte
	n      int
}

// offHeapChunk is the elements per mapped chunk.
const offHeapChunk = 1 << 15

// add appends v, and says false when memory could not be mapped.
func (o *offHeap[T]) add(v T) bool {
	if o.n == len(o.chunks)*offHeapChunk {
		var zero T
		mem, err := unix.Mmap(-1, 0, offHeapChunk*int(unsafe.Sizeof(zero)), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
		if err != nil {
			return false
		}
		o.mems = append(o.mems, mem)
		o.chunks = append(o.chunks, unsafe.Slice((*T)(unsafe.Pointer(&mem[0])), offHeapChunk))
	}
	o.chunks[o.n/offHeapChunk][o.n%offHeapChunk] = v
	o.n++
	return true
}

// len is the number of elements added.
func (o *offHeap[T]) len() int { return o.n }

// at is element i.
func (o *offHeap[T]) at(i int) *T { return &o.chunks[i/offHeapChunk][i%offHeapChunk] }

// collect copies the elements to a slice on the heap and unmaps them.
func (o *offHeap[T]) collect() []T {
	out := make([]T, 0, o.n)
	for i, c := range o.chunks {
		out = append(out, c[:min(offHeapChunk, o.n-i*offHeapChunk)]...)
	}
	o.free()
	return out
}

// free unmaps the elements.
func (o *offHeap[T]) free() {
	for _, m := range o.mems {
		unix.Munmap(m)
	}
	*o = offHeap[T]{}
}
