package ctxswitch

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/timingtest"
	"golang.org/x/sys/unix"
)

// TestSwitchRingDrain reads a ring laid out as the kernel writes it: a
// preempted switch-out paired with the next switch-in, a sleep (not a
// preemption) left out, a record wrapping the ring's end, and a malformed
// record that must not leave the ring stuck.
func TestSwitchRingDrain(t *testing.T) {
	const size = 176 // five records and half of one
	ring := &switchRing{tid: 7, page: new(unix.PerfEventMmapPage), data: make([]byte, size), out: -1}
	var head uint64
	put := func(misc uint16, n uint16, at int64) {
		head = putSwitch(ring, head, misc, n, at, 0)
	}
	r := &Recorder{}
	put(miscSwitchOut|miscOutPreempt, 32, 100) // preempted at 100
	put(0, 32, 150)                            // back at 150
	put(miscSwitchOut, 32, 200)                // went to sleep
	put(0, 32, 900)                            // woken
	put(miscSwitchOut|miscOutPreempt, 32, 1000)
	ring.page.Data_head = head
	r.drain(ring)
	put(0, 32, 1010) // wraps the ring's end
	ring.page.Data_head = head
	r.drain(ring)
	r.gather()
	want := []Preemption{{TID: 7, From: 100, To: 150}, {TID: 7, From: 1000, To: 1010}}
	if !slices.Equal(r.got, want) {
		t.Errorf("preemptions %v, want %v", r.got, want)
	}
	put(0, 12, 0) // no kernel writes a record of 12 bytes
	put(miscSwitchOut|miscOutPreempt, 32, 2000)
	ring.page.Data_head = head
	r.drain(ring)
	if !r.corrupt || ring.page.Data_tail != head {
		t.Errorf("after a malformed record: corrupt %v, tail %d of head %d", r.corrupt, ring.page.Data_tail, head)
	}
}

// putSwitch lays one PERF_RECORD_SWITCH with sample_id_all (pid, tid, time,
// cpu) in ring at head, as the kernel writes it, and returns the new head.
func putSwitch(ring *switchRing, head uint64, misc, n uint16, at int64, cpu uint32) uint64 {
	rec := make([]byte, n)
	binary.LittleEndian.PutUint32(rec, perfRecordSwitch)
	binary.LittleEndian.PutUint16(rec[4:], misc)
	binary.LittleEndian.PutUint16(rec[6:], n)
	if n >= 32 {
		binary.LittleEndian.PutUint32(rec[12:], uint32(ring.tid))
		binary.LittleEndian.PutUint64(rec[16:], uint64(at))
		binary.LittleEndian.PutUint32(rec[24:], cpu)
	}
	size := uint64(len(ring.data))
	for i, b := range rec {
		ring.data[(head+uint64(i))%size] = b
	}
	return head + uint64(n)
}

// putExit lays a PERF_RECORD_EXIT of ring's thread at the given time, as
// long as the kernel's (56 bytes with sample_id_all: pid, ppid, tid, ptid,
// time, then the sample's tid, time and cpu).
func putExit(ring *switchRing, head uint64, at int64) uint64 {
	rec := make([]byte, 56)
	binary.LittleEndian.PutUint32(rec, perfRecordExit)
	binary.LittleEndian.PutUint16(rec[6:], uint16(len(rec)))
	binary.LittleEndian.PutUint32(rec[16:], uint32(ring.tid))
	binary.LittleEndian.PutUint64(rec[24:], uint64(at))
	size := uint64(len(ring.data))
	for i, b := range rec {
		ring.data[(head+uint64(i))%size] = b
	}
	return head + uint64(len(rec))
}

// TestSwitchSelf: a preemption's ByWoken is how long another thread of the
// process, woken from a sleep, held the CPU when it came onto the same CPU
// within selfGap — not when the thread that came on was only back from a
// preemption of its own (its turn in the run queue), nor on another CPU,
// nor much later, nor the preempted thread itself.
func TestSwitchSelf(t *testing.T) {
	const us = int64(time.Microsecond)
	gap := int64(selfGap)
	ring := func(tid int) *switchRing {
		return &switchRing{tid: tid, page: new(unix.PerfEventMmapPage), data: make([]byte, 4096), out: -1}
	}
	a, b := ring(7), ring(8)
	var ha, hb uint64
	out, in, sleep := uint16(miscSwitchOut|miscOutPreempt), uint16(0), uint16(miscSwitchOut)
	// 1: a preempted on CPU 1; b, asleep, comes on there 1 µs later and
	// sleeps again 30 µs after that.
	hb = putSwitch(b, hb, sleep, 32, 0, 1)
	ha = putSwitch(a, ha, out, 32, 1000*us, 1)
	hb = putSwitch(b, hb, in, 32, 1000*us+us, 1)
	hb = putSwitch(b, hb, sleep, 32, 1000*us+31*us, 1)
	ha = putSwitch(a, ha, in, 32, 1100*us, 1)
	// 2: b comes on right after, but back from a preemption: its turn.
	hb = putSwitch(b, hb, in, 32, 1200*us, 1)
	hb = putSwitch(b, hb, out, 32, 1300*us, 1)
	ha = putSwitch(a, ha, out, 32, 2000*us, 1)
	hb = putSwitch(b, hb, in, 32, 2000*us+us, 1)
	ha = putSwitch(a, ha, in, 32, 2100*us, 1)
	// 3: b, woken, comes on CPU 2, after a's CPU 1 in the sort.
	hb = putSwitch(b, hb, sleep, 32, 2200*us, 2)
	ha = putSwitch(a, ha, out, 32, 3000*us, 1)
	hb = putSwitch(b, hb, in, 32, 3000*us+us, 2)
	ha = putSwitch(a, ha, in, 32, 3100*us, 1)
	// 4: b, woken, comes on the same CPU after another program ran.
	hb = putSwitch(b, hb, sleep, 32, 3200*us, 1)
	ha = putSwitch(a, ha, out, 32, 4000*us, 1)
	hb = putSwitch(b, hb, in, 32, 4000*us+2*gap, 1)
	ha = putSwitch(a, ha, in, 32, 4100*us, 1)
	// 5: b, woken, comes on and has the CPU past a's return (another
	// CPU took a back): only a's interval counts.
	hb = putSwitch(b, hb, sleep, 32, 4200*us, 1)
	ha = putSwitch(a, ha, out, 32, 5000*us, 1)
	hb = putSwitch(b, hb, in, 32, 5000*us+us, 1)
	ha = putSwitch(a, ha, in, 32, 5100*us, 0)
	hb = putSwitch(b, hb, sleep, 32, 5500*us, 1)
	// 6: b, woken, comes on as a is preempted, and exits 10 µs later
	// (no switch-out: the kernel writes none for a thread's end); c has
	// its turn from then, 100 µs, then another program runs.
	c6 := ring(11)
	var hc6 uint64
	hc6 = putSwitch(c6, hc6, out, 32, 5900*us, 1)
	hb = putSwitch(b, hb, in, 32, 6000*us+us, 1)
	ha = putSwitch(a, ha, out, 32, 6000*us, 1)
	hc6 = putSwitch(c6, hc6, in, 32, 6011*us, 1)
	hc6 = putSwitch(c6, hc6, out, 32, 6111*us, 1)
	ha = putSwitch(a, ha, in, 32, 7000*us, 1)
	// 7: b2, woken, comes on as a is preempted and exits 10 µs later (the
	// kernel's exit record); another program has the CPU until a is back.
	b2 := ring(12)
	var hb2 uint64
	hb2 = putSwitch(b2, hb2, sleep, 32, 7100*us, 1)
	ha = putSwitch(a, ha, out, 32, 8000*us, 1)
	hb2 = putSwitch(b2, hb2, in, 32, 8000*us+us, 1)
	hb2 = putExit(b2, hb2, 8011*us)
	ha = putSwitch(a, ha, in, 32, 9000*us, 1)
	a.page.Data_head, b.page.Data_head, c6.page.Data_head, b2.page.Data_head = ha, hb, hc6, hb2
	r := &Recorder{}
	// b's ring drained first: the order of rings must not matter.
	r.drain(b)
	r.drain(a)
	r.drain(c6)
	r.drain(b2)
	r.self()
	var got, own []time.Duration
	for _, p := range r.got {
		if p.TID == 7 {
			got, own = append(got, p.ByWoken), append(own, p.ByOwn)
		}
	}
	// From a's leaving to b's: 1 µs of switching and 30 of b.
	want := []time.Duration{31 * time.Microsecond, 0, 0, 0, 100 * time.Microsecond, 11 * time.Microsecond, 11 * time.Microsecond}
	if !slices.Equal(got, want) {
		t.Errorf("ByWoken of a's preemptions %v, want %v", got, want)
	}
	// Whoever of the process had a's CPU: 1, b woken (ByWoken, which
	// counts the switch); 2, b having its turn from 2001 to a's return;
	// 3, b on another CPU: nobody; 4, b from 4040 to a's return, the 40 µs
	// before another program's; 5, b woken, to a's return; 6, b's 10 µs
	// (11 with the switch) and c's 100; 7, b2's 10 µs to its exit (11).
	wantOwn := []time.Duration{31 * time.Microsecond, 99 * time.Microsecond, 0, 60 * time.Microsecond, 100 * time.Microsecond, 110 * time.Microsecond, 11 * time.Microsecond}
	if !slices.Equal(own, wantOwn) {
		t.Errorf("ByOwn of a's preemptions %v, want %v", own, wantOwn)
	}
	// a's own record is never another thread's: a ring alone.
	c := ring(9)
	var hc uint64
	hc = putSwitch(c, hc, sleep, 32, 0, 1)
	hc = putSwitch(c, hc, in, 32, 10*us, 1)
	hc = putSwitch(c, hc, out, 32, 20*us, 1)
	hc = putSwitch(c, hc, in, 32, 21*us, 1)
	c.page.Data_head = hc
	r = &Recorder{}
	r.drain(c)
	r.self()
	if len(r.got) != 1 || r.got[0].ByWoken != 0 {
		t.Errorf("a lone thread's preemptions %v: want one, not by a woken thread", r.got)
	}
	// The first record of a ring says nothing of what came before: a
	// thread preempted when recording began is not woken.
	d := ring(10)
	var hd uint64
	hd = putSwitch(d, hd, in, 32, 1001*us, 1)
	d.page.Data_head = hd
	r = &Recorder{}
	ha2 := ring(7)
	var h2 uint64
	h2 = putSwitch(ha2, h2, out, 32, 1000*us, 1)
	h2 = putSwitch(ha2, h2, in, 32, 1100*us, 1)
	ha2.page.Data_head = h2
	r.drain(ha2)
	r.drain(d)
	r.self()
	if len(r.got) != 1 || r.got[0].ByWoken != 0 {
		t.Errorf("preempted by a thread whose past is unknown: %v, want not by a woken thread", r.got)
	}
}

// TestUnseenThreads: threads started while recording run unrecorded until
// the recorder finds them; Unseen is their CPU time until then, more than
// nothing and less than all they spun.
func TestUnseenThreads(t *testing.T) {
	const n, each = 16, 10 * time.Millisecond
	// Goroutines locked to their threads and parked there hold them, so
	// each of these needs a thread of its own: more than earlier tests
	// usually leave idle, so some are new ones. They end locked, which
	// ends their threads: a try that found enough idle ones to need no new
	// thread (once in about seven -race runs of the package) leaves none
	// for the next, of up to three.
	var u time.Duration
	for try := 0; try < 3 && u == 0; try++ {
		rec, err := Start()
		if err != nil {
			t.Skip("no context-switch records here:", err)
		}
		release := make(chan struct{})
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runtime.LockOSThread()
				spin(each)
				<-release
			}()
		}
		time.Sleep(each + 2*maxDrain)
		close(release)
		wg.Wait()
		if _, err := rec.Stop(); err != nil {
			t.Fatal(err)
		}
		u = rec.Unseen()
	}
	t.Logf("unseen CPU time %v of %d threads spinning %v each", u, n, each)
	if u <= 0 || u > n*each {
		t.Errorf("unseen %v, want more than none and at most the %v the threads spun", u, n*each)
	}
}

// TestStaysOver: past maxStays the preemptions are still whole and
// returned without error; only who had the CPUs is unknown.
func TestStaysOver(t *testing.T) {
	defer func(n int) { maxStays = n }(maxStays)
	maxStays = 3
	const us = int64(time.Microsecond)
	a := &switchRing{tid: 7, page: new(unix.PerfEventMmapPage), data: make([]byte, 4096), out: -1}
	var h uint64
	out, in := uint16(miscSwitchOut|miscOutPreempt), uint16(0)
	for i := range int64(5) {
		h = putSwitch(a, h, out, 32, (100*i+10)*us, 1)
		h = putSwitch(a, h, in, 32, (100*i+20)*us, 1)
	}
	a.page.Data_head = h
	r := &Recorder{rings: map[int]*switchRing{}, failed: map[int]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
	r.drain(a)
	close(r.done)
	got, err := r.Stop()
	if err != nil || len(got) != 5 || !r.OwnUnknown() {
		t.Errorf("Stop = %d preemptions, %v, own unknown %v; want all 5, no error, unknown", len(got), err, r.OwnUnknown())
	}
	for _, p := range got {
		if p.ByOwn != 0 || p.ByWoken != 0 {
			t.Errorf("%+v: nothing is known of who had the CPU", p)
		}
	}
}

func TestNextDrain(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		every time.Duration
		fill  float64
		want  time.Duration
	}{
		{5 * ms, 0, 10 * ms},
		{5 * ms, 0.05, 10 * ms},
		{5 * ms, 1.0 / 16, 5 * ms},
		{5 * ms, 0.1, 5 * ms},
		{5 * ms, 0.25, 5 * ms},
		{5 * ms, 0.3, 2500 * time.Microsecond},
		{maxDrain, 0, maxDrain},
		{minDrain, 1, minDrain},
		{30 * ms, 0.01, maxDrain},
	} {
		if got := nextDrain(c.every, c.fill); got != c.want {
			t.Errorf("nextDrain(%v, %v) = %v, want %v", c.every, c.fill, got, c.want)
		}
	}
}

// TestRingFull: where the kernel cannot count what it drops, a ring found
// with no room for its largest record (56 bytes) may have dropped records
// whose count the kernel never wrote; Stop says so. The kernel refuses a
// record of s bytes when fewer than s+1 are free, so a refused 32-byte
// switch record leaves a 4 KiB ring holding 127 of them.
func TestRingFull(t *testing.T) {
	const us = int64(time.Microsecond)
	for _, c := range []struct {
		switches, exits int
		lost            bool
	}{
		{126, 0, false}, // 64 bytes free: room for any record
		{127, 0, true},  // 32 free: a switch record was refused
		{121, 3, true},  // 56 free: an exit or fork record was refused
	} {
		a := &switchRing{tid: 7, page: new(unix.PerfEventMmapPage), data: make([]byte, 4096), out: -1}
		var h uint64
		for i := range c.switches {
			h = putSwitch(a, h, uint16(miscSwitchOut*(i%2)), 32, int64(i+1)*us, 0)
		}
		for range c.exits {
			h = putExit(a, h, int64(c.switches+1)*us)
		}
		a.page.Data_head = h
		r := &Recorder{rings: map[int]*switchRing{}, failed: map[int]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
		fill := r.drain(a)
		close(r.done)
		_, err := r.Stop()
		if want := float64(h) / 4096; (err != nil) != c.lost || fill != want {
			t.Errorf("%d switch and %d exit records in a 4 KiB ring: drain = %.4f, Stop error %v; want %.4f, an error %v", c.switches, c.exits, fill, err, want, c.lost)
		}
	}
}

// TestLostCounted: where the kernel counts what it drops (Linux 6.0),
// Stop's error gives that count even when the rings filled and were never
// drained, so that no PERF_RECORD_LOST was ever written.
func TestLostCounted(t *testing.T) {
	defer func(n int, d time.Duration) { ringPages, fixedDrain = n, d }(ringPages, fixedDrain)
	ringPages, fixedDrain = 1, time.Hour
	stopPair, tripPair := lockedPair()
	defer stopPair()
	tripPair(1)
	rec, err := Start()
	if err != nil {
		t.Skip("no context-switch records here:", err)
	}
	if !rec.countLost {
		rec.Stop()
		t.Skip("this kernel does not count dropped records (before Linux 6.0)")
	}
	tripPair(2000)
	if _, err := rec.Stop(); err == nil || rec.lostRead == 0 || rec.lost != 0 {
		t.Errorf("one-page rings never drained over 2,000 round trips: Stop = %v, %d counted by the kernel, %d in LOST records; want an error with the kernel's count", err, rec.lostRead, rec.lost)
	}
}

// lockedPair starts a goroutine locked to a thread of its own that echoes
// what the caller's (also locked) sends; trip runs n round trips, and stop
// ends the pair and unlocks the caller.
func lockedPair() (stop func(), trip func(n int)) {
	a, b := make(chan int), make(chan int)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for v := range a {
			b <- v
		}
		close(b)
	}()
	runtime.LockOSThread()
	return func() {
			close(a)
			<-b
			runtime.UnlockOSThread()
		}, func(n int) {
			for i := range n {
				a <- i
				<-b
			}
		}
}

// TestSmallRingsKeepUp: the recorder drains as often as the rings fill.
// Two locked threads hand a value back and forth at a set pace; the rings
// are sized to hold 7–14 ms of the busier thread's records at it (its
// records a trip measured first), so that
// the first 5 ms wait fits and a fixed maxDrain would not: drained every
// maxDrain, records are lost (20 ms of them in a ring that holds 14). The
// wait must have shortened; records lost must be said, and be under 5%
// unless the recorder was kept from draining, beyond the wait it chose,
// for longer than the rings hold: then no wait could have kept them, and
// the loss is the machine's (under -race at a load of 7-9, once in about
// 40 runs: a drain 30-53 ms behind rings that held 8-13 ms).
// It does not show that the wait halves in time after a quiet spell: that
// is ringPages' bound.
func TestSmallRingsKeepUp(t *testing.T) {
	timingtest.Require(t)
	stopPair, tripPair := lockedPair()
	defer stopPair()
	tripPair(1)
	// The records a round trip writes in the caller's ring, and how long
	// a trip takes.
	probe, err := Start()
	if err != nil {
		t.Skip("no context-switch records here:", err)
	}
	start := time.Now()
	tripPair(500)
	perTrip := time.Since(start) / 500
	tid := int32(unix.Gettid())
	if _, err := probe.Stop(); err != nil {
		t.Fatal(err)
	}
	in := 0
	for _, st := range probe.stays {
		if st.tid == tid {
			in++
		}
	}
	// The trips below are paced at twice the probe's time a trip: run
	// faster (the probe ran on a loaded machine, beside another package's
	// tests, at 114 µs a trip and the run then at 48) they would overflow
	// rings sized to the probe; run slower, they would not fill them.
	pace := 2 * perTrip
	// Two records a stay: its switch-in and its switch-out.
	perSec := 2 * float64(in) / 500 / pace.Seconds()
	defer func(n int) { ringPages = n }(ringPages)
	ringPages = 1
	for float64(2*ringPages*os.Getpagesize()/32) <= perSec*0.014 {
		ringPages *= 2
	}
	hold := time.Duration(float64(ringPages*os.Getpagesize()/32) / perSec * float64(time.Second))
	t.Logf("%v a round trip, paced at %v; %d stays of this thread in 500; %.0f records a second: %d-page rings hold %v", perTrip, pace, in, perSec, ringPages, hold.Round(100*time.Microsecond))
	rec, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	trips := int(200 * time.Millisecond / pace)
	// Each trip gets its own slot of pace: paced against the start of
	// the run instead, a trip late by a preemption was followed by trips
	// back to back until the run caught up, at twice the rate the rings
	// were sized for, and records were lost with every drain in time
	// (under -race at a load of 7-9: 4 of 8 failures in 150 runs, their
	// drains 1-8 ms behind rings that held 7-11 ms).
	start = time.Now()
	for range trips {
		t0 := time.Now()
		tripPair(1)
		for time.Since(t0) < pace {
		}
	}
	took := time.Since(start)
	got, err := rec.Stop()
	// The first wait is 5 ms, halved when a drain finds a ring over a
	// quarter full: rings that hold more than four such waits (one page,
	// at the slow trips of a loaded machine: 47 ms at 398 µs a trip, once
	// in 160 runs under -race beside a spinning process) need not fill a
	// quarter, and owe no shorter wait.
	if rec.shortest >= 5*time.Millisecond && hold < 4*5*time.Millisecond {
		t.Errorf("the recorder's shortest wait was %v: it did not drain more often as the rings filled", rec.shortest)
	}
	if err != nil {
		if !strings.Contains(err.Error(), "dropped") {
			t.Fatal(err)
		}
		// Two records a stay were kept; at most 5% may be lost (2.9%
		// beside another package's tests, paced: a drain late by more
		// than a small ring holds), more only when a drain was that late.
		lost := max(rec.lost, rec.lostRead)
		if kept := uint64(2 * len(rec.stays)); lost*20 > lost+kept && rec.behind < hold {
			t.Fatalf("%d round trips in %v: %v, of %d, with every drain within %v of its wait (shortest wait %v; the rings hold %v)", trips, took, err, lost+kept, rec.behind, rec.shortest, hold.Round(100*time.Microsecond))
		}
		t.Logf("%d round trips in %v: %v (shortest wait %v; a drain %v behind its wait, the rings hold %v)", trips, took, err, rec.shortest, rec.behind, hold.Round(100*time.Microsecond))
		return
	}
	if n := len(rec.stays); n < trips {
		t.Errorf("%d round trips, %d stays on a CPU recorded (%d preemptions): want at least one a trip", trips, n, len(got))
	}
}

// TestThreadExitEndsStay: the kernel writes no switch-out for a thread's
// last stay on a CPU, but an exit record (attr.task) in its ring: threads
// that end while recorded leave no stay open.
func TestThreadExitEndsStay(t *testing.T) {
	rec, err := Start()
	if err != nil {
		t.Skip("no context-switch records here:", err)
	}
	defer rec.Stop()
	const n = 8
	var wg sync.WaitGroup
	tids := make([]int32, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // and never unlocked: the thread ends with the goroutine
			tids[i] = int32(unix.Gettid())
			time.Sleep(2 * maxDrain) // found by a scan, with a ring
			spin(time.Millisecond)
		}()
	}
	wg.Wait()
	// Until they are gone from /proc, at most a second.
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		alive := 0
		for _, tid := range tids {
			if _, err := os.Stat("/proc/self/task/" + strconv.Itoa(int(tid))); err == nil {
				alive++
			}
		}
		if alive == 0 {
			break
		}
	}
	// The stays as recorded, before Stop's cut at the next stay on the
	// CPU, read where they are kept: gathering them now would leave the
	// rings of threads still on a CPU pointing into freed memory.
	var stays, open, ringed int
	rec.mu.Lock()
	rec.drainAll()
	for i := range rec.staysOff.len() {
		if s := rec.staysOff.at(i); slices.Contains(tids, s.tid) {
			stays++
			if s.until == math.MaxInt64 {
				open++
			}
		}
	}
	// An ended thread's ring is closed once its exit record is read: it
	// would hold a mapping and a file descriptor to the end, and hide a
	// new thread that reuses the id. (A goroutine that ran on the main
	// thread leaves it alive: the runtime cannot end that one.)
	var ended int
	for _, tid := range tids {
		if _, err := os.Stat("/proc/self/task/" + strconv.Itoa(int(tid))); err == nil {
			continue
		}
		ended++
		if rec.rings[int(tid)] != nil {
			ringed++
		}
	}
	rec.mu.Unlock()
	if stays == 0 {
		t.Fatal("no stays of the ended threads recorded")
	}
	if open > 0 {
		t.Errorf("%d of the ended threads' %d stays left open", open, stays)
	}
	switch {
	case ended == 0:
		t.Error("none of the threads ended: the rings' closing is not tested")
	case ringed > 0:
		t.Errorf("%d of the %d ended threads still have a ring", ringed, ended)
	}
}

// spinThreads hashes for d on n threads at once, each locked to its
// goroutine.
func spinThreads(n int, d time.Duration) {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			spin(d)
		}()
	}
	wg.Wait()
}

// spin hashes for d.
func spin(d time.Duration) {
	buf := make([]byte, 4096)
	for end := time.Now().Add(d); time.Now().Before(end); {
		sha256.Sum256(buf)
	}
}

// TestRecordedCPUs holds the records' layout against the kernel's: every
// CPU read from them is one this process may run on. Two threads spin
// beside three other processes on the cores, so the kernel preempts them.
func TestRecordedCPUs(t *testing.T) {
	rec, err := Start()
	if err != nil {
		t.Skip("no context-switch records here:", err)
	}
	for range 3 {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			rec.Stop()
			t.Skip("cannot start a CPU hog:", err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}
	spinThreads(2, 300*time.Millisecond)
	pre, err := rec.Stop()
	if err != nil {
		// Some records lost under load: those read still hold.
		t.Log(err)
	}
	if len(pre) == 0 {
		t.Skip("no thread was preempted beside three spinning processes")
	}
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		t.Fatal(err)
	}
	if len(rec.cpus) != len(pre) {
		t.Fatalf("%d CPUs for %d preemptions", len(rec.cpus), len(pre))
	}
	for _, c := range rec.cpus {
		if !allowed.IsSet(int(c)) {
			t.Fatalf("a record says CPU %d, not one of the %d this process runs on: the record's layout is misread", c, allowed.Count())
		}
	}
}

// TestStartProcess records a child's preemptions: a shell spinning on a
// CPU beside as many spinning threads of this process as there are CPUs,
// so the kernel preempts it. Every interval is the child's thread's, and
// some of the time the child was preempted another program (this one)
// had its CPU.
func TestStartProcess(t *testing.T) {
	if _, err := StartProcess(0); err == nil {
		t.Error("StartProcess(0) did not fail")
	}
	child := exec.Command("sh", "-c", "while :; do :; done")
	if err := child.Start(); err != nil {
		t.Skipf("no shell to spin: %v", err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	r, err := StartProcess(child.Process.Pid)
	if err != nil {
		t.Skipf("the kernel will not record the child's switches: %v", err)
	}
	spinThreads(runtime.NumCPU(), 300*time.Millisecond)
	got, err := r.Stop()
	if err != nil {
		t.Fatalf("Stop: %v", err)
	}
	var d, own time.Duration
	for _, p := range got {
		if p.TID != int64(child.Process.Pid) {
			t.Errorf("a preemption of thread %d, not the child's %d", p.TID, child.Process.Pid)
		}
		d += time.Duration(p.To - p.From)
		own += p.ByOwn
	}
	t.Logf("%d preemptions of the child, %v in all, %v of it by its own threads", len(got), d, own)
	if len(got) == 0 {
		t.Error("no preemption of a spinning child beside a spinning thread on every CPU")
	}
	if own > d/10 {
		t.Errorf("%v of %v by the child's own threads: it has one; this process's threads had the CPU", own, d)
	}
}
