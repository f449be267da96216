package truth

import (
	"bytes"
	"os"
	"strconv"
)

// runDelays returns, for every thread of the process, the nanoseconds it
// has waited in the kernel's run queue (the second field of
// /proc/self/task/TID/schedstat): time a thread was ready to run and
// another process, or another thread, had the CPU. It returns nil where
// the kernel does not keep the figure.
func runDelays() map[int]int64 {
	dir, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil
	}
	out := make(map[int]int64, len(dir))
	for _, e := range dir {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/self/task/" + e.Name() + "/schedstat")
		if err != nil {
			continue // the thread exited
		}
		f := bytes.Fields(b)
		if len(f) < 2 {
			continue
		}
		if d, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil {
			out[tid] = d
		}
	}
	return out
}
