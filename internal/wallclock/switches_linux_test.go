package wallclock

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/perflab/perflab/internal/timingtest"
	"github.com/perflab/perflab/profiles"
	xtrace "golang.org/x/exp/trace"
	"golang.org/x/sys/unix"
)

// threadSchedWait is the calling thread's run-queue wait so far, from the
// kernel's own accounting (ReadSchedStats). It runs on the workers'
// goroutines, where a test may fail but not skip.
func threadSchedWait(t *testing.T) time.Duration {
	st, ok := ReadSchedStats()[int64(unix.Gettid())]
	if !ok {
		t.Error("no schedstat for this thread")
	}
	return st.Wait
}

// monoNow is CLOCK_MONOTONIC, the clock of the kernel's switch records.
func monoNow() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// hogs starts n processes that spin until the test ends: another program
// on the cores, which the kernel preempts the test's threads for.
func hogs(t *testing.T, n int) {
	for i := 0; i < n; i++ {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			t.Skip("cannot start a CPU hog:", err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}
}

// TestPreemptionsExact holds the OS wait from the kernel's context-switch
// records against a second kernel figure: two goroutines, each locked to
// its thread, hash (one) and read 256 KiB from /dev/zero (the other, whose
// time is mostly in the system call) while three other processes spin on
// two cores. Each thread's schedstat run-queue wait over its region, read
// by the thread itself, is the truth: the threads never sleep, so all of
// their wait was preemption. The reader's OS wait must come out of its
// system-call time into sched.
func TestPreemptionsExact(t *testing.T) {
	timingtest.Require(t)
	if testing.Short() {
		t.Skip("spins for a second")
	}
	if ReadSchedStats() == nil {
		t.Skip("no schedstat here: nothing to hold the records against")
	}
	hogs(t, 3)
	rec, err := StartSwitches()
	if err != nil {
		t.Skip("no context-switch records here:", err)
	}
	const d = 400 * time.Millisecond
	var tb, cb bytes.Buffer
	if err := pprof.StartCPUProfile(&cb); err != nil {
		t.Fatal(err)
	}
	if err := trace.Start(&tb); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var truth [2]time.Duration
	var tids [2]int64
	var span [2][2]int64     // each region's start and end, CLOCK_MONOTONIC
	var inCall time.Duration // the reader's wall time inside read(2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			buf := make([]byte, 256<<10)
			var f *os.File
			if i == 1 {
				var err error
				if f, err = os.Open("/dev/zero"); err != nil {
					t.Error(err)
					return
				}
				defer f.Close()
			}
			tids[i] = int64(unix.Gettid())
			w0 := threadSchedWait(t)
			span[i][0] = monoNow()
			r := trace.StartRegion(context.Background(), region)
			for end := time.Now().Add(d); time.Now().Before(end); {
				if f == nil {
					spin(time.Millisecond)
					continue
				}
				t0 := time.Now()
				// The raw call: unix.Read under -race also has the
				// detector mark all of buf written, which took 93%
				// of the reader's time in a CI run.
				if _, _, errno := unix.Syscall(unix.SYS_READ, f.Fd(), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))); errno != 0 {
					t.Error(errno)
					break
				}
				inCall += time.Since(t0)
			}
			r.End()
			span[i][1] = monoNow()
			truth[i] = threadSchedWait(t) - w0
		}()
	}
	wg.Wait()
	trace.Stop()
	pprof.StopCPUProfile()
	pre, err := rec.Stop()
	if err != nil {
		t.Fatal(err)
	}
	res, err := FromTrace(&tb, Options{Region: region, Sched: &SchedStats{Preempted: pre}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OSWaitExact {
		t.Fatalf("the OS wait was estimated: no clock snapshot in the trace?")
	}
	want := truth[0] + truth[1]
	var perThread [2]time.Duration
	for _, p := range pre {
		for i, tid := range tids {
			if from, to := max(p.From, span[i][0]), min(p.To, span[i][1]); p.TID == tid && to > from {
				perThread[i] += time.Duration(to - from)
			}
		}
	}
	t.Logf("preempted by thread: hasher %v, reader %v", perThread[0], perThread[1])
	t.Logf("%d preemptions; OS wait %v, the threads' schedstat %v (hasher %v, reader %v); reader in read(2) %v, syscall state %v",
		len(pre), res.OSWait, want, truth[0], truth[1], inCall, res.Time[Syscall])
	if want < 50*time.Millisecond {
		t.Skipf("the threads waited only %v for a CPU: the machine was not loaded enough to tell", want)
	}
	// The recorder against the kernel's own total over each region: a
	// thread's run-queue wait is its preemptions and the latency of its
	// wake-ups. A locked thread does sleep now and then: when Go preempts
	// its goroutine (sysmon, after 10 ms) or takes its P in a call, the
	// goroutine waits, runnable to Go, for the thread to be handed the P
	// back and woken. Here that was up to 17% of the hasher's wait.
	for i, name := range []string{"hasher", "reader"} {
		if perThread[i] > truth[i]+time.Millisecond || perThread[i] < truth[i]*3/4 {
			t.Errorf("the %s's thread was preempted %v in its region, its schedstat run-queue wait %v: want 75–100%%", name, perThread[i], truth[i])
		}
	}
	// The hasher's preemptions are all charged (it only ran); the reader's
	// are, but for those while Go had it runnable, waiting for a P after a
	// call, which the trace already counts as sched.
	if all, got := perThread[0]+perThread[1], res.OSWait+res.OSWake; got < perThread[0]*95/100 || got > all {
		t.Errorf("OS wait %v + %v: want the hasher's %v at least, the threads' %v at most", res.OSWait, res.OSWake, perThread[0], all)
	}
	by, _ := profiles.Breakdown(res.Profile, 0, profiles.DefaultRules())
	var sysSched, sysSelf int64
	for _, s := range res.Profile.Sample {
		switch leaf := s.Location[0].Line[0].Function.Name; {
		case strings.Contains(leaf, osSyscallState):
			sysSched += s.Value[0]
		case strings.Contains(leaf, osSelfSyscallState):
			// A thread of the process, just woken, took the CPU as
			// the call began: the call's time (see wakeWindow).
			sysSelf += s.Value[0]
		}
	}
	// Reading /dev/zero is kernel CPU: the reader's thread is preempted
	// inside the call about as often as the call's share of its time (most
	// of it, but under -race the detector's work on the buffer is most),
	// and that wait is sched, not the call's.
	inSyscall := float64(res.Time[Syscall]+time.Duration(sysSched)) / float64(d)
	if want := float64(perThread[1]) * inSyscall / 2; float64(sysSched) < want {
		t.Errorf("sched inside read(2) %v of the reader's %v preempted, %.0f%% of its time in the call", time.Duration(sysSched), perThread[1], 100*inSyscall)
	}
	if got := res.Time[Syscall] + time.Duration(sysSched+sysSelf); got > inCall+inCall/10 {
		t.Errorf("syscall %v + its sched %v exceed the %v the reader timed inside read(2)", res.Time[Syscall], time.Duration(sysSched), inCall)
	}
	if by[profiles.Sched] < int64(res.OSWait) || sysSelf != int64(res.OSWake) {
		t.Errorf("sched %v, below the OS wait %v; or the call's own wake-ups %v in the profile, %v in the result", time.Duration(by[profiles.Sched]), res.OSWait, time.Duration(sysSelf), res.OSWake)
	}
}

// TestSyscallWakePreemption: a preemption inside a system call is a wait
// for a CPU (sched), unless it began as the call started and the CPU went
// to a thread of the process just woken — the call's own wake-up of it (a
// pipe's write waking the network poller) — which stays the call's time.
// The kernel's records are laid by hand at known offsets from the trace's
// own system calls, 1 ms sleeps in nanosleep(2).
func TestSyscallWakePreemption(t *testing.T) {
	data := traced(t, func() {
		for range 50 {
			unix.Nanosleep(&unix.Timespec{Nsec: int64(time.Millisecond)}, nil)
		}
	})
	type call struct{ at, tid int64 }
	var calls []call
	in := map[xtrace.GoID]call{} // calls begun, by goroutine
	lead := readGoTransitions(t, data, func(ev *xtrace.Event, st xtrace.StateTransition, from, to xtrace.GoState) {
		id := st.Resource.Goroutine()
		switch {
		case from == xtrace.GoRunning && to == xtrace.GoSyscall && hasFrame(st.Stack, "golang.org/x/sys/unix.Nanosleep"):
			in[id] = call{int64(ev.Time()), int64(ev.Thread())}
		case from == xtrace.GoSyscall && to != xtrace.GoSyscall:
			// Only calls that slept: the CPU profiler's signal cuts
			// a nanosleep short (EINTR), seen once in a CI run.
			if c, ok := in[id]; ok && int64(ev.Time())-c.at >= int64(500*time.Microsecond) {
				calls = append(calls, c)
			}
			delete(in, id)
		}
	})
	if len(calls) < 30 {
		t.Fatalf("only %d whole nanosleep calls in the trace, of 50", len(calls))
	}
	const took = 20 * time.Microsecond
	for _, tc := range []struct {
		name  string
		after time.Duration
		self  bool
		call  bool // stays the call's time
		own   bool // else sched, that another thread of the process had the CPU
	}{
		{"as the call starts, by a thread of the process", 3 * time.Microsecond, true, true, false},
		{"as the call starts, by another program", 3 * time.Microsecond, false, false, false},
		{"later in the call, by a thread of the process", 3 * wakeWindow, true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pre []Preemption
			for _, c := range calls {
				from := c.at + lead + int64(tc.after)
				var by time.Duration
				if tc.self {
					by = took
				}
				pre = append(pre, Preemption{TID: c.tid, From: from, To: from + int64(took), ByWoken: by, ByOwn: by})
			}
			res, err := FromTrace(bytes.NewReader(data), Options{Region: region, Sched: &SchedStats{Preempted: pre}})
			if err != nil {
				t.Fatal(err)
			}
			if want := took * time.Duration(len(calls)); res.OSWait+res.OSWake != want {
				t.Fatalf("OS wait %v + %v, want %v (%d preemptions of %v)", res.OSWait, res.OSWake, want, len(calls), took)
			}
			var inCall, sched time.Duration
			for _, s := range res.Profile.Sample {
				leaf := s.Location[0].Line[0].Function.Name
				switch {
				case strings.HasSuffix(leaf, "] "+osSelfSyscallState):
					inCall += time.Duration(s.Value[0])
					if !strings.HasPrefix(leaf, "[wait]") {
						t.Errorf("%q: a sleep's own time is wait", leaf)
					}
				case leaf == profiles.StateFrame(profiles.Sched, osSyscallState):
					sched += time.Duration(s.Value[0])
				}
			}
			all := res.OSWait + res.OSWake
			want := [2]time.Duration{0, all}
			if tc.call {
				want = [2]time.Duration{all, 0}
			}
			if got := [2]time.Duration{inCall, sched}; got != want || inCall != res.OSWake {
				t.Errorf("charged to the call %v, to sched %v; want %v, %v (the result's OS wake %v)", inCall, sched, want[0], want[1], res.OSWake)
			}
			if wantOwn := map[bool]time.Duration{true: all}[tc.own]; res.OSOwn != wantOwn {
				t.Errorf("OS wait while another thread of the process had the CPU %v, want %v", res.OSOwn, wantOwn)
			}
		})
	}
}
