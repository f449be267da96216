package truth

import (
	"crypto/sha256"
	"fmt"
	"hash"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/profiles"
)

// Sizes of one operation.
const (
	// HashBytes are hashed per operation by every variant: about 7.6 µs
	// with SHA-NI on the 2-core VM, long enough that the handful of
	// time.Now calls around it (22 ns each) stay under 2% of an operation.
	HashBytes = 16 << 10
	// lockedBytes of them are hashed under the lock by mutex-quarter.
	lockedBytes = HashBytes / 4
	// allocNodes objects are allocated per operation by the alloc variant,
	// each holding a pointer to the one before, so a collection has a
	// linked structure to mark; keptLists operations' worth (2 MiB) stay
	// live per worker. The live heap decides what the collector makes the
	// workers do: with 64 lists, assists that found no mark work parked
	// and sat runnable after their wake-up for 22% of four workers' time,
	// inside the allocation loop the model counts as wanting a CPU; with
	// 1024, the mark workers' CPU, which bounds what they can have taken
	// from the workers, was 23% of the workers' time. 256 keeps both
	// near 10%.
	allocNodes = 256
	keptLists  = 256
	// sleepEvery is how often the sleep variant sleeps, for sleepFor.
	// A goroutine alone on its P that sleeps under a millisecond is woken
	// by the netpoller's millisecond timeout (time.Sleep(30µs) measured
	// 1.08 ms here), so sleeping every operation would make the variant
	// 99% wait; one operation in 64 makes it about two thirds.
	sleepEvery = 64
	sleepFor   = 50 * time.Microsecond
	// rwWriteEvery is how often an rwmutex operation takes the write lock.
	rwWriteEvery = 4
	// cacheLine pads per-worker state: identical variants measured 10%
	// apart when workers' counters shared a line (DESIGN.md), and 128
	// bytes also covers the adjacent-line prefetcher.
	cacheLine = 128
)

// Counter names reported by every worker, in nanoseconds; the runner
// reports them per operation ("lock-ns/op"). Lock is the time in Lock and
// Unlock, wait in the semaphore's send and receive and in Sleep, total is
// the time inside Run.
const (
	CountLock  = "lock-ns"
	CountWait  = "wait-ns"
	CountWork  = "work-ns"
	CountAlloc = "alloc-ns"
	CountTotal = "total-ns"
)

// WorkPatterns are the truth scenario's work frames: SHA-256, whose blocks
// run in crypto/internal/fips140/sha256 (blockSHANI, blockAVX2) since Go 1.24.
var WorkPatterns = []string{`^crypto/internal/fips140/sha256\.`, `^crypto/sha256\.`}

// Scenario returns the truth scenario. rec, if not nil, receives the
// timeline of every Run while it is recording (Recorder.Start). The
// scenario is not registered: it exists for this package's tests.
func Scenario(rec *Recorder) *perflab.Scenario {
	v := func(name, doc string, k kind) perflab.Variant {
		return perflab.Variant{Name: name, Doc: doc, New: func(perflab.Params) (perflab.Case, error) {
			if k == nolockThread && !haveThreadCPU {
				return nil, fmt.Errorf("no thread CPU clock on %s: %w", runtime.GOOS, perflab.ErrNotApplicable)
			}
			c := &tcase{kind: k, name: name, rec: rec, sem: make(chan struct{}, 1)}
			c.cond = sync.NewCond(&c.condMu)
			return c, nil
		}}
	}
	return &perflab.Scenario{
		Name:    "truth",
		Doc:     "self-timed SHA-256 workers: the budget's ground truth",
		Threads: []int{1, 2, 4},
		Work:    WorkPatterns,
		Variants: []perflab.Variant{
			v("nolock", "hash 16 KiB", nolock),
			v("nolock-thread", "hash 16 KiB on a goroutine locked to its thread, also timed by the thread's CPU clock", nolockThread),
			v("mutex-all", "hash 16 KiB under one sync.Mutex", mutexAll),
			v("mutex-quarter", "hash 4 KiB under one sync.Mutex, then 12 KiB outside it", mutexQuarter),
			v("rwmutex", "hash 16 KiB under one sync.RWMutex: write lock every 4th operation, read lock otherwise", rwmutex),
			v("chan-sem", "hash 16 KiB holding a channel semaphore of capacity 1 (send acquires, receive releases)", chanSem),
			v("alloc", "allocate 256 linked 32-byte objects, keep the last 256 lists, hash 16 KiB", alloc),
			v("sleep", "hash 16 KiB; every 64th operation then sleeps 50 µs", sleep),
			v("fanout-wg", "start two goroutines that hash 8 KiB each, wait on a sync.WaitGroup", fanoutWG),
			v("fanout-chan", "start two goroutines that hash 8 KiB each, receive their two results from a channel", fanoutChan),
			v("pool-chan", "send two 8 KiB halves to a pool of two goroutines over a channel, receive their two results", poolChan),
			v("mutex-pipeline", "hash 8 KiB under sync.Mutex A, then 8 KiB under sync.Mutex B", mutexPipeline),
			v("cond", "hash 16 KiB in a one-slot section guarded by a sync.Cond", cond),
			v("pipe", "write 4 KiB to an os.Pipe and read it back, then hash 16 KiB", pipe),
		},
	}
}

type kind int

const (
	nolock kind = iota
	nolockThread
	mutexAll
	mutexQuarter
	rwmutex
	chanSem
	alloc
	sleep
	// The classes of issue 22 (helpers.go).
	fanoutWG
	fanoutChan
	poolChan
	mutexPipeline
	cond
	pipe
)

// tcase is the state shared by a case's workers: the lock they contend.
type tcase struct {
	kind kind
	name string // the variant's
	rec  *Recorder
	// workers is the number of workers made (NewWorker), which is the
	// case's goroutine count: the recorder's last worker to leave a Run
	// reads the machine's figures.
	workers int
	_       [cacheLine]byte
	mu      sync.Mutex
	_       [cacheLine]byte
	rw      sync.RWMutex
	_       [cacheLine]byte
	sem     chan struct{}
	_       [cacheLine]byte
	mu2     sync.Mutex // the pipeline's second lock
	_       [cacheLine]byte
	// The cond class's one slot.
	condMu sync.Mutex
	cond   *sync.Cond
	busy   bool
	_      [cacheLine]byte
	// The pool-chan class's pool, started by the first worker.
	poolOnce sync.Once
	jobs     chan job
	files    []*os.File // the pipe class's, closed with the case
}

func (c *tcase) NewWorker(id int) perflab.Worker {
	w := &worker{c: c, id: id, h: sha256.New(), data: make([]byte, HashBytes)}
	c.workers = max(c.workers, id+1)
	if haveThreadCPU {
		w.cpuClockCost = cpuClockCost()
	}
	for i := range w.data {
		w.data[i] = byte(i*7 + id)
	}
	if c.kind == alloc {
		for i := range w.kept {
			w.kept[i] = allocList(allocNodes)
		}
	}
	if err := w.initHelpers(); err != nil {
		// NewWorker cannot fail; a process out of file descriptors
		// cannot run the suite.
		panic(fmt.Sprintf("truth: worker %d: %v", id, err))
	}
	return w
}

// node is one allocation of the alloc variant: 32 bytes with a pointer.
type node struct {
	next *node
	_    [3]uint64 // to 32 bytes
}

// allocList allocates a list of n nodes. It is a frame of its own so that
// a rule (UserRules) can say its own instructions — the loop, the stores —
// are allocation, as the time.Now around it does.
//
//go:noinline
func allocList(n int) *node {
	var head *node
	for range n {
		head = &node{next: head}
	}
	return head
}

// UserRules are the classification rules the truth scenario adds to the
// built-in ones: allocList's own code is alloc. As a fallback rule it only
// claims stacks no other rule decides, so mallocgc stays alloc, an assist
// stays gc and a blocked goroutine is classified as without it.
var UserRules = []profiles.Rule{
	{Category: profiles.Alloc, Pattern: `^github\.com/perflab/perflab/internal/truth\.allocList$`, Fallback: true},
}

// worker is one goroutine's state, padded on both sides so no two
// workers' counters share a cache line.
type worker struct {
	_     [cacheLine]byte
	c     *tcase
	id    int
	ops   uint64 // operations so far, for the every-Nth choices
	h     hash.Hash
	data  []byte
	sum   [sha256.Size]byte
	total Sums // cumulative, for Counts
	kept  [keptLists]*node
	// cpuClockCost is what two reads of the thread CPU clock add to the
	// interval between them (hashOnCPU).
	cpuClockCost int64
	hs           helperState
	_            [cacheLine]byte
}

// epoch is the origin of every recorded time: monotonic nanoseconds.
var epoch = time.Now()

func now() int64 { return int64(time.Since(epoch)) }

func (w *worker) hash(b []byte) {
	w.h.Reset()
	w.h.Write(b)
	w.h.Sum(w.sum[:0])
}

// Run performs n operations, timing each piece. The sums are kept in
// locals and added once per Run, so the shared recorder is not touched in
// the loop except to log waits.
func (w *worker) Run(n int) {
	if w.c.kind == nolockThread {
		// The thread's CPU clock is the goroutine's only while no other
		// goroutine can run on the thread. The runner's worker goroutine
		// ends after Run, so it must not exit locked (its thread would be
		// destroyed).
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	slot := w.c.rec.slot(w.id)
	if slot != nil {
		w.c.rec.begin()
	}
	var s Sums
	start := now()
	for range n {
		w.op(&s, slot)
	}
	end := now()
	s.Total = end - start
	w.total.add(s)
	if slot != nil {
		slot.run(start, end, s)
		w.c.rec.finish(w.c.workers)
	}
}

// hashOnCPU hashes b, timing it with the wall clock and, where there is
// one, the thread's CPU clock, on a goroutine locked to its thread for the
// hashing only: the two clocks then say how much of the hashing's wall
// time the goroutine had no CPU, runnable to Go (another goroutine had the
// P) or to the kernel (another program had the core). The budget calls
// that sched, of which work (runner.SchedBy), and a stopwatch work: with
// both the suite holds the budget against either view, beside a spinning
// process too, with no model. Locking only around the hashing leaves the
// lock and channel hand-offs as they are (a locked goroutine's every
// switch is a futex wake of another thread: a semaphore hand-off measured
// 4.5–5 µs locked). The CPU clock is read outside the wall clock, so the
// hashing's wall time has no system call in it (their cost, half a µs, is
// other, as the budget says), and what the CPU interval has of them,
// cpuClockCost, is taken off.
func (w *worker) hashOnCPU(s *Sums, b []byte) {
	if !haveThreadCPU {
		t0 := now()
		w.hash(b)
		s.Work += now() - t0
		return
	}
	t0, t1, cpu := w.onCPU(func() { w.hash(b) })
	s.Work += t1 - t0
	s.WorkCPU += cpu
}

// onCPU runs f on the goroutine locked to its thread, timing it with the
// wall clock (t0, t1) and the thread's CPU clock (cpu, at most t1−t0), the
// CPU clock read outside the wall clock and its reads' own cost
// (cpuClockCost) taken off, as hashOnCPU says. The caller checks
// haveThreadCPU.
func (w *worker) onCPU(f func()) (t0, t1, cpu int64) {
	runtime.LockOSThread()
	c0 := threadCPU()
	t0 = now()
	f()
	t1 = now()
	c1 := threadCPU()
	runtime.UnlockOSThread()
	return t0, t1, min(t1-t0, max(0, c1-c0-w.cpuClockCost))
}

// op performs one operation. Every call of a synchronisation primitive —
// Lock and Unlock, the semaphore's send and receive, Sleep — is timed and
// logged as a span for Analyze: inside one a goroutine may be parked,
// runnable after its wake-up, or yielding its P (an Unlock handing a
// starving Mutex to its waiter), and whichever it is, a budget must call
// it lock or wait.
func (w *worker) op(s *Sums, slot *Slot) {
	c := w.c
	w.ops++
	switch c.kind {
	case nolock, nolockThread:
		w.hashOnCPU(s, w.data)
	case mutexAll, mutexQuarter:
		locked := w.data
		if c.kind == mutexQuarter {
			locked = w.data[:lockedBytes]
		}
		t0 := now()
		c.mu.Lock()
		t1 := now()
		w.hashOnCPU(s, locked)
		t2 := now()
		c.mu.Unlock()
		t3 := now()
		s.Lock += t1 - t0 + t3 - t2
		slot.wait(t0, t1)
		slot.wait(t2, t3)
		if c.kind == mutexQuarter {
			w.hashOnCPU(s, w.data[lockedBytes:])
		}
	case rwmutex:
		write := w.ops%rwWriteEvery == 0
		t0 := now()
		if write {
			c.rw.Lock()
		} else {
			c.rw.RLock()
		}
		t1 := now()
		w.hashOnCPU(s, w.data)
		t2 := now()
		if write {
			c.rw.Unlock()
		} else {
			c.rw.RUnlock()
		}
		t3 := now()
		s.Lock += t1 - t0 + t3 - t2
		slot.wait(t0, t1)
		slot.wait(t2, t3)
	case chanSem:
		t0 := now()
		c.sem <- struct{}{}
		t1 := now()
		w.hashOnCPU(s, w.data)
		t2 := now()
		<-c.sem
		t3 := now()
		s.Wait += t1 - t0 + t3 - t2
		slot.wait(t0, t1)
		slot.wait(t2, t3)
	case alloc:
		t0 := now()
		w.kept[w.ops%keptLists] = allocList(allocNodes)
		s.Alloc += now() - t0
		w.hashOnCPU(s, w.data)
	case sleep:
		w.hashOnCPU(s, w.data)
		if w.ops%sleepEvery == 0 {
			t1 := now()
			time.Sleep(sleepFor)
			t2 := now()
			s.Wait += t2 - t1
			slot.wait(t1, t2)
		}
	default:
		w.opHelpers(s, slot)
	}
}

// Counts reports the cumulative times, for the runner's per-op stats.
func (w *worker) Counts() map[string]int64 {
	t := w.total
	return map[string]int64{
		CountLock:  t.Lock,
		CountWait:  t.Wait,
		CountWork:  t.Work,
		CountAlloc: t.Alloc,
		CountTotal: t.Total,
	}
}

var _ perflab.Counter = (*worker)(nil)
