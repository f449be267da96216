package ctxswitch

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
		if st, ok := readSchedStat(e.Name()); ok {
			out[tid] = st
		} // else the thread exited
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// readSchedStat reads one thread's figures, by its id as /proc names it.
func readSchedStat(tid string) (SchedStat, bool) { return readSchedStatIn("/proc/self/task", tid) }

// readSchedStatIn reads one thread's figures in a process's thread
// directory tasks.
func readSchedStatIn(tasks, tid string) (SchedStat, bool) {
	b, err := os.ReadFile(tasks + "/" + tid + "/schedstat")
	if err != nil {
		return SchedStat{}, false
	}
	return parseSchedStat(b)
}

// parseSchedStat reads a schedstat file: run and wait nanoseconds, then the
// timeslice count. The kernel prints them unsigned; anything else (a
// negative figure, one past 2^63 ns, garbage) is not a reading.
func parseSchedStat(b []byte) (SchedStat, bool) {
	f := bytes.Fields(b)
	if len(f) < 2 {
		return SchedStat{}, false
	}
	run, err1 := strconv.ParseUint(string(f[0]), 10, 63)
	wait, err2 := strconv.ParseUint(string(f[1]), 10, 63)
	if err1 != nil || err2 != nil {
		return SchedStat{}, false
	}
	return SchedStat{Run: time.Duration(run), Wait: time.Duration(wait)}, true
}
