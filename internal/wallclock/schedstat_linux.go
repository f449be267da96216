package wallclock

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// ReadSchedStats returns every thread of this process's kernel scheduling
// figures from /proc/self/task/TID/schedstat (time on a CPU and time
// waiting in the run queue, in nanoseconds), or nil where the kernel does
// not keep them.
func ReadSchedStats() map[int64]SchedStat {
	dir, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil
	}
	out := make(map[int64]SchedStat, len(dir))
	for _, e := range dir {
		tid, err := strconv.ParseInt(e.Name(), 10, 64)
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
		run, err1 := strconv.ParseInt(string(f[0]), 10, 64)
		wait, err2 := strconv.ParseInt(string(f[1]), 10, 64)
		if err1 == nil && err2 == nil {
			out[tid] = SchedStat{Run: time.Duration(run), Wait: time.Duration(wait)}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
