package wallclock

import (
	"runtime"
	"time"
)

// spinCPU hashes until its thread has had d of CPU (threadCPU), or
// for d of wall time where the kernel does not say: the CPU samples a
// test holds the loop to are its CPU time's, which beside other load is
// a fraction of the wall time (TestStates read 4 samples in 180 ms of
// wall-clock hashing under -race beside a spinning process, 3 runs in 10,
// and needs 5).
func spinCPU(d time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start, ok := threadCPU()
	if !ok {
		spin(d)
		return
	}
	for {
		spin(time.Millisecond)
		if now, _ := threadCPU(); now-start >= d {
			return
		}
	}
}

// runQueueWait is the time every thread of the process has waited in the
// kernel's run queue so far (0 where the kernel does not say): what other
// programs took from it.
func runQueueWait() time.Duration {
	var w time.Duration
	for _, st := range ReadSchedStats() {
		w += st.Wait
	}
	return w
}
