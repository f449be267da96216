package testmain

import "testing"

// TestMain runs the tests itself, as a package with setup to do would.
func TestMain(m *testing.M) {
	m.Run()
}
