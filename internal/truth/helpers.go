package truth

import (
	"crypto/sha256"
	"io"
	"os"
	"sync"
)

// The classes of issue 22: fan-out to helper goroutines, a pool fed by a
// channel, a lock pipeline, a condition variable and system calls.
//
// In the fan-out and pool classes the worker hands its hashing to other
// goroutines and waits. Each helper times its own hashing; the worker times
// its wait; the truth of the wait is the part of it during which at least
// one of its helpers was hashing (work), the rest being the fan-out's own
// cost (the helpers not started yet, the wake-up after the last one):
// overlap. That is what a stopwatch can say of "where the operation's wall
// time went" while two helpers hash at once; which of them was "the" cause
// it cannot say, and the budget must not need to.

// halfBytes are hashed by each of an operation's two helpers.
const halfBytes = HashBytes / 2

// pipeBytes are written to and read back from a pipe per operation.
const pipeBytes = 4 << 10

// poolSize is the number of goroutines of a pool-chan case's pool: one per
// core of the 2-core machines the suite runs on.
const poolSize = 2

// helperSpan is one helper's hashing interval, padded: the two helpers of
// an operation write theirs from different cores.
type helperSpan struct {
	Span
	// cpu and wall sum the hashing's thread CPU time (hashOnCPU's clock)
	// and wall time over the operations that read the clock (clockEvery).
	cpu, wall int64
	sum       [sha256.Size]byte
	_         [cacheLine]byte
}

// job is a half of an operation's hashing, sent to a pool goroutine.
type job struct {
	w    *worker
	half int
}

// helperState is a worker's state for the helper classes.
type helperState struct {
	wg    sync.WaitGroup
	spans [2]helperSpan
	res   chan int // the half a helper finished (fanout-chan, pool-chan)
	// clock says this operation's helpers read the thread CPU clock
	// (clockEvery), set before they are started or sent their jobs.
	clock bool
	// The helpers' functions, made once: a go statement with arguments
	// allocates their closure every operation, which the budget would
	// call alloc and the workers' stopwatches cannot see.
	halves [2]func()
	// The pipe of the pipe class, and its buffer.
	pr, pw *os.File
	buf    []byte
}

// startPool starts the case's pool once; Close stops it.
func (c *tcase) startPool() {
	c.poolOnce.Do(func() {
		c.jobs = make(chan job, 16)
		for range poolSize {
			go func() {
				for j := range c.jobs {
					j.w.hashHalf(j.half)
					j.w.hs.res <- j.half
				}
			}()
		}
	})
}

// Close stops the pool and closes the workers' pipes.
func (c *tcase) Close() error {
	if c.jobs != nil {
		close(c.jobs)
	}
	var err error
	for _, f := range c.files {
		if e := f.Close(); e != nil && err == nil {
			err = e
		}
	}
	return err
}

var _ io.Closer = (*tcase)(nil)

// initHelpers prepares worker w for its case's class.
func (w *worker) initHelpers() error {
	c := w.c
	switch c.kind {
	case fanoutWG:
		w.hs.halves = [2]func(){func() { w.fanHalf(0) }, func() { w.fanHalf(1) }}
	case fanoutChan:
		w.hs.res = make(chan int, 2)
		w.hs.halves = [2]func(){func() { w.chanHalf(0) }, func() { w.chanHalf(1) }}
	case poolChan:
		w.hs.res = make(chan int, 2)
		c.startPool()
	case pipe:
		r, wr, err := os.Pipe()
		if err != nil {
			return err
		}
		w.hs.pr, w.hs.pw, w.hs.buf = r, wr, make([]byte, pipeBytes)
		c.files = append(c.files, r, wr)
	}
	return nil
}

// clockEvery is how often (one operation in clockEvery) a helper reads its
// thread's CPU clock around its hashing. Two reads are system calls of
// about a µs each on the 2-core VM, as long as a third of a half's
// hashing: read every operation, a quiet fanout-wg at one goroutine had
// 38% of its helpers' CPU samples in them, the budget rightly calling
// that other where the helpers' stopwatches (which leave the reads out)
// said wait. One in 32 costs a hundredth of the helpers' time, and still
// reads the clock hundreds of times a run.
const clockEvery = 32

// hashHalf hashes half i of the worker's data, timing it: a helper's work.
// In one operation of clockEvery it times the hashing with its thread's
// CPU clock too, as hashOnCPU does, to say how much of it the helpers had
// a CPU for (beside a spinning process their threads wait for one inside
// their spans).
func (w *worker) hashHalf(i int) {
	sp := &w.hs.spans[i]
	half := w.data[i*halfBytes : (i+1)*halfBytes]
	if !haveThreadCPU || !w.hs.clock {
		a := now()
		sp.sum = sha256.Sum256(half)
		sp.Span = Span{a, now()}
		return
	}
	a, b, cpu := w.onCPU(func() { sp.sum = sha256.Sum256(half) })
	sp.Span = Span{a, b}
	sp.cpu += cpu
	sp.wall += b - a
}

// fanHalf is a fanout-wg helper.
func (w *worker) fanHalf(i int) {
	w.hashHalf(i)
	w.hs.wg.Done()
}

// chanHalf is a fanout-chan helper.
func (w *worker) chanHalf(i int) {
	w.hashHalf(i)
	w.hs.res <- i
}

// helped returns how much of [t0, t1] at least one of the operation's two
// helpers spent hashing: the union of their spans within it.
func (w *worker) helped(t0, t1 int64) int64 {
	a, b := w.hs.spans[0].Span, w.hs.spans[1].Span
	a = Span{max(a.Start, t0), min(a.End, t1)}
	b = Span{max(b.Start, t0), min(b.End, t1)}
	la, lb := max(0, a.End-a.Start), max(0, b.End-b.Start)
	var both int64
	if la > 0 && lb > 0 {
		both = max(0, min(a.End, b.End)-max(a.Start, b.Start))
	}
	return la + lb - both
}

// helpedCPU is the part of h, the union of an operation's helpers'
// hashing, that they had a CPU for, -1 before the clock was read: h times
// the share of the helpers' hashing their threads ran, over the
// operations that read the clock so far. A budget splits each instant of
// a wait among the helpers running then, one preempted by another program
// and one hashing alike, so that share of the union is what it can call
// work; the rest it calls sched, of which work.
func (w *worker) helpedCPU(h int64) int64 {
	a, b := &w.hs.spans[0], &w.hs.spans[1]
	if a.wall+b.wall <= 0 {
		return -1
	}
	return int64(float64(h) * min(1, float64(a.cpu+b.cpu)/float64(a.wall+b.wall)))
}

// opHelpers performs one operation of the issue-22 classes.
func (w *worker) opHelpers(s *Sums, slot *Slot) {
	c := w.c
	switch c.kind {
	case fanoutWG, fanoutChan, poolChan:
		// Set before the helpers start or take the jobs: the go
		// statement or the channel orders the write before their reads.
		w.hs.clock = w.ops%clockEvery == 1
		t0 := now()
		switch c.kind {
		case fanoutWG:
			w.hs.wg.Add(2)
			go w.hs.halves[0]()
			go w.hs.halves[1]()
			t0 = now()
			w.hs.wg.Wait()
		case fanoutChan:
			go w.hs.halves[0]()
			go w.hs.halves[1]()
			t0 = now()
			<-w.hs.res
			<-w.hs.res
		case poolChan:
			// The sends are part of the wait: with the pool busy with
			// another worker's halves, they block.
			c.jobs <- job{w, 0}
			c.jobs <- job{w, 1}
			<-w.hs.res
			<-w.hs.res
		}
		t1 := now()
		h := w.helped(t0, t1)
		s.Work += h
		s.Wait += t1 - t0 - h
		if cpu := w.helpedCPU(h); cpu >= 0 {
			s.WorkCPU += cpu
		}
		slot.wait(t0, t1)
	case mutexPipeline:
		t0 := now()
		c.mu.Lock()
		t1 := now()
		w.hashOnCPU(s, w.data[:halfBytes])
		t2 := now()
		c.mu.Unlock()
		t3 := now()
		c.mu2.Lock()
		t4 := now()
		w.hashOnCPU(s, w.data[halfBytes:])
		t5 := now()
		c.mu2.Unlock()
		t6 := now()
		s.Lock += t1 - t0 + t3 - t2 + t4 - t3 + t6 - t5
		slot.wait(t0, t1)
		slot.wait(t2, t4)
		slot.wait(t5, t6)
	case cond:
		t0 := now()
		c.condMu.Lock()
		t1 := now()
		s.Lock += t1 - t0
		slot.wait(t0, t1)
		for c.busy {
			a := now()
			c.cond.Wait()
			b := now()
			s.Wait += b - a
			slot.wait(a, b)
		}
		c.busy = true
		t2 := now()
		c.condMu.Unlock()
		t3 := now()
		w.hashOnCPU(s, w.data)
		t4 := now()
		c.condMu.Lock()
		c.busy = false
		c.cond.Signal()
		c.condMu.Unlock()
		t5 := now()
		s.Lock += t3 - t2 + t5 - t4
		slot.wait(t2, t3)
		slot.wait(t4, t5)
	case pipe:
		// A system call is on a CPU: not logged as a wait, so the
		// model counts it as wanting one.
		t0 := now()
		if _, err := w.hs.pw.Write(w.hs.buf); err != nil {
			panic(err)
		}
		if _, err := io.ReadFull(w.hs.pr, w.hs.buf); err != nil {
			panic(err)
		}
		s.Wait += now() - t0
		w.hashOnCPU(s, w.data)
	}
}
