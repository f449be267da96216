package truth

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"
)

// spinFlag runs the suite beside that many processes spinning on a CPU each:
// issue 22 asks the budget to hold quiet and beside one spinning process,
// both in CI (make truth and make truth-loaded).
var spinFlag = flag.Int("truth.spin", 0, "run beside this many processes, each spinning on one CPU")

// spinEnv makes the test binary a spinner (TestMain): it spins on one CPU
// until its standard input closes.
const spinEnv = "PERFLAB_TRUTH_SPINNER"

func TestMain(m *testing.M) {
	if os.Getenv(spinEnv) == "1" {
		spinUntilEOF(os.Stdin)
		return
	}
	os.Exit(m.Run())
}

// spinUntilEOF spins one goroutine, on one P, until r reaches its end: the
// spinner's standard input is a pipe from the suite, whose end closes
// however the suite's process ends — a failure, a panic, a kill — so no
// spinner outlives it, which a shell's `while :; do :; done` left in the
// background would, on any exit the Makefile's trap does not see.
func spinUntilEOF(r io.Reader) {
	runtime.GOMAXPROCS(1)
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, r)
		close(done)
	}()
	var x uint64
	for i := uint64(0); ; i++ {
		x = x*6364136223846793005 + i
		// A receive every 1<<16 iterations, about 50 µs: the reader,
		// blocked in read(2) without a P, needs the P back only at EOF.
		if i&(1<<16-1) == 0 {
			select {
			case <-done:
				if x == 42 {
					fmt.Print("") // keep x live
				}
				return
			default:
			}
		}
	}
}

// startSpinners starts n spinning processes and returns the function that
// stops them, waits for them to exit and returns the CPU time they took.
func startSpinners(n int) (stop func() (time.Duration, error), err error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var cmds []*exec.Cmd
	var pipes []io.WriteCloser
	stop = func() (time.Duration, error) {
		var errs []error
		var cpu time.Duration
		for _, p := range pipes {
			p.Close()
		}
		for _, c := range cmds {
			exited := make(chan error, 1)
			go func() { exited <- c.Wait() }()
			select {
			case err := <-exited:
				if err != nil {
					errs = append(errs, fmt.Errorf("spinner %d: %w", c.Process.Pid, err))
				} else {
					cpu += c.ProcessState.UserTime() + c.ProcessState.SystemTime()
				}
			case <-time.After(5 * time.Second):
				c.Process.Kill() // our own child, by its pid
				errs = append(errs, fmt.Errorf("spinner %d did not stop at EOF: killed", c.Process.Pid))
			}
		}
		return cpu, errors.Join(errs...)
	}
	for range n {
		c := exec.Command(exe, "-test.run=^$")
		c.Env = append(os.Environ(), spinEnv+"=1")
		in, err := c.StdinPipe()
		if err != nil {
			stop()
			return nil, err
		}
		if err := c.Start(); err != nil {
			stop()
			return nil, err
		}
		cmds, pipes = append(cmds, c), append(pipes, in)
	}
	return stop, nil
}

// TestSpinnerStops: a spinner spins (takes CPU) and exits when its input
// closes.
func TestSpinnerStops(t *testing.T) {
	if testing.Short() {
		t.Skip("spins a CPU for half a second")
	}
	stop, err := startSpinners(1)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	cpu, err := stop()
	if err != nil {
		t.Fatal(err)
	}
	// On a loaded 2-core machine it gets less than the half second; a
	// spinner that does not spin gets nothing.
	if cpu < 100*time.Millisecond {
		t.Errorf("the spinner took %v of CPU in half a second", cpu)
	}
}
