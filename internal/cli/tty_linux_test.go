package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// TestIsTerminal: /dev/null is a character device but no terminal, so
// output sent there is not refused as markup for a screen, and input from
// it is not a person to ask; a pseudo-terminal is one.
func TestIsTerminal(t *testing.T) {
	open := func(name string, flag int) func(t *testing.T) *os.File {
		return func(t *testing.T) *os.File {
			f, err := os.OpenFile(name, flag, 0o644)
			if err != nil {
				t.Skipf("%s: %v", name, err)
			}
			t.Cleanup(func() { f.Close() })
			return f
		}
	}
	for _, tt := range []struct {
		name string
		file func(t *testing.T) *os.File
		want bool
	}{
		{"/dev/null", open(os.DevNull, os.O_WRONLY), false},
		{"a file", open(filepath.Join(t.TempDir(), "out.svg"), os.O_CREATE|os.O_WRONLY), false},
		{"a pipe", func(t *testing.T) *os.File {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close(); w.Close() })
			return w
		}, false},
		{"a pseudo-terminal", open("/dev/ptmx", os.O_RDWR), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := isTerminal(tt.file(t)); got != tt.want {
				t.Errorf("isTerminal = %v, want %v", got, tt.want)
			}
		})
	}
}
