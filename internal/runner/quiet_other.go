//go:build !unix

package runner

// quietStderr runs f: where descriptors cannot be duplicated the
// runtime's print in startCPUProfile is shown.
func quietStderr(f func()) { f() }
