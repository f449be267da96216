package truth

import (
	"fmt"
	"runtime/metrics"
	"runtime/trace"
	"sync/atomic"
)

// Sums are one worker's timed pieces, in nanoseconds.
type Sums struct {
	// Lock is time inside Lock/RLock and Unlock/RUnlock: spinning, parked,
	// runnable after the Unlock that woke it, yielding to a starving
	// waiter; a budget must call all of it lock.
	Lock int64
	// Wait is time in the semaphore's send and receive and in time.Sleep:
	// parked, runnable after the wake-up, waking the next; all wait.
	Wait int64
	// Work is time hashing, Alloc time allocating (malloc, assists and
	// write barriers included).
	Work, Alloc int64
	// WorkCPU is the thread CPU time of the hashing, where a variant
	// measures it (every worker that hashes itself: hashOnCPU): Work
	// less the time the goroutine was
	// runnable, to Go or to the kernel.
	WorkCPU int64
	// Total is the time inside Run.
	Total int64
}

func (s *Sums) add(t Sums) {
	s.Lock += t.Lock
	s.Wait += t.Wait
	s.Work += t.Work
	s.Alloc += t.Alloc
	s.WorkCPU += t.WorkCPU
	s.Total += t.Total
}

// Span is an interval of monotonic nanoseconds since the package's epoch.
type Span struct{ Start, End int64 }

// Log is what one worker did during a recording.
type Log struct {
	// Runs are the worker's calls of Run, one per repetition, in order:
	// the k-th Run of every worker of a case is the same repetition.
	Runs []Span
	// Waits are the intervals the worker spent in a synchronisation call
	// (Lock, Unlock, a send, a receive, a sleep); each lies inside one of
	// Runs.
	Waits []Span
	Sums  Sums
}

// Slot receives one worker's timeline. It is written by that worker only.
type Slot struct {
	_        [cacheLine]byte
	runs     []Span
	waits    []Span
	sums     Sums
	overflow bool
	_        [cacheLine]byte
}

// slotSpans bounds the waits one worker can log in one recording: an
// uncontended mutex at one goroutine logs a Lock and an Unlock per 8 µs
// operation, 250,000 a second; 1<<21 is eight seconds' worth.
const slotSpans = 1 << 21

func (s *Slot) wait(start, end int64) {
	if s == nil {
		return
	}
	if len(s.waits) == cap(s.waits) {
		s.overflow = true
		return
	}
	s.waits = append(s.waits, Span{start, end})
}

func (s *Slot) run(start, end int64, sums Sums) {
	if len(s.runs) == cap(s.runs) {
		s.overflow = true
		return
	}
	s.runs = append(s.runs, Span{start, end})
	s.sums.add(sums)
}

// Recorder collects the timelines of one case's workers at a time. Start
// and Stop must not be called while the workers run: the runner calls its
// Progress between repetitions, which is where the tests call them.
type Recorder struct {
	// TracedOnly records only the Runs made while the execution tracer
	// is on: the runner's traced slices (or its profiling window), the
	// executions the budget describes. The timed repetitions between
	// them are not the budget's and are left out.
	TracedOnly bool

	on     atomic.Bool
	missed atomic.Bool // a worker with no slot ran
	slots  []*Slot
	mets   []metrics.Sample
	// What the collector and the kernel did during the recorded Runs:
	// read when the first worker of a case enters a recorded Run and when
	// the last leaves it (begin, finish), so that the timed repetitions
	// between traced slices are not in it.
	started, ended atomic.Int32
	at0            Machine       // at the first worker's entry
	delay0         map[int]int64 // run delay of each thread then
	acc            Machine       // summed over the recorded Runs
}

// gcMetrics are read at Start and Stop, in Machine's order after Cycles.
var gcMetrics = []string{
	"/gc/cycles/total:gc-cycles",
	"/cpu/classes/gc/mark/dedicated:cpu-seconds",
	"/cpu/classes/gc/mark/fractional:cpu-seconds",
	"/cpu/classes/gc/mark/idle:cpu-seconds",
	"/cpu/classes/gc/mark/assist:cpu-seconds",
	"/cpu/classes/gc/pause:cpu-seconds",
}

func (r *Recorder) readGC(into *Machine) {
	metrics.Read(r.mets)
	ns := func(i int) int64 {
		if v := r.mets[i].Value; v.Kind() == metrics.KindFloat64 {
			return int64(v.Float64() * 1e9)
		}
		return 0
	}
	cycles := int64(0)
	if v := r.mets[0].Value; v.Kind() == metrics.KindUint64 {
		cycles = int64(v.Uint64())
	}
	*into = Machine{Cycles: cycles, Dedicated: ns(1), Fractional: ns(2), Idle: ns(3), Assist: ns(4), Pause: ns(5)}
}

// NewRecorder returns a recorder for cases of up to threads workers. Its
// buffers are outside the Go heap (see spans), so they do not change
// how often the alloc variant's heap is collected.
func NewRecorder(threads int) (*Recorder, error) {
	r := &Recorder{slots: make([]*Slot, threads), mets: make([]metrics.Sample, len(gcMetrics))}
	for i, name := range gcMetrics {
		r.mets[i].Name = name
	}
	for i := range r.slots {
		runs, err := spans(slotSpans / 64)
		if err != nil {
			return nil, err
		}
		waits, err := spans(slotSpans)
		if err != nil {
			return nil, err
		}
		r.slots[i] = &Slot{runs: runs[:0], waits: waits[:0]}
	}
	return r, nil
}

// slot returns worker id's slot while recording, else nil.
func (r *Recorder) slot(id int) *Slot {
	if r == nil || !r.on.Load() || (r.TracedOnly && !trace.IsEnabled()) {
		return nil
	}
	if id >= len(r.slots) {
		r.missed.Store(true)
		return nil
	}
	return r.slots[id]
}

// Start empties the slots and starts recording.
func (r *Recorder) Start() {
	for _, s := range r.slots {
		s.runs, s.waits, s.sums, s.overflow = s.runs[:0], s.waits[:0], Sums{}, false
	}
	r.acc = Machine{}
	if runDelays() == nil {
		r.acc.RunDelay = -1
	}
	r.started.Store(0)
	r.ended.Store(0)
	r.missed.Store(false)
	r.on.Store(true)
}

// begin is called by every worker entering a recorded Run, before its
// clock starts: the first reads what the collector and the kernel have
// done so far.
func (r *Recorder) begin() {
	if r.started.Add(1) == 1 {
		r.readGC(&r.at0)
		r.delay0 = runDelays()
	}
}

// finish is called by every worker leaving a recorded Run, after its clock
// stopped; the last of the case's workers adds what the collector and the
// kernel did since begin. The runner starts the next repetition only after
// every worker's Run returned, so begin and finish pair up.
func (r *Recorder) finish(workers int) {
	if r.ended.Add(1) != int32(workers) {
		return
	}
	var b Machine
	r.readGC(&b)
	a := r.at0
	r.acc.Cycles += b.Cycles - a.Cycles
	r.acc.Dedicated += b.Dedicated - a.Dedicated
	r.acc.Fractional += b.Fractional - a.Fractional
	r.acc.Idle += b.Idle - a.Idle
	r.acc.Assist += b.Assist - a.Assist
	r.acc.Pause += b.Pause - a.Pause
	if end := runDelays(); end != nil && r.delay0 != nil && r.acc.RunDelay >= 0 {
		for tid, d := range end {
			r.acc.RunDelay += d - r.delay0[tid] // a thread started since counts from zero
		}
	} else {
		r.acc.RunDelay = -1
	}
	r.started.Store(0)
	r.ended.Store(0)
}

// Stop stops recording and returns the logs of the workers that ran and
// what the collector and the kernel did meanwhile. The logs share the
// recorder's buffers: use them before the next Start.
func (r *Recorder) Stop() ([]Log, Machine, error) {
	r.on.Store(false)
	gc := r.acc
	if r.missed.Load() {
		return nil, gc, fmt.Errorf("a case has more workers than the recorder's %d slots", len(r.slots))
	}
	var logs []Log
	for i, s := range r.slots {
		if s.overflow {
			return nil, gc, fmt.Errorf("worker %d logged more than %d waits or %d runs: record a shorter window", i, cap(s.waits), cap(s.runs))
		}
		if len(s.runs) > 0 {
			logs = append(logs, Log{Runs: s.runs, Waits: s.waits, Sums: s.sums})
		}
	}
	return logs, gc, nil
}
