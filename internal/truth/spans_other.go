//go:build !unix

package truth

// spans returns a buffer of n spans. Without mmap it is in the Go heap,
// which makes collections of the alloc variant rarer than in a real run.
func spans(n int) ([]Span, error) { return make([]Span, n), nil }
