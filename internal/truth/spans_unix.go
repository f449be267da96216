//go:build unix

package truth

import (
	"syscall"
	"unsafe"
)

// spans returns a buffer of n spans mapped outside the Go heap: a test
// process that kept 64 MB of logs in its heap would collect the alloc
// variant's garbage far less often than a real run does. Pages are only
// touched as spans are logged. The mapping is never released; the tests
// make one recorder.
func spans(n int) ([]Span, error) {
	size := n * int(unsafe.Sizeof(Span{}))
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, err
	}
	return unsafe.Slice((*Span)(unsafe.Pointer(unsafe.SliceData(b))), n), nil
}
