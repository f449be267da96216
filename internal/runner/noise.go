package runner

import (
	"bytes"
	"os"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/store"
)

// noise samples what the machine is doing beyond this process, once a
// round: the load average and the CPU time stolen by the hypervisor. On a
// shared machine they explain a noisy run (a case at four goroutines got
// 0.99 CPUs of 2 in issue 10's example, with nothing said).
type noise struct {
	steal, total uint64
	ok           bool
}

// start reads the CPU counters at the start of a round.
func (n *noise) start() { n.steal, n.total, n.ok = readStat() }

// end returns the round's figures, and whether the system gave any.
func (n *noise) end() (store.Round, bool) {
	var r store.Round
	load, okLoad := readLoad()
	steal, total, okStat := readStat()
	r.Load1 = load
	if okStat && n.ok && total > n.total {
		r.Steal = float64(steal-n.steal) / float64(total-n.total)
	}
	return r, okLoad || (okStat && n.ok)
}

// readLoad reads the one-minute load average from /proc/loadavg (Linux).
func readLoad() (float64, bool) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return v, err == nil
}

// readStat reads the aggregate CPU line of /proc/stat (Linux): the steal
// column and the sum of all columns, in clock ticks.
func readStat() (steal, total uint64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, false
	}
	for i, s := range f[1:] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		// user nice system idle iowait irq softirq steal guest guest_nice:
		// guest time is already counted in user.
		if i < 8 {
			total += v
		}
		if i == 7 {
			steal = v
		}
	}
	return steal, total, true
}
