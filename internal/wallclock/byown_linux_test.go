package wallclock

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// machineBusy reads the busy and all ticks of /proc/stat's aggregate line.
func machineBusy(t *testing.T) (busy, all uint64) {
	t.Helper()
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Skip("no /proc/stat:", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	for i, s := range f[1:min(len(f), 9)] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		all += v
		if i != 3 && i != 4 && i != 7 { // idle, iowait, steal
			busy += v
		}
	}
	return busy, all
}

// TestPreemptionsByOwn holds each preemption's ByOwn — how much of it the
// process's other threads had the CPU — against who was there to have it.
// One spinning thread among three spinning processes: nobody of the
// process but the runtime's own odd jobs can take its CPU, so ByOwn is
// near none of the wait. Spinning threads of the process, twice as many as
// the CPUs, and no other program: each waits for the others, so ByOwn is
// most of the wait: about the share of the machine's busy time that was
// the process's, as other test binaries may run beside this one (99% of
// the wait against 100% idle; 73–76% against 76–80% beside a spinning
// shell, three runs), so at least that less 20 points.
func TestPreemptionsByOwn(t *testing.T) {
	if testing.Short() {
		t.Skip("spins for a second")
	}
	window := func(threads int) (own, all time.Duration, share float64) {
		t.Helper()
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads + 1))
		rec, err := StartSwitches()
		if err != nil {
			t.Skip("no context-switch records here:", err)
		}
		var ru0, ru1 unix.Rusage
		unix.Getrusage(unix.RUSAGE_SELF, &ru0)
		b0, a0 := machineBusy(t)
		start := time.Now()
		var wg sync.WaitGroup
		tids := make([]int64, threads)
		for i := range threads {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				tids[i] = int64(unix.Gettid())
				spin(300 * time.Millisecond)
			}()
		}
		wg.Wait()
		b1, a1 := machineBusy(t)
		unix.Getrusage(unix.RUSAGE_SELF, &ru1)
		pre, err := rec.Stop()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pre {
			for _, tid := range tids {
				if p.TID == tid {
					all += time.Duration(p.To - p.From)
					own += p.ByOwn
					if p.ByOwn < 0 || p.ByOwn > time.Duration(p.To-p.From) {
						t.Errorf("ByOwn %v of a %v preemption", p.ByOwn, time.Duration(p.To-p.From))
					}
				}
			}
		}
		ours := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
		// The busy share of all the CPUs' ticks, in CPU time.
		if a1 > a0 {
			busy := float64(b1-b0) / float64(a1-a0) * float64(runtime.NumCPU()) * time.Since(start).Seconds()
			share = min(1, ours.Seconds()/busy)
		}
		return own, all, share
	}
	cpus := runtime.NumCPU()
	own, all, share := window(2 * cpus)
	t.Logf("%d own spinners: preempted %v, by own threads %v (%.0f%%); the process had %.0f%% of the machine's busy time", 2*cpus, all, own, 100*float64(own)/float64(all), 100*share)
	if all == 0 {
		t.Fatal("no preemptions of twice as many spinning threads as CPUs")
	}
	if got := float64(own) / float64(all); got < share-0.2 {
		t.Errorf("own threads had the CPU for %.0f%% of the wait, want at least %.0f%% (the process's share of busy time, less 20 points)", 100*got, 100*share-20)
	}
	hogs(t, 3)
	own, all, _ = window(1)
	t.Logf("1 own spinner, 3 hogs: preempted %v, by own threads %v (%.0f%%)", all, own, 100*float64(own)/float64(all))
	if all == 0 {
		t.Fatal("no preemptions of a spinning thread among three spinning processes")
	}
	if got := float64(own) / float64(all); got > 0.15 {
		t.Errorf("own threads had the CPU for %.0f%% of the wait, with no other thread of the process spinning", 100*got)
	}
}
