package continuous_test

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"runtime/trace"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/continuous"
)

// threadWait is the calling thread's run-queue wait so far, from the
// kernel; false where it does not say.
func threadWait() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/thread-self/schedstat")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, false
	}
	ns, err := strconv.ParseInt(f[1], 10, 64)
	return time.Duration(ns), err == nil
}

// TestWallSeesOSWait: a goroutine that spins among three spinning
// processes on the machine's cores is running to Go all the while, yet its
// thread waits in the kernel's run queue much of it. The wall-clock
// profile puts that wait in sched, not in its running time: about what the
// kernel says the thread waited (its own schedstat, read by the thread).
func TestWallSeesOSWait(t *testing.T) {
	if testing.Short() {
		t.Skip("spins for a second")
	}
	for range 3 {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			t.Skip("cannot start a CPU hog:", err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}
	if _, ok := threadWait(); !ok {
		t.Skip("no schedstat here")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var truth time.Duration
	spun := make(chan struct{})
	go func() {
		defer close(spun)
		defer cancel() // ends the window, whatever happens here
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		// The truth is taken inside the traced window: trace.Start
		// takes tens of milliseconds on a loaded machine under -race
		// (170 ms seen), and the thread's wait before it is in no
		// profile. Taken from the spin's start, it read the profile at
		// 0.46-0.90 of it (2 runs in 14 under half at a load of 9).
		for limit := time.Now().Add(10 * time.Second); !trace.IsEnabled() && time.Now().Before(limit); {
			time.Sleep(time.Millisecond)
		}
		w0, _ := threadWait()
		for end := time.Now().Add(700 * time.Millisecond); time.Now().Before(end); {
		}
		w1, _ := threadWait()
		truth = w1 - w0
	}()
	var got *profile.Profile
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		got, err = continuous.WallProfile(ctx, nil)
	}()
	<-spun
	<-done
	if err != nil {
		t.Fatal(err)
	}
	var sched time.Duration
	for _, s := range got.Sample {
		if strings.HasPrefix(s.Location[0].Line[0].Function.Name, "[sched] runnable (its thread waited for a CPU") && strings.Contains(stackOf(s), "TestWallSeesOSWait") {
			sched += time.Duration(s.Value[0])
		}
	}
	t.Logf("the spinner's thread waited %v (its schedstat); the profile's sched for it %v", truth, sched)
	if truth < 50*time.Millisecond {
		t.Skipf("the spinner waited only %v for a CPU: nothing to hold the profile against", truth)
	}
	if sched < truth/2 || sched > truth*11/10 {
		t.Errorf("sched %v for the spinner, want about its thread's %v of run-queue wait (half to 110%%)", sched, truth)
	}
}

func stackOf(s *profile.Sample) string {
	var b strings.Builder
	for _, l := range s.Location {
		b.WriteString(l.Line[0].Function.Name)
		b.WriteByte(' ')
	}
	return b.String()
}
