package wallclock

// The critical path across goroutines (issue 22).
//
// A counted goroutine that hands its work to goroutines it starts (a
// WaitGroup fan-out, an errgroup) or feeds (a pool reading a channel) and
// waits for them is blocked for most of the operation: counting only the
// counted goroutines, a fan-out of hashing read "wait 92%". The trace says
// who woke whom — the state transition that makes a waiting goroutine
// runnable is emitted on the goroutine that woke it — so a wait that a
// helper ended is charged to what the helpers were doing meanwhile, with
// their own categories (work, lock, sched...), recursively: a helper's own
// wait for its helpers is resolved the same way when it ends.
//
// Helpers are the goroutines that counted goroutines (or helpers) created
// while traced, or that a counted goroutine woke (sent a job to a pool
// goroutine parked on its channel, say): such a goroutine is fed by the
// operation. A goroutine the operation never started nor woke is outside
// it: a wait it ends stays wait, as does a wait a timer or the network
// poller ends (no goroutine wakes those). Only waits are resolved: a lock's
// wait stays lock whoever held the lock, for the lock is the cause.
//
// While several helpers run during one wait (two halves hashed in
// parallel), each instant of the wait goes to the helpers busy then: those
// running, split equally, or, where none is, all of them, split equally.
// The alternative, the last helper to wake the waiter (the classic critical
// path), charged the time the last one waited for a P after its creation
// to sched while its sibling hashed; see splitParallel for the measurement.
// After the wake-up the waiter is runnable: that time is the helpers' too
// while one of them still runs when the waiter gets a CPU (a pool's
// goroutine gone on to the next job), else the waiter's own (see resolve).
//
// Running time of helpers charged to a wait is split by their CPU samples
// taken within it (chargedSamples), as a counted goroutine's is by its
// own: the trace cannot say what a goroutine ran in a given microsecond.
// The kernel's preemption of a helper's thread while it ran (Options.Sched
// with its preempted intervals) is that helper's wait for a CPU: sched, at
// the stacks its samples say it ran, as a counted goroutine's is, or at
// none where the helper had not begun (see helperPreempted).
//
// Limits, measured in the truth suite (internal/truth; runner.Judge marks them): a shared
// pool's goroutine serves several workers, and no event says whose job it
// took from a buffered channel; the helpers' non-work CPU (channel
// operations, the tracer's own events) is spread over their whole running
// time though it mostly runs beside a sibling's work. Without the kernel's
// preempted intervals a helper's wait for a CPU stays its running (the
// per-thread estimate covers counted goroutines only).

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/profiles"
	"golang.org/x/exp/trace"
)

// splitParallel chooses how a wait is split between helpers that run at
// once: true, among those busy at each instant; false, all of it to the
// last one to wake the waiter (the classic critical path). Measured on the
// truth suite's fan-out classes (internal/truth: fanout-wg, fanout-chan and
// pool-chan at one and two workers; the workers time the union of their
// helpers' hashing), on the shared 2-core VM at load 10–13: split, work
// read 73–84 against a truth of 64–83, every case within 5 points; last
// waker, 51–65 against 72–83, 9 to 26 points low, with 26–40 points of
// sched — the last helper's wait for a P after its creation, while its
// sibling hashed. A stopwatch says the operation was hashing then.
const splitParallel = true

// maxPieces bounds the timeline kept of one helper: a helper nobody waits
// for (started and forgotten) must not grow memory with the trace.
const maxPieces = 1024

// maxStamps bounds the timed CPU samples kept of one helper over the
// trace (100 KB): pieces share them, so a helper nobody waits for, with
// maxPieces pieces, must not hold a thousand times that. 4096 samples are
// 41 s of its CPU, far beyond a profiling window's; past them its charged
// running is split by the samples of its function (see addHelped).
const maxStamps = 4096

// maxSiblings bounds the helpers one wait is split among.
const maxSiblings = 64

// piece is an interval of a helper's time: running (split by its CPU
// samples within the part charged, see addHelped), or off the CPU at a
// key. Weight is the share of each instant the piece stands for: 1
// for a helper's own time, less where a resolved wait split an instant
// among several helpers.
type piece struct {
	from, to trace.Time
	weight   float64
	run      bool
	// os says a piece is a wait of its thread for a CPU while running
	// to Go (the kernel preempted it), own the share of it another
	// thread of the process had the CPU: sched, split as running time is
	// where run, else at k (helperPreempted).
	os  bool
	own float64
	// owner is the counted goroutine whose job the piece was part of,
	// once the helper woke it (see owned); nil until then.
	owner *gor
	root  string // running: the helper's function, whose samples split it
	k     key    // off the CPU; k.via says through which waits
	// samples are the helper's CPU samples taken while it ran this
	// piece (running only): those within [from, to) say what the
	// charged part of it ran. A clipped piece keeps the whole slice.
	samples []stamp
}

// stamp is a CPU sample of a helper and when it was taken.
type stamp struct {
	t trace.Time
	s trace.Stack
}

// via is one waiting frame of a chain: the stack a goroutine waited at,
// and the chain of waits inside it (nested helpers), 0 for none.
type via struct {
	stack trace.Stack
	inner int32
}

// helpKey is running time of helpers with function root, reached through
// the chain via.
type helpKey struct {
	via  int32
	root string
}

// viaID interns a chain: the wait at stack, with inner inside it.
func (a *accountant) viaID(stack trace.Stack, inner int32) int32 {
	if a.viaIDs == nil {
		a.viaIDs = map[via]int32{}
		a.vias = []via{{}} // 0 is no chain
	}
	v := via{stack, inner}
	if id, ok := a.viaIDs[v]; ok {
		return id
	}
	if len(a.vias) >= maxStackKeys {
		return inner // keep the time, lose this level's stack
	}
	id := int32(len(a.vias))
	a.vias = append(a.vias, v)
	a.viaIDs[v] = id
	return id
}

// created notes that goroutine g was created by goroutine c: a helper of
// the operation if c is counted or a helper.
func (a *accountant) created(g, c *gor, start trace.Stack) {
	if !a.follows() || c == nil || g.counted || !(c.counted || c.helper) {
		return
	}
	root, _ := rootFunc(start)
	if SystemGoroutine(root) {
		return // the collector's mark workers, started by an allocation
	}
	if a.all && hasPrefix(root, a.roots) {
		return // counted itself (a benchmark's RunParallel goroutines)
	}
	g.helper, g.parent, g.root = true, c, root
	c.children = append(c.children, g)
}

// fed notes that running goroutine w woke waiting goroutine g: g works for
// the operation from now on if w is counted (a job sent to a pool).
func (a *accountant) fed(g, w *gor) {
	if !a.follows() || g.counted || !w.counted {
		return
	}
	if !g.helper {
		if g.root == "" {
			g.root, _ = rootFunc(g.blockStack)
		}
		if SystemGoroutine(g.root) {
			return // the runtime's (a sweeper an allocation woke)
		}
		g.helper = true
	}
	if g.parent != w {
		if g.parent != nil && g.parent.counted {
			g.shared = true // a second worker feeds it
		}
		g.parent = w
		w.children = append(w.children, g)
	}
}

// help records a helper's time from g.since to now (flush calls it before
// moving the clock): a piece of its timeline, except a wait, which is
// recorded when it ends (woken) since a helper may end it.
func (a *accountant) help(g *gor, from, to trace.Time) {
	if g.state != trace.GoRunning {
		g.osUntil = 0 // off its thread: a preemption recorded past it was the clocks' skew
	}
	switch g.state {
	case trace.GoRunning:
		if g.osUntil > from {
			// Its thread was preempted from the start of this time.
			os := min(to, g.osUntil)
			p := piece{from: from, to: os, weight: 1, run: true, os: true, own: g.osOwn, root: g.root}
			if g.osStart {
				p.run, p.k = false, key{frame: profiles.StateFrame(profiles.Sched, osStartState), state: Runnable}
			}
			g.addPiece(p)
			if from = os; g.osUntil <= to {
				g.osUntil = 0
			}
		}
		g.addPiece(piece{from: from, to: to, weight: 1, run: true, root: g.root, samples: g.runSamples})
		g.runSamples = nil
	case trace.GoRunnable, trace.GoSyscall:
		if g.state == trace.GoRunnable && g.wakeOpen {
			return // resolved when it runs
		}
		g.addPiece(piece{from: from, to: to, weight: 1, k: key{frame: g.offFrame, state: g.offState, stack: g.offStack}})
	case trace.GoWaiting:
		if g.blockCat != profiles.Wait || !g.waitOpen {
			g.addPiece(piece{from: from, to: to, weight: 1, k: key{frame: g.offFrame, state: g.offState, stack: g.offStack}})
		}
	}
}

func (g *gor) addPiece(p piece) {
	if p.to <= p.from {
		return
	}
	if len(g.pieces) >= maxPieces {
		g.pieces = slices.Delete(g.pieces, 0, maxPieces/2)
	}
	g.pieces = append(g.pieces, p)
}

// startWindow is how soon after a goroutine begins to run a preemption of
// its thread is taken to come before it ran anything of its own. Go's
// scheduler, having found a goroutine to run on a spinning thread, wakes
// another thread (wakep), and the kernel often gives the CPU to that one
// at once. The truth suite's fanout-wg at two goroutines beside a spinning
// process (2-core VM): of 1827 preemptions of helpers' threads, 496 began
// 1–2 µs after the helper began to run, 65 in 2–5 µs, 42 in 5–20 µs and
// 1224 later; those within 5 µs held 1.04 of the 1.33 s preempted (0.67
// with another thread of the process on the CPU), none shorter than a
// millisecond. The helpers' hashing, timed with their threads' CPU
// clocks, had 2.2% of its wall time off a CPU; spread over the helpers'
// samples as running time is, the preemptions read 30 points of sched
// of work.
const startWindow = 5 * time.Microsecond

// helperPreempted notes that the kernel preempted the thread of running
// helper g over p: its running time so far is a piece of its own (with the
// samples taken in it), and the next, up to p's end, its wait for a CPU.
// Left as running, a fan-out's helpers beside a spinning process read their
// wait for a CPU as work, where a counted goroutine's is sched. Where the
// preemption began as the helper began to run (startWindow) it had run
// nothing: its wait is sched at no stack, as its wait for a P to start is.
func (a *accountant) helperPreempted(g *gor, p Preemption) {
	from, to := trace.Time(p.From-a.monoLead), trace.Time(p.To-a.monoLead)
	if to <= from || to <= g.since {
		return
	}
	from = max(from, g.since)
	a.flush(g, from)
	g.osUntil, g.osStart = to, from.Sub(g.ranAt) < startWindow
	g.osOwn = 0
	if d := p.To - p.From; d > 0 {
		g.osOwn = min(1, max(0, float64(p.ByOwn)/float64(d)))
	}
}

// woken ends g's wait at now. A wait (not a lock's) of a counted goroutine
// or a helper that a helper w ended is resolved once g runs again (see
// resolve): until then it waits for a CPU that, often, its helpers hold
// (a pool's goroutine that woke it goes on to the next job on the P it
// queued g on). Any other wait is charged to g's own frame, as ever:
// flush has put the time in g's totals and, for a counted goroutine, kept
// it off the profile until now (g.waitPend).
func (a *accountant) woken(g, w *gor, now trace.Time, to trace.GoState) {
	if w != nil && w.helper && !w.counted && g.counted && to == trace.GoRunnable && g.blockCat == profiles.Wait && handOver(w.wokeAt) {
		// (An Unlock that wakes a worker says nothing of whose work
		// the helper did; nor does a close, a Broadcast or a Done
		// that wakes every waiter: see handOver.)
		a.owned(w, g, now)
	} else if w != nil && w.counted && g.helper && !g.counted && to == trace.GoRunnable && g.blockWhy == chanSend {
		// A worker took the result a helper was sending, the hand-over
		// the other way round: a shared pool's result waits in its
		// send when its worker is not yet waiting for it. Left
		// unowned, that job went to the next worker the pool woke,
		// taking its job from its send.
		a.owned(g, w, now)
	}
	if !g.waitOpen {
		return
	}
	g.waitOpen = false
	if g.counted && w != nil && w.helper && !w.counted && w.parent != nil && w.parent != g && w.parent.counted {
		// A helper another worker fed answers this one: a shared pool.
		// (Fed only counts wake-ups of a parked helper; a busy pool
		// goroutine takes the next job from a waiting sender and is
		// never woken by it.)
		w.shared = true
	}
	if g.blockCat == profiles.Wait && (g.counted || g.helper) && w != nil && w.helper && !w.counted &&
		!g.starting && to == trace.GoRunnable {
		g.wakeOpen, g.waker, g.wakeAt, g.wakePend = true, w, now, 0
		return
	}
	delete(a.open, g)
	own := key{frame: g.offFrame, state: Blocked, stack: g.offStack}
	if g.counted {
		a.ownTime(g, own, g.waitPend)
	} else if g.helper && g.blockCat == profiles.Wait {
		g.addPiece(piece{from: g.blockFrom, to: now, weight: 1, k: own})
	}
	g.waitPend = 0
}

// handOver reports whether a wake-up at stack s hands one value to the
// goroutine woken: a channel send (runtime.chansend1, a select's send).
// A close, a Cond's Broadcast, a WaitGroup's last Done wake every waiter
// with the one result, and the first woken must not take the helper's
// work from the others (their wait stayed wait: 10.2 of 20.2 µs charged
// in review6's replay of a close two workers waited on). A wake-up
// without a stack is taken for a hand-over, as before the stack was read.
func handOver(s trace.Stack) bool {
	if s == trace.NoStack {
		return true
	}
	for f := range s.Frames() {
		return strings.HasPrefix(f.Func, "runtime.chansend") || f.Func == "runtime.selectgo" || f.Func == "runtime.selectnbsend"
	}
	return false
}

// chanSend is the trace's reason for a goroutine blocked in a channel send.
const chanSend = "chan send"

// owned gives counted goroutine g, which helper w woke at now (or which
// took w's result from its send), w's pieces since its last such
// hand-over: a pool's goroutine hands a job's result to the worker whose
// job it was, so what it did since the last result it handed over was
// that job. split leaves a piece owned by another goroutine out of a
// wait: a pool shared by two workers hashes one's job while the other
// waits in the queue, which that one's stopwatch calls wait. Where a
// result goes into a channel's buffer, no goroutine is woken and the
// job's pieces go to the next one woken: a guess, still marked
// (SharedHelped). A helper that wakes several workers with one result (a
// close, a Cond's Broadcast, a WaitGroup several wait on) gives it to the
// first it wakes; the others' waits stay wait. The trace cannot tell that
// from a pool's next job by time: a close's wake-ups came 0.1–30 µs
// apart on the loaded 2-core VM; the truth suite's pool jobs take about
// 6 µs (see truth.clockEvery).
func (a *accountant) owned(w, g *gor, now trace.Time) {
	a.flush(w, now)
	for i := len(w.pieces) - 1; i >= 0 && w.pieces[i].owner == nil; i-- {
		w.pieces[i].owner = g
	}
}

// resolve charges g's wait, from g.blockFrom until now (it runs, or
// stops being runnable), to what its helpers did meanwhile: the waker's
// timeline and, with splitParallel, its other helpers'. What no helper
// covers stays g's own: blocked before the wake-up, runnable after.
func (a *accountant) resolve(g *gor, now trace.Time) {
	defer delete(a.open, g)
	from, woke, w := g.blockFrom, g.wakeAt, g.waker
	blocked := key{frame: g.blockFrame, state: Blocked, stack: g.blockStack}
	runnable := key{frame: g.offFrame, state: Runnable, stack: g.offStack}
	pendB, pendR := g.waitPend, g.wakePend
	g.wakeOpen, g.waker, g.waitPend, g.wakePend = false, nil, 0, 0
	// Every line split reads up to now.
	a.flush(w, now)
	busy := w.state == trace.GoRunning
	for _, c := range g.children {
		a.flush(c, now)
		busy = busy || c.parent == g && c.state == trace.GoRunning
	}
	// Runnable after the wake-up, g waited for a CPU. While a helper
	// still runs when g gets one (a pool's goroutine gone on to the next
	// job on the P it queued g on), that was the helpers' time; if they
	// had all stopped (a fan-out's helper exits after its Done), it was
	// g's own wait for the scheduler: the helper's exit is not its work,
	// though the samples its running time is spread over are mostly work.
	end := now
	if !busy {
		end = woke
	}
	// A shared pool's goroutine that handed g its result (owned) goes on
	// to its next job, another worker's (g, runnable, has sent none):
	// charged here too, that job was charged to both once its worker
	// was answered. TestCriticalSharedPool, on a loaded machine where a
	// woken worker waits long for a thread, read up to 287 ms of the
	// pool's running for the 260 ms it ran (TestHelperAfterWake). A
	// goroutine woken from a send had its value taken, a job the waker
	// goes on with; a helper only g feeds goes on with g's work.
	wEnd := end
	if g.counted && w.shared && g.blockWhy != chanSend {
		wEnd = min(end, woke)
	}
	out := a.split(g, w, from, end, wEnd)
	if g.counted {
		// What the helpers did is charged at their stacks under g's
		// waiting one; the rest (no helper was there: before the first
		// started, after the last ended) at g's own frames.
		var gotB, gotR time.Duration
		for _, p := range out {
			before := time.Duration(float64(max(0, min(p.to, woke).Sub(p.from))) * p.weight)
			after := time.Duration(float64(max(0, p.to.Sub(max(p.from, woke)))) * p.weight)
			before, after = min(before, pendB-gotB), min(after, pendR-gotR)
			gotB += before
			gotR += after
			d := before + after
			if p.os {
				a.res.HelpedOSWait += d
				a.res.HelpedOSOwn += time.Duration(float64(d) * p.own)
			}
			if p.run {
				if a.helpRun == nil {
					a.helpRun = map[helpKey]time.Duration{}
				}
				hk := helpKey{a.viaID(g.blockStack, p.k.via), p.root}
				a.res.HelpedRunning += d
				if p.os {
					if a.helpOS == nil {
						a.helpOS = map[helpKey][2]time.Duration{}
					}
					own := time.Duration(float64(d) * p.own)
					os := a.helpOS[hk]
					os[0], os[1] = os[0]+d-own, os[1]+own
					a.helpOS[hk] = os
					a.helpRun[hk] += 0 // a key addHelped visits
				} else {
					a.helpRun[hk] += d
					a.chargedSamples(hk, p)
				}
			} else {
				k := p.k
				k.via = a.viaID(g.blockStack, k.via)
				a.offTime(k, d)
			}
		}
		a.res.Helped += gotB + gotR
		if w.shared {
			a.res.SharedHelped += gotB + gotR
		}
		a.ownTime(g, blocked, pendB-gotB)
		a.ownTime(g, runnable, pendR-gotR)
	} else {
		// A helper's resolved wait becomes pieces of its own timeline,
		// through its waiting stack; the gaps are its own.
		gap := func(lo, hi trace.Time) {
			if lo < woke {
				g.addPiece(piece{from: lo, to: min(hi, woke), weight: 1, k: blocked})
			}
			if hi > woke {
				g.addPiece(piece{from: max(lo, woke), to: hi, weight: 1, k: runnable})
			}
		}
		at := from
		for _, p := range out {
			if p.from > at {
				gap(at, p.from)
			}
			at = max(at, p.to)
			p.k.via = a.viaID(g.blockStack, p.k.via)
			g.addPiece(p)
		}
		if now > at {
			gap(at, now)
		}
	}
	// What the helpers did before every wait still open began can serve
	// none: a pool's goroutines serve several workers whose waits overlap,
	// so what one used the next may need too.
	delete(a.open, g)
	horizon := now
	for o := range a.open {
		horizon = min(horizon, o.blockFrom)
	}
	for _, c := range g.children {
		c.trim(horizon)
	}
	g.children = slices.DeleteFunc(g.children, func(c *gor) bool {
		return c.parent != g || c.state == trace.GoNotExist && len(c.pieces) == 0
	})
	w.trim(horizon)
}

// opened notes that g began a wait that helpers may end: g is counted, or
// a helper with helpers of its own. (A pool's goroutine idle on its
// channel is a helper whose wait no helper ends: it must not hold every
// other helper's timeline back for as long as it idles.)
func (a *accountant) opened(g *gor) {
	if !(g.counted || g.helper && len(g.children) > 0) || !a.follows() {
		return
	}
	if a.open == nil {
		a.open = map[*gor]struct{}{}
	}
	a.open[g] = struct{}{}
}

// trim drops the pieces that end by t.
func (g *gor) trim(t trace.Time) {
	i := 0
	for i < len(g.pieces) && g.pieces[i].to <= t {
		i++
	}
	g.pieces = slices.Delete(g.pieces, 0, i)
}

// split returns what the helpers did over [from, to): the waker's pieces
// up to wTo, and with splitParallel its siblings' (g's other helpers),
// each instant to the running ones, or to all where none runs. The
// pieces returned are in time order and do not overlap but for their
// weights, which add up to at most 1 at any instant; where none covers
// an instant, no helper was there.
func (a *accountant) split(g, w *gor, from, to, wTo trace.Time) []piece {
	// The buffers are the accountant's, reused: a fan-out resolves a wait
	// per operation, hundreds of thousands a window, and the result is
	// used before the next call.
	buf, bounds := clip(a.sp.clip[:0], w.pieces, g, from, min(to, wTo)), a.sp.bounds[:0]
	bounds = append(bounds, len(buf))
	if splitParallel {
		for _, c := range g.children {
			if c != w && c.parent == g && len(bounds) < maxSiblings {
				n := len(buf)
				if buf = clip(buf, c.pieces, g, from, to); len(buf) > n {
					bounds = append(bounds, len(buf))
				}
			}
		}
	}
	a.sp.clip, a.sp.bounds = buf, bounds
	if len(bounds) == 1 {
		return buf
	}
	lines := a.sp.lines[:0]
	start := 0
	for _, end := range bounds {
		lines = append(lines, buf[start:end])
		start = end
	}
	cuts := a.sp.cuts[:0]
	for _, p := range buf {
		cuts = append(cuts, p.from, p.to)
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	out := a.sp.out[:0]
	next := a.sp.next[:0] // the first piece of each line not yet behind
	for range lines {
		next = append(next, 0)
	}
	active := a.sp.active[:0]
	for i := 0; i+1 < len(cuts); i++ {
		lo, hi := cuts[i], cuts[i+1]
		active = active[:0]
		running := false
		for j, l := range lines {
			for next[j] < len(l) && l[next[j]].to <= lo {
				next[j]++
			}
			for k := next[j]; k < len(l) && l[k].from <= lo; k++ {
				if l[k].to >= hi {
					active = append(active, l[k])
					running = running || l[k].run
				}
			}
		}
		var sum float64
		for _, p := range active {
			if p.run || !running {
				sum += p.weight
			}
		}
		if sum <= 0 {
			continue
		}
		for _, p := range active {
			if p.run || !running {
				p.from, p.to = lo, hi
				p.weight /= sum
				out = append(out, p)
			}
		}
	}
	a.sp.lines, a.sp.cuts, a.sp.out, a.sp.next, a.sp.active = lines, cuts, out, next, active
	return out
}

// splitBufs are split's buffers, kept between calls.
type splitBufs struct {
	clip, out, active []piece
	bounds, next      []int
	lines             [][]piece
	cuts              []trace.Time
}

// clip appends the parts of ps within [from, to) to dst, but for those
// another goroutine than g owns (owned).
func clip(dst, ps []piece, g *gor, from, to trace.Time) []piece {
	for _, p := range ps {
		if p.to <= from || p.from >= to || p.owner != nil && p.owner != g {
			continue
		}
		p.from, p.to = max(p.from, from), min(p.to, to)
		dst = append(dst, p)
	}
	return dst
}

// junctionState is the frame text between a waiting goroutine's stack and
// the stacks of the helpers its wait is charged to.
const junctionState = "in goroutines it waited for"

// chain returns the profile locations of a via chain, innermost wait
// first (so that, after a helper's stack, the frames read leaf to root),
// each waiting stack under a junction frame of category c.
func (b *builder) chain(a *accountant, id int32, c profiles.Category) []trace.StackFrame {
	if id <= 0 || int(id) >= len(a.vias) {
		return nil
	}
	var levels []trace.Stack
	for ; id > 0; id = a.vias[id].inner {
		levels = append(levels, a.vias[id].stack)
	}
	var out []trace.StackFrame
	j := trace.StackFrame{Func: profiles.StateFrame(c, junctionState)}
	for i := len(levels) - 1; i >= 0; i-- {
		out = append(out, j)
		for f := range levels[i].Frames() {
			out = append(out, f)
		}
	}
	return out
}

// addHelped adds the helpers' time to the profile: their running time
// split by their CPU samples within it (else by those of the helpers with
// the same function, else by those charged through the same waits), their
// off-CPU time at their state frames, each under the waiting stacks.
func (b *builder) addHelped(a *accountant) {
	keys := make([]helpKey, 0, len(a.helpRun))
	for k := range a.helpRun {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y helpKey) int {
		if x.via != y.via {
			return int(x.via - y.via)
		}
		if x.root < y.root {
			return -1
		}
		if x.root > y.root {
			return 1
		}
		return 0
	})
	// HelperSamples is the samples within the charged time, each at its
	// share, summed once and then rounded: a fallback pool's samples are
	// counted already (the same waits') or were not taken within the
	// charged time, and rounded per key, a fan-out's keys of a third of
	// a sample each counted none.
	var charged float64
	sampled := false
	var byVia map[int32]map[trace.Stack]float64
	for _, hk := range keys {
		d := a.helpRun[hk]
		// The samples taken within the time charged say what it ran;
		// where none fell there (a short wait), all the samples of the
		// helpers with its function do.
		pool := a.helpSamples[hk]
		var n float64
		for _, c := range pool {
			n += c
		}
		charged += n
		if n == 0 {
			pool = map[trace.Stack]float64{}
			for s, c := range a.helperSamples[hk.root] {
				pool[s] = float64(c)
				n += float64(c)
			}
		}
		if n == 0 {
			// A helper whose function is unknown (see learnRoot): the
			// samples of the helpers charged through the same waits,
			// pooled once a chain (a pass over every key for each key
			// would be quadratic in a hostile trace's wait stacks).
			if byVia == nil {
				byVia = map[int32]map[trace.Stack]float64{}
				for k, m := range a.helpSamples {
					v := byVia[k.via]
					if v == nil {
						v = map[trace.Stack]float64{}
						byVia[k.via] = v
					}
					for s, c := range m {
						v[s] += c
					}
				}
			}
			pool = byVia[hk.via]
			for _, c := range pool {
				n += c
			}
		}
		// The helpers' wait for a CPU while running (helperPreempted):
		// another program's, then the process's own threads'.
		os := a.helpOS[hk]
		osStates := [2]string{a.osOtherState(), osOwnState}
		if n == 0 {
			f := profiles.StateFrame(profiles.Other, "running, no CPU samples")
			b.addFrames(int64(d), Blocked, append([]trace.StackFrame{{Func: f}}, b.chain(a, hk.via, profiles.Other)...), nil)
			for j, od := range os {
				f := profiles.StateFrame(profiles.Sched, osStates[j])
				b.addFrames(int64(od), Runnable, append([]trace.StackFrame{{Func: f}}, b.chain(a, hk.via, profiles.Sched)...), nil)
			}
			continue
		}
		sampled = sampled || d > 0 || os[0]+os[1] > 0
		var given [3]int64
		i := 0
		for s, c := range pool {
			i++
			cat := a.rules.Classify(names(s))
			frames, tail := stackFrames(s), b.chain(a, hk.via, cat)
			for j, total := range [3]time.Duration{d, os[0], os[1]} {
				v := int64(float64(total) * c / n)
				if i == len(pool) {
					v = int64(total) - given[j]
				}
				given[j] += v
				if j == 0 {
					b.addFrames(v, Blocked, frames, tail)
					continue
				}
				// A preemption's category at that stack, as a counted
				// goroutine's OS wait has (see build).
				f := trace.StackFrame{Func: profiles.StateFrame(a.category(s, "", true), osStates[j-1])}
				b.addFrames(v, Runnable, append([]trace.StackFrame{f}, frames...), tail)
			}
		}
	}
	// At least 1 where samples split it at all: 0 says the profiler was
	// off (runner.BudgetErr then gives the split no error).
	a.res.HelperSamples = int(math.Round(charged))
	if a.res.HelperSamples == 0 && sampled {
		a.res.HelperSamples = 1
	}
}

// stackFrames returns a trace stack's frames, leaf first, without the
// runtime.goexit a CPU sample's stack ends in (see builder.add).
func stackFrames(s trace.Stack) []trace.StackFrame {
	var out []trace.StackFrame
	for f := range s.Frames() {
		out = append(out, f)
	}
	if n := len(out); n > 0 && out[n-1].Func == "runtime.goexit" {
		out = out[:n-1]
	}
	return out
}

// addFrames adds a sample of frames then tail, leaf first, labelled with
// state st and, the helpers' time being what it is, helped.
func (b *builder) addFrames(v int64, st State, frames, tail []trace.StackFrame) {
	if v <= 0 {
		return
	}
	locs := make([]*profile.Location, 0, len(frames)+len(tail))
	for _, f := range frames {
		locs = append(locs, b.loc(f))
	}
	for _, f := range tail {
		locs = append(locs, b.loc(f))
	}
	b.p.Sample = append(b.p.Sample, &profile.Sample{
		Location: locs,
		Value:    []int64{v},
		Label:    map[string][]string{"state": {st.String()}, "helped": {"true"}},
	})
}

// learnRoot sets a helper's function to root, a stack's root function, if
// not known: a pool's goroutine parked since before the trace began, then
// fed, has no stack to say it until it blocks again or is sampled. Its
// running pieces so far get it too, for the samples of the helpers with
// that function are what split a piece none of whose own samples was
// charged. (Left at "", they read "[other] running, no CPU samples": 6% of
// the truth suite's pool-chan at one worker, whose slices each begin with
// the pool parked.) A root of the runtime's says the goroutine was never
// the operation's (the sweeper, parked since before the trace, that a
// worker's mark termination readied: fed checks the root only where the
// wait's stack says it), so it stops being a helper.
func (a *accountant) learnRoot(g *gor, root string) {
	if g.root != "" || root == "" {
		return
	}
	g.root = root
	if SystemGoroutine(root) {
		// (fed sees its root now, and leaves it out if woken again.)
		g.helper, g.parent, g.pieces, g.runSamples = false, nil, nil, nil
		return
	}
	for i := range g.pieces {
		if p := &g.pieces[i]; p.run && p.root == "" {
			p.root = root
		}
	}
}

// stateRoot is the root function a state transition's stack says, or ""
// where it does not (none, cut at the tracer's depth, a pseudo frame).
func stateRoot(s trace.Stack) string {
	if s == trace.NoStack {
		return ""
	}
	root, n := rootFunc(s)
	if n == 0 || n >= maxTraceDepth || pseudoFrame(root) {
		return ""
	}
	return root
}

// chargedSamples adds the samples of running piece p, charged to a wait
// through key hk, to hk's pool, each at the share of its instant p stands
// for. A CPU sample falls at a random point of its thread's CPU time, so
// those within the charged pieces split the charged running time without
// bias, where all of a helper's samples would also split what it ran
// after the wake-up: a fan-out helper's last Done wakes the waiter, then
// wakes an idle P's thread (a futex call of some microseconds on a VM)
// and exits, none of it charged to the wait. Spread over every sample,
// that read a quiet fan-out of hashing at one worker as work 44.6 against
// its helpers' own stopwatches' 57.5 (internal/truth, fanout-wg).
func (a *accountant) chargedSamples(hk helpKey, p piece) {
	var m map[trace.Stack]float64
	for _, st := range p.samples {
		if st.t < p.from || st.t >= p.to {
			continue
		}
		if m == nil {
			if a.helpSamples == nil {
				a.helpSamples = map[helpKey]map[trace.Stack]float64{}
			}
			if m = a.helpSamples[hk]; m == nil {
				if len(a.helpSamples) >= maxStackKeys {
					return
				}
				m = map[trace.Stack]float64{}
				a.helpSamples[hk] = m
			}
		}
		if _, ok := m[st.s]; ok || len(m) < maxStackKeys {
			m[st.s] += p.weight
		}
	}
}

// helperSample counts a CPU sample of running helper g, by its function,
// and keeps it, timed, for the piece of g's timeline it falls in.
func (a *accountant) helperSample(g *gor, t trace.Time, s trace.Stack) {
	// A CPU sample's stack says its root only where the profiler unwound
	// it whole (sampleRoot): one that stopped short (at racecall,
	// time.now) would name a leaf function the root.
	if root, ok := sampleRoot(s); ok {
		a.learnRoot(g, root)
	}
	if !g.helper {
		return // the runtime's (learnRoot)
	}
	if g.stamped < maxStamps {
		g.runSamples = append(g.runSamples, stamp{t, s})
		g.stamped++
	}
	if g.root == "" {
		return
	}
	if a.helperSamples == nil {
		a.helperSamples = map[string]map[trace.Stack]int{}
	}
	m := a.helperSamples[g.root]
	if m == nil {
		if len(a.helperSamples) >= maxStackKeys {
			return
		}
		m = map[trace.Stack]int{}
		a.helperSamples[g.root] = m
	}
	if _, ok := m[s]; ok || len(m) < maxStackKeys {
		m[s]++
	}
}
