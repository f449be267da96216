package runner

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/model"
)

// noise samples what the machine is doing beyond this process, once a
// round: the load average, the CPU time stolen by the hypervisor, and the
// CPUs other programs used. On a shared machine they explain a noisy run
// (a case at four goroutines got 0.99 CPUs of 2 in issue 10's example,
// with nothing said).
type noise struct {
	// The span steal and the other programs' CPUs are taken over: from
	// the start of its first round, at least othersSpan long.
	span     cpuTimes
	spanOK   bool
	spanCPU  time.Duration
	spanFrom time.Time
}

// othersSpan is the shortest span Round.Others is taken over: 100 ticks
// on two CPUs, good to a few hundredths of a CPU.
const othersSpan = 500 * time.Millisecond

// start begins a span at the start of a round, when none is open: it
// reads the CPU counters there.
func (n *noise) start() {
	if n.spanFrom.IsZero() {
		n.span, n.spanOK = readCPUTimes()
		n.spanCPU, n.spanFrom = processCPU(), time.Now()
	}
}

// end returns the round's figures, and whether the system gave any.
func (n *noise) end() (model.Round, bool) {
	var r model.Round
	load, okLoad := readLoad()
	t, okStat := readCPUTimes()
	r.Load1 = load
	if wall := time.Since(n.spanFrom); okStat && n.spanOK && wall >= othersSpan {
		// 0 when a counter went backwards, as some hypervisors'
		// steal does: never a wrapped uint64 over the total.
		r.Steal, _ = stealShare(n.span, t)
		if o, ok := otherCPUs(n.span, t, processCPU()-n.spanCPU, wall); ok {
			r.Others = &o
		}
		n.spanFrom = time.Time{}
	}
	return r, okLoad || (okStat && n.spanOK)
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

// cpuTimes is the machine's CPU time so far, from /proc/stat's aggregate
// line, in clock ticks: all of it (guest time is already in user), the
// part no task ran (idle, iowait), the part the hypervisor gave to other
// guests; and the number of CPUs it sums over (0 when /proc/stat lists
// none, which only otherCPUs needs).
type cpuTimes struct {
	total, idle, steal uint64
	cpus               int
}

func readCPUTimes() (cpuTimes, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}, false
	}
	return parseCPUTimes(b)
}

func parseCPUTimes(b []byte) (t cpuTimes, ok bool) {
	line, rest, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return t, false
	}
	for i, s := range f[1:] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return cpuTimes{}, false
		}
		// user nice system idle iowait irq softirq steal guest guest_nice
		if i < 8 {
			t.total += v
		}
		switch i {
		case 3, 4:
			t.idle += v
		case 7:
			t.steal = v
		}
	}
	for len(rest) > 0 {
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		if len(line) > 3 && bytes.HasPrefix(line, []byte("cpu")) && line[3] >= '0' && line[3] <= '9' {
			t.cpus++
		}
	}
	return t, true
}

// otherCPUs is how many CPUs, on average between a and b, the machine
// spent on anything but this process (other programs, the kernel's own
// threads), given this process's CPU time over that span and its wall
// time: the busy share of the machine's ticks times its CPUs, less the
// process's CPUs. /proc/stat counts in hundredths of a second, so over a
// one-second window the figure is good to about ±0.05 CPUs.
func otherCPUs(a, b cpuTimes, procCPU, wall time.Duration) (float64, bool) {
	if wall <= 0 || b.total <= a.total || b.idle < a.idle || b.steal < a.steal || b.cpus != a.cpus || b.cpus == 0 {
		return 0, false
	}
	total := float64(b.total - a.total)
	busy := total - float64(b.idle-a.idle) - float64(b.steal-a.steal)
	machine := busy / total * float64(b.cpus)
	return max(0, machine-procCPU.Seconds()/wall.Seconds()), true
}

// stealShare is the share of the machine's CPU time between a and b that
// the hypervisor gave to other guests.
func stealShare(a, b cpuTimes) (float64, bool) {
	if b.total <= a.total || b.steal < a.steal {
		return 0, false
	}
	return float64(b.steal-a.steal) / float64(b.total-a.total), true
}
