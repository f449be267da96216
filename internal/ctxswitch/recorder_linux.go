package ctxswitch

import (
	"cmp"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel's context-switch records (perf_event_open with
// attr.context_switch; PERF_RECORD_SWITCH, Linux 4.3, with the preemption
// flag since 4.17) say, for each thread of this process, when it left its
// CPU, whether it was preempted (still runnable) or went to sleep, and when
// it came back. A preempted interval is exactly the time the thread waited
// for a CPU, at a known moment: wallclock.FromTrace charges it to the goroutine Go had
// on the thread then, in the state it was in. Each record also gives the
// CPU, so the records of all the threads tell how long a preempted one's
// CPU went to another of the process's threads, and whether that one had
// just been woken. /proc's per-thread schedstat only gives a total over the
// window, which had to be split by estimate.
//
// Unprivileged use needs perf_event_paranoid ≤ 2 (the kernel's default; some
// distributions raise it) and no seccomp filter against perf_event_open
// (Docker's default profile has one): where it fails, Start says
// why and the caller keeps to schedstat.
//
// golang.org/x/sys/unix gives the system call, the attribute struct and the
// ring's header page; the records are read here because no Go library reads
// a perf ring without also wanting BPF (cilium/ebpf's perf reader is for
// BPF_MAP_TYPE_PERF_EVENT_ARRAY maps).

const (
	perfRecordLost   = 2
	perfRecordExit   = 4
	perfRecordSwitch = 14
	miscSwitchOut    = 0x2000
	miscOutPreempt   = 0x4000
	// minDrain and maxDrain bound how often the rings are drained (loop,
	// nextDrain); /proc/self/task is read for new threads at most every
	// scanEvery, at the drain after it has passed.
	minDrain  = time.Millisecond
	maxDrain  = 20 * time.Millisecond
	scanEvery = 20 * time.Millisecond
	// ringSlack is the free space under which a ring is taken to have
	// filled up (maybeLost), on kernels that cannot count what they drop:
	// more than its largest record, PERF_RECORD_EXIT or _FORK with
	// sample_id_all (56 bytes on Linux 6.18). The kernel refuses a record
	// of s bytes when fewer than s+1 are free, so a drop leaves the ring
	// fuller than that until the next drain.
	ringSlack = 64
	// maxPreemptions bounds what one window keeps (a hostile or pathological
	// workload must not grow memory without limit): 48 bytes each, with
	// the CPU.
	maxPreemptions = 1 << 20
	// selfGap is how soon after a thread's preempted switch-out a switch-in
	// of another of the process's threads on the same CPU means that thread
	// took the CPU. The one context switch writes both records, within
	// 2 µs here; the slack is for a slow or virtualised kernel, and short
	// against the 100 µs and more before another program's task yields.
	selfGap = 20 * time.Microsecond
)

// ringPages is each thread's ring, a power of two pages: 128 KiB holds
// 4,096 records (32 bytes each, two per switch: out and in), 20 ms of a
// thread switching 100,000 times a second: the longest wait, maxDrain. A
// thread that jumps from quiet to more than that loses records before the
// first drain can shorten the wait, and Stop says so (the runner then takes
// the per-thread estimate for the window). A variable for its test.
var ringPages = 32

// fixedDrain, when set, replaces nextDrain's wait: for the benchmark that
// measures what the adaptive one saves.
var fixedDrain time.Duration

// maxStays bounds the stays on a CPU kept to tell who took a preempted
// thread's CPU, 24 bytes each (24 MiB at most; a whole make run of
// cipher-cache's mutex at 128 keys and four goroutines switched 4,386 times,
// a channel hand-off 100,000 times a second). A variable for its test.
var maxStays = 1 << 20

// stay is a thread of the process on a CPU: from its switch-in until its
// switch-out; woke says it came on from a sleep, not back from a
// preemption.
type stay struct {
	at, until int64 // until is math.MaxInt64 while it has not left
	cpu       uint16
	woke      bool
	tid       int32
}

type switchRing struct {
	tid  int
	fd   int
	mem  []byte
	page *unix.PerfEventMmapPage
	data []byte
	out  int64 // when the thread was preempted, -1 when it is not
	cpu  uint32
	// slept says the thread's last record was a switch-out to sleep;
	// lastIn is 1 + the index of its stay while on a CPU, else 0.
	slept  bool
	lastIn int
	// exited says the ring held its thread's exit record: nothing more
	// will come, and drainAll closes it.
	exited bool
}

// Recorder records the preempted intervals of a process's threads
// from Start (this process) or StartProcess until Stop.
type Recorder struct {
	mu sync.Mutex
	// tasks is the process's thread directory: /proc/self/task, or
	// another process's.
	tasks string
	rings map[int]*switchRing
	// What the window records is kept off the Go heap (offHeap) until
	// self, which gathers it into got, cpus and stays.
	gotOff   offHeap[preempted]
	staysOff offHeap[stay]
	got      []Preemption
	cpus     []uint32 // got's CPUs
	stays    []stay
	// staysOver is set when stays were dropped (maxStays, or no memory).
	staysOver bool
	lost      uint64
	// countLost says the rings were opened with PERF_FORMAT_LOST (Linux
	// 6.0), so that reading a ring's fd gives the exact count of records
	// the kernel dropped from it; lostRead is the sum, read as each ring
	// closes. Without it, maybeLost is set when a drain found a ring full,
	// or nearly: the kernel writes PERF_RECORD_LOST, which lost counts,
	// only once it has room again, which after the last drain it may
	// never have.
	countLost bool
	lostRead  uint64
	maybeLost bool
	over      bool
	// noMem is set when memory for the records could not be mapped.
	noMem bool
	// corrupt is set when a ring held a record no kernel writes.
	corrupt bool
	stop    chan struct{}
	done    chan struct{}
	// shortest is the shortest wait loop used, and behind the most a
	// drain came after the one before it beyond the wait between them
	// (the timer's lateness and the drain's own time: on a loaded machine,
	// the time its thread was kept off a CPU), for its test.
	shortest, behind time.Duration
	// failed holds the threads whose ring would not open; unseen is the
	// CPU time of threads that ran without one (Unseen).
	failed map[int]bool
	unseen time.Duration
}

// Start starts recording every thread's preemptions, threads
// started later included (they are found within scanEvery and a drain).
func Start() (*Recorder, error) { return start("/proc/self/task") }

// StartProcess records the preemptions of process pid's threads, as Start
// does this process's: a child perflab started (perflab bench's traced
// run of a test binary). The kernel allows it for a process the caller
// may trace, its own children included. Threads the child started before
// the first scan are found then; what they were preempted for before it
// is not recorded.
func StartProcess(pid int) (*Recorder, error) {
	if pid <= 0 {
		return nil, errors.New("no process " + strconv.Itoa(pid))
	}
	return start("/proc/" + strconv.Itoa(pid) + "/task")
}

func start(tasks string) (*Recorder, error) {
	r := &Recorder{tasks: tasks, rings: map[int]*switchRing{}, failed: map[int]bool{}, stop: make(chan struct{}), done: make(chan struct{}), countLost: true}
	if err := r.scan(); err != nil {
		r.close()
		return nil, err
	}
	if len(r.rings) == 0 {
		return nil, errors.New("no threads found in " + tasks)
	}
	go r.loop()
	return r, nil
}

func openSwitches(tid int, countLost bool) (*switchRing, error) {
	attr := unix.PerfEventAttr{
		Type:        unix.PERF_TYPE_SOFTWARE,
		Config:      unix.PERF_COUNT_SW_DUMMY,
		Sample_type: unix.PERF_SAMPLE_TID | unix.PERF_SAMPLE_TIME | unix.PERF_SAMPLE_CPU,
		Bits: unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv | unix.PerfBitSampleIDAll |
			unix.PerfBitUseClockID | unix.PerfBitContextSwitch | unix.PerfBitTask,
		Clockid: unix.CLOCK_MONOTONIC, // Go's nanotime, the trace's ClockSnapshot.Mono
	}
	attr.Size = uint32(unsafe.Sizeof(attr))
	if countLost {
		attr.Read_format = unix.PERF_FORMAT_LOST
	}
	fd, err := unix.PerfEventOpen(&attr, tid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	ps := os.Getpagesize()
	mem, err := unix.Mmap(fd, 0, ps*(1+ringPages), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &switchRing{tid: tid, fd: fd, mem: mem, page: (*unix.PerfEventMmapPage)(unsafe.Pointer(&mem[0])), data: mem[ps:], out: -1}, nil
}

// scan opens a ring for each thread that has none. A thread that exits
// between the listing and the open is skipped; any other failure on the
// first scan is the caller's error, later ones only cost that thread.
func (r *Recorder) scan() error {
	dir, err := os.ReadDir(r.tasks)
	if err != nil {
		return err
	}
	first := len(r.rings) == 0
	for _, e := range dir {
		tid, err := strconv.Atoi(e.Name())
		if err != nil || r.rings[tid] != nil {
			continue
		}
		ring, err := openSwitches(tid, r.countLost)
		if first && r.countLost && errors.Is(err, unix.EINVAL) {
			// Before Linux 6.0: no count of what is dropped.
			r.countLost = false
			ring, err = openSwitches(tid, false)
		}
		if errors.Is(err, unix.ESRCH) {
			continue
		}
		if err != nil {
			if first {
				return err
			}
			// Tried again at the next scan; until then, and for
			// good if it never opens, the thread is unseen.
			r.failed[tid] = true
			continue
		}
		r.rings[tid] = ring
		delete(r.failed, tid)
		if !first {
			// Started after recording began: all the CPU it has had
			// so far went unrecorded.
			r.unseen += threadRun(r.tasks, tid)
		}
	}
	return nil
}

// threadRun is a thread's CPU time so far (schedstat, in the thread
// directory tasks), 0 if unknown.
func threadRun(tasks string, tid int) time.Duration {
	st, _ := readSchedStatIn(tasks, strconv.Itoa(tid))
	return st.Run
}

// Unseen is, after Stop, the CPU time of the process's threads that ran
// without a ring, as far as it is known: those started during the
// recording, until it found them (within maxDrain; their schedstat when
// found, which for a thread the first scan missed is its whole life), and
// any whose ring would not open and that still ran at Stop (their whole
// life). A thread that started and ended between two scans, or failed and
// ended, is not in it. Their preemptions are missing, and so is their time
// on a CPU another thread was preempted from: that much of what ByOwn does
// not cover may still have been the process's own.
func (r *Recorder) Unseen() time.Duration { return r.unseen }

// loop drains the rings every 5 ms at first and then as often as they
// fill (nextDrain), and looks for new threads every scanEvery, until Stop.
// A fixed 5 ms cost a quiet case its 200 wake-ups a second: on
// cipher-stream's ctr-512 at 16 KiB (one goroutine, 2,500 switches a
// second) the window ran at 0.932 of the CPU profiler alone with it and at
// 0.958 with this (30 paired windows in one process), and waking every
// millisecond cost about 4.5 points against once a second. Those were
// single experiments. On a loop like it, with the tracer and the CPU
// profiler on (BenchmarkRecorderWakeups), the two timers read within this
// machine's noise: the fixed one 0.951 and 1.067 of no recorder in two
// runs, this one 0.991 and 1.040. Fewer wake-ups is the reason to keep it.
//
// It does not wait on the kernel's watermark instead. Blocked in
// epoll_wait, the goroutine keeps its P until sysmon retakes it, up to
// 10 ms later: uuid-hash's new at four goroutines ran at 0.781 of the CPU
// profiler alone where the 5 ms timer ran at 0.962 (12 paired windows).
// Through the netpoller (the epoll fd nests) the wake-up came too late for
// small rings in a test of two locked threads.
func (r *Recorder) loop() {
	defer close(r.done)
	every := 5 * time.Millisecond
	if fixedDrain > 0 {
		every = fixedDrain
	}
	t := time.NewTimer(every)
	defer t.Stop()
	scanned := time.Now()
	last := scanned
	r.shortest = every
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			woke := time.Now()
			r.behind = max(r.behind, woke.Sub(last)-every)
			last = woke
			r.mu.Lock()
			fill := r.drainAll()
			if now := time.Now(); now.Sub(scanned) >= scanEvery {
				r.scan()
				scanned = now
			}
			r.mu.Unlock()
			if every = nextDrain(every, fill); fixedDrain > 0 {
				every = fixedDrain
			}
			r.shortest = min(r.shortest, every)
			t.Reset(every)
		}
	}
}

// nextDrain is the wait before the next drain, after one that found its
// fullest ring fill written (a share of the ring): half as long above a
// quarter, twice as long under a sixteenth, within minDrain and maxDrain.
// A rate less than four times the last interval's still fits before it
// halves; after a quiet spell at maxDrain, see ringPages.
func nextDrain(every time.Duration, fill float64) time.Duration {
	switch {
	case fill > 1.0/4:
		return max(every/2, minDrain)
	case fill < 1.0/16:
		return min(every*2, maxDrain)
	}
	return every
}

// drainAll drains every ring, then closes those whose thread has exited:
// each holds a mapping of 1+ringPages pages (which the kernel charges to
// the user's locked memory) and a file descriptor, and a new thread that
// reuses the id needs a ring of its own, which the next scan opens.
//
// It returns the largest share of a ring that was written.
func (r *Recorder) drainAll() (fill float64) {
	for tid, ring := range r.rings {
		fill = max(fill, r.drain(ring))
		if ring.exited {
			r.closeRing(ring)
			delete(r.rings, tid)
		}
	}
	return fill
}

// drain reads a ring's records (PERF_RECORD_SWITCH with sample_id_all:
// pid, tid, time, cpu) and pairs each preempted switch-out with the
// thread's next switch-in, keeping each stay on a CPU (ended by the next
// switch-out, or by the thread's exit record) for Stop to tell who took a
// preempted thread's CPU. It returns the share of the ring that was
// written, and sets maybeLost when the ring had no room left.
func (r *Recorder) drain(ring *switchRing) float64 {
	head := atomic.LoadUint64(&ring.page.Data_head)
	tail := ring.page.Data_tail
	size := uint64(len(ring.data))
	used := head - tail
	if used > size-ringSlack {
		r.maybeLost = true
	}
	var rec [64]byte
	for tail < head {
		off := tail % size
		var hdr [8]byte
		copyRing(hdr[:], ring.data, off)
		typ := binary.LittleEndian.Uint32(hdr[:])
		misc := binary.LittleEndian.Uint16(hdr[4:])
		n := uint64(binary.LittleEndian.Uint16(hdr[6:]))
		if n < 8 || n%8 != 0 || tail+n > head {
			// The kernel publishes whole records only: this ring is
			// corrupt. Skip to its head, and say so at Stop, or the
			// ring would stay stuck here and fill.
			r.corrupt = true
			tail = head
			break
		}
		body := rec[:min(n, uint64(len(rec)))]
		copyRing(body, ring.data, off)
		switch typ {
		case perfRecordSwitch:
			if len(body) >= 32 {
				t := int64(binary.LittleEndian.Uint64(body[16:]))
				cpu := binary.LittleEndian.Uint32(body[24:])
				if misc&miscSwitchOut != 0 && ring.lastIn > 0 {
					r.staysOff.at(ring.lastIn - 1).until = t
					ring.lastIn = 0
				}
				switch {
				case misc&miscSwitchOut == 0:
					if ring.out >= 0 && t > ring.out {
						r.add(Preemption{TID: int64(ring.tid), From: ring.out, To: t}, ring.cpu)
					}
					// A ring's first record says nothing of what came
					// before it: a switch-in then is not known to be
					// from a sleep, nor is the stay's start known to
					// matter; it is kept, as its turn.
					woke := ring.slept
					ring.out, ring.slept = -1, false
					switch {
					case r.staysOff.len() >= maxStays:
						r.staysOver = true
					case !r.staysOff.add(stay{at: t, until: math.MaxInt64, cpu: uint16(min(cpu, math.MaxUint16)), woke: woke, tid: int32(ring.tid)}):
						r.staysOver = true
					default:
						ring.lastIn = r.staysOff.len()
					}
				case misc&miscOutPreempt != 0:
					ring.out, ring.cpu, ring.slept = t, cpu, false
				default:
					ring.out, ring.slept = -1, true
				}
			}
		case perfRecordExit:
			// The thread ended (attr.task): its last stay on a CPU,
			// which no switch-out closes, ends here. The record's own
			// time follows pid, ppid, tid and ptid.
			if len(body) >= 32 && int(binary.LittleEndian.Uint32(body[16:])) == ring.tid {
				if ring.lastIn > 0 {
					r.staysOff.at(ring.lastIn - 1).until = int64(binary.LittleEndian.Uint64(body[24:]))
					ring.lastIn = 0
				}
				ring.exited = true
			}
		case perfRecordLost:
			if len(body) >= 24 {
				r.lost += binary.LittleEndian.Uint64(body[16:])
			}
		}
		tail += n
	}
	atomic.StoreUint64(&ring.page.Data_tail, tail)
	return float64(used) / float64(size)
}

func copyRing(dst, ring []byte, off uint64) {
	n := copy(dst, ring[off:])
	copy(dst[n:], ring)
}

func (r *Recorder) add(p Preemption, cpu uint32) {
	switch {
	case r.gotOff.len() >= maxPreemptions:
		r.over = true
	case !r.gotOff.add(preempted{p, cpu}):
		r.noMem = true
	}
}

// self sets each preemption's ByWoken: how long, from its start, another
// thread of the process that had just been woken from a sleep held the CPU
// — the kernel gave it the CPU as this one left (within selfGap, on the
// same CPU). A thread that came on back from a preemption of its own was
// only having its turn. In the truth suite's mutex-all at two goroutines
// the next switch-in on the CPU came 3,902 times within 20 µs (5,196 of
// 5,337 within 2 µs in another run) and otherwise after 100 µs or more.
//
// And ByOwn: how much of it the process's other threads, woken or having
// their turn, held that CPU — the rest another program had (or the CPU
// went idle while the thread waited for another). At least ByWoken, which
// counts the switch itself.
func (r *Recorder) self() {
	r.gather()
	byCPU := func(x, y stay) int { return cmp.Or(cmp.Compare(x.cpu, y.cpu), cmp.Compare(x.at, y.at)) }
	slices.SortFunc(r.stays, byCPU)
	// A thread that exits writes no switch-out for its last stay: it
	// ended, at the latest, when the next one on its CPU began.
	for i := 1; i < len(r.stays); i++ {
		if prev := &r.stays[i-1]; prev.cpu == r.stays[i].cpu && prev.until > r.stays[i].at {
			prev.until = r.stays[i].at
		}
	}
	for i := range r.got {
		p, cpu := &r.got[i], uint16(min(r.cpus[i], math.MaxUint16))
		// The stays on the CPU that can overlap it begin after it
		// began, less the slack of the two records of one switch.
		j, _ := slices.BinarySearchFunc(r.stays, stay{at: p.From - int64(selfGap), cpu: cpu}, byCPU)
		var own int64
		for ; j < len(r.stays) && r.stays[j].cpu == cpu && r.stays[j].at < p.To; j++ {
			in := r.stays[j]
			if int64(in.tid) == p.TID {
				continue
			}
			if p.ByWoken == 0 && in.woke && in.at >= p.From && in.at-p.From <= int64(selfGap) {
				p.ByWoken = time.Duration(min(in.until, p.To) - p.From)
			}
			own += max(0, min(in.until, p.To)-max(in.at, p.From))
		}
		p.ByOwn = max(p.ByWoken, time.Duration(own))
	}
}

// preempted is a preemption and the CPU it left, as recorded.
type preempted struct {
	p   Preemption
	cpu uint32
}

// gather moves what was recorded off the heap into got, cpus and stays.
func (r *Recorder) gather() {
	for _, x := range r.gotOff.collect() {
		r.got = append(r.got, x.p)
		r.cpus = append(r.cpus, x.cpu)
	}
	r.stays = append(r.stays, r.staysOff.collect()...)
}

// Stop ends the recording and returns the preempted intervals. An error
// means some were lost (the kernel's ring overflowed, or too many to keep):
// the caller should not take them as the whole.
func (r *Recorder) Stop() ([]Preemption, error) {
	close(r.stop)
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	r.drainAll()
	for tid := range r.failed {
		r.unseen += threadRun(r.tasks, tid)
	}
	r.close()
	if r.staysOver {
		// Not all of them: of no use, and up to 24 MiB to copy.
		r.staysOff.free()
		r.gather()
	} else {
		r.self()
	}
	if r.got == nil {
		r.got = []Preemption{} // none, which is not "not recorded"
	}
	switch {
	case max(r.lost, r.lostRead) > 0:
		return r.got, errors.New("the kernel dropped " + strconv.FormatUint(max(r.lost, r.lostRead), 10) + " context-switch records")
	case r.maybeLost && !r.countLost:
		return r.got, errors.New("a context-switch ring filled up, so the kernel may have dropped records")
	case r.noMem:
		return r.got, errors.New("no memory could be mapped for the context-switch records")
	case r.corrupt:
		return r.got, errors.New("a context-switch ring held a malformed record")
	case r.over:
		return r.got, errors.New("more than " + strconv.Itoa(maxPreemptions) + " preemptions in the window")
	}
	return r.got, nil
}

// OwnUnknown says, after Stop, that the stays on a CPU could not all be
// kept (more than maxStays, or no memory to map), so no preemption's
// ByWoken or ByOwn was worked out: the preemptions themselves are whole.
func (r *Recorder) OwnUnknown() bool { return r.staysOver }

func (r *Recorder) close() {
	for tid, ring := range r.rings {
		r.closeRing(ring)
		delete(r.rings, tid)
	}
}

// closeRing closes a ring, first reading from its fd how many records the
// kernel dropped from it, where it counts them (countLost).
func (r *Recorder) closeRing(ring *switchRing) {
	if r.countLost {
		// read_format PERF_FORMAT_LOST alone: the event's value, then
		// the records lost.
		var b [16]byte
		if n, err := unix.Read(ring.fd, b[:]); err == nil && n == len(b) {
			r.lostRead += binary.NativeEndian.Uint64(b[8:])
		}
	}
	ring.close()
}

func (ring *switchRing) close() {
	unix.Munmap(ring.mem)
	unix.Close(ring.fd)
}
