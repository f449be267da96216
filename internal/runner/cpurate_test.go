//go:build linux

package runner

import (
	"bytes"
	"io"
	"os"
	"runtime/pprof"
	"testing"

	"github.com/google/pprof/profile"
	"golang.org/x/sys/unix"
)

// TestStartCPUProfileRate: the CPU profile runs at CPUProfileHz, as its
// header (the period) says, and the runtime's complaint about setting
// the rate twice does not reach standard error.
func TestStartCPUProfileRate(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved, err := unix.Dup(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Dup2(int(w.Fd()), 2); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	err = startCPUProfile(&buf, CPUProfileHz)
	if err == nil {
		pprof.StopCPUProfile()
	}
	unix.Dup2(saved, 2)
	unix.Close(saved)
	w.Close()
	said, _ := io.ReadAll(r)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(said) > 0 {
		t.Errorf("standard error got %q", said)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(1e9 / CPUProfileHz); p.Period != want {
		t.Errorf("period %d ns, want %d (%d Hz)", p.Period, want, CPUProfileHz)
	}

	// Twice in a row: each profile stops and the next sets its rate.
	buf.Reset()
	if err := startCPUProfile(&buf, CPUProfileHz); err != nil {
		t.Fatal(err)
	}
	pprof.StopCPUProfile()
	if p, err = profile.Parse(&buf); err != nil || p.Period != int64(1e9/CPUProfileHz) {
		t.Errorf("second profile: period %v, err %v", p.Period, err)
	}
}
