package truth

import (
	"errors"
	"fmt"
	"slices"
)

// Truth is what a case's workers measured of themselves during a
// recording, as shares of their goroutine time. The shares add up to 1.
type Truth struct {
	// The shares, if neither the collector nor the kernel took a CPU
	// from a worker (see Displaced and Delayed).
	Work, Lock, Wait, Alloc, Sched, Other float64
	// Displaced is the most goroutine time (a share, like the others) the
	// collector can have taken from workers that wanted a CPU: the CPU of
	// its dedicated and fractional mark workers and its pauses during the
	// recording (runtime/metrics), at most what the workers wanted. Where
	// it did, a worker sat runnable inside the piece it was timing, so the
	// on-CPU shares (Work, Alloc, Other) are lower, in proportion (Lowest),
	// and sched or gc higher, by up to Displaced. It is near zero but for
	// the alloc variant.
	Displaced float64
	// Delayed is the most goroutine time (a share) the kernel can have
	// kept the workers from a CPU: the time the process's threads waited
	// in its run queue (Machine.RunDelay), at most what the workers
	// wanted. A thread kept waiting either holds a goroutine that is
	// running to Go — which the budget calls sched, the thread having no
	// CPU (runner, since 22c4eff) — or is the one woken to take a runnable
	// goroutine to an idle P, which the model, assuming an idle P takes
	// work at once, does not see. Where in an operation the kernel struck
	// is not known: on this 2-core VM it was often just after a wake-up
	// (in Unlock, in a receive), when the woken thread took the waker's
	// core. So sched may be higher by up to Delayed, and any other share
	// lower by as much (Lowest). It is near zero on an idle machine.
	Delayed float64

	// WorkCPU and WorkWall are the hashing's thread CPU time and wall
	// time, as shares, where the variant measures the first (every
	// hashing, on its thread locked for it: see hashOnCPU; a fan-out's
	// or pool's is the union of its helpers' spans at the share of them
	// their threads ran, see helped); zero without a thread CPU clock.
	// With them no model is needed: work is WorkCPU, and
	// WorkWall−WorkCPU was spent without a CPU, runnable to Go or to the
	// kernel — sched, of which work.
	WorkCPU, WorkWall float64

	// Stopwatch is what the workers' clocks say, as shares of the same
	// goroutine time, with no model: the time inside each piece, whether
	// the goroutine had a CPU in it or not. It is "where the wall time
	// went"; the budget's row plus the sched it says was taken from that
	// row (runner.SchedBy: preempted while hashing is sched of work) must
	// agree with it, quiet or beside a spinning process.
	Stopwatch Shares

	// Goroutine is the goroutine time the shares divide, in nanoseconds:
	// the workers' time inside Run plus their start-up wait, which is what
	// the runner's budget covers (its trace regions are around Run and
	// around the wait for the release).
	Goroutine int64
	// Startup is the start-up wait, as a fraction of Goroutine: from a
	// repetition's release (the first worker to start Run) to each other
	// worker's start. With more workers than Ps it is runnable time —
	// released together, half of four workers wait for the first time
	// slice to end, 10–20 ms — and it is in the repetition's wall time, so
	// it is in Sched, as the budget has it.
	Startup float64
	// Procs is the number of Ps the model assumed (GOMAXPROCS).
	Procs int
	// Reps is the number of repetitions recorded.
	Reps int
	// Machine is what the collector and the kernel did meanwhile.
	Machine Machine
}

// Shares are a stopwatch's shares of goroutine time: the workers' timed
// pieces, the start-up wait before Run, and the rest of Run (other).
type Shares struct{ Work, Lock, Wait, Alloc, Other, Startup float64 }

func (s *Shares) add(o Shares, f float64) {
	s.Work += f * o.Work
	s.Lock += f * o.Lock
	s.Wait += f * o.Wait
	s.Alloc += f * o.Alloc
	s.Other += f * o.Other
	s.Startup += f * o.Startup
}

// Lowest returns the least a share can be once what the collector and the
// kernel took is accounted: an on-CPU share (Work, Alloc, Other) loses
// Displaced in proportion to its time, since mark workers take Ps from
// whoever wants one; any share, Lock and Wait too, may lose all of
// Delayed.
func (t Truth) Lowest(share float64, onCPU bool) float64 {
	if total := t.Work + t.Alloc + t.Other; onCPU && total > 0 {
		share -= t.Displaced * share / total
	}
	return max(0, share-t.Delayed)
}

// Machine is what took CPUs from the workers during a recording, in
// nanoseconds: the collector (runtime/metrics, brought up to date when a
// cycle ends, so the cycle in progress when a recording starts or stops
// is counted in the next: one of the dozens an alloc case runs in its
// window) and the kernel.
type Machine struct {
	Cycles                                     int64
	Dedicated, Fractional, Idle, Assist, Pause int64
	// RunDelay is the time the process's threads waited in the kernel's
	// run queue, summed over threads; -1 if unknown.
	RunDelay int64
}

// Analyze computes a case's truth from its workers' logs and what the
// collector and the kernel did during the recording, for procs Ps.
//
// Time.Now around each piece gives lock, wait, alloc and work time
// directly; what it cannot tell is how much of the time around hashing a
// goroutine spent runnable without a CPU, which a budget must call sched.
// The model: at any instant, the workers inside Run and not in a logged
// synchronisation call want a CPU; with h of them and procs Ps,
// max(0, h−procs) are runnable. Go's scheduler is work-conserving (an idle P
// steals a runnable goroutine within microseconds), and nothing but the
// workers and the collector wants a P for long, so the integral of
// max(0, h−procs) over the recording is the workers' runnable time. Which
// goroutines were the runnable ones is not known; it is charged to the
// on-CPU pieces in proportion to their time. The collector's mark workers
// and pauses can take more (Truth.Displaced), and so can a loaded machine
// (Truth.Delayed).
//
// The model counts runnable time as the Go scheduler sees it, which is
// what the execution tracer reports. A thread CPU clock
// (CLOCK_THREAD_CPUTIME_ID under runtime.LockOSThread) is the alternative,
// and not the general one, because locking every worker to a thread turns
// each goroutine switch into a futex wake of another thread, which changes
// the lock hand-offs being measured (a semaphore hand-off measured 4.5–5 µs
// with locked threads). It also counts time the kernel gave another
// process as off-CPU — 30–60% of a worker's time on the loaded 2-core VM
// (nolock at one goroutine: 20 µs/op for 8 µs of CPU) — which the tracer
// calls running; since the budget now calls it sched (runner 22c4eff),
// that is what the budget wants, and every worker that hashes uses the
// clock for the one piece where locking changes nothing: hashing, locked
// to its thread for the hashing only (hashOnCPU).
//
// What else the model ignores errs towards less sched by a point or so:
// the tracer's and the CPU profiler's goroutines also take Ps, and a
// goroutine in Unlock or a receive is on a CPU, briefly, though the model
// counts it with the waits.
func Analyze(logs []Log, m Machine, procs int) (Truth, error) {
	t := Truth{Procs: procs, Machine: m}
	if procs < 1 {
		return t, fmt.Errorf("procs = %d", procs)
	}
	if len(logs) == 0 {
		return t, errors.New("no worker ran while recording")
	}
	reps := len(logs[0].Runs)
	for _, l := range logs {
		if len(l.Runs) != reps {
			return t, fmt.Errorf("workers ran %d and %d repetitions: each repetition must run every worker once", reps, len(l.Runs))
		}
	}
	if reps == 0 {
		return t, errors.New("no repetition recorded")
	}
	t.Reps = reps

	type event struct {
		at int64
		d  int // change in the number of workers wanting a CPU
	}
	var events []event
	var sums Sums
	var goroutine, startup, waits int64
	for k := range reps {
		release := logs[0].Runs[k].Start
		for _, l := range logs {
			release = min(release, l.Runs[k].Start)
		}
		for _, l := range logs {
			r := l.Runs[k]
			goroutine += r.End - r.Start
			startup += r.Start - release
			events = append(events, event{r.Start, +1}, event{r.End, -1})
		}
	}
	for _, l := range logs {
		sums.add(l.Sums)
		for _, w := range l.Waits {
			waits += w.End - w.Start
			events = append(events, event{w.Start, -1}, event{w.End, +1})
		}
	}
	// At equal times increments come first, so a wait that starts where
	// its Run starts never takes the count below zero; the order of events
	// at one instant does not change the integral.
	slices.SortFunc(events, func(a, b event) int {
		if a.at != b.at {
			if a.at < b.at {
				return -1
			}
			return 1
		}
		return b.d - a.d
	})
	var runnable int64
	h := 0
	for i, e := range events {
		if i > 0 && h > procs {
			runnable += int64(h-procs) * (e.at - events[i-1].at)
		}
		if h += e.d; h < 0 {
			return t, fmt.Errorf("a wait outside Run at %d ns", e.at)
		}
	}
	if goroutine <= 0 {
		return t, errors.New("no goroutine time recorded")
	}
	// Demanding time: inside Run and not in a synchronisation call. The
	// runnable share of it is taken from every on-CPU piece alike.
	demand := sums.Total - waits
	onCPU := 1.0
	if demand > 0 {
		onCPU = 1 - float64(runnable)/float64(demand)
	}
	g := float64(goroutine + startup)
	t.Goroutine = goroutine + startup
	t.Work = float64(sums.Work) * onCPU / g
	t.Alloc = float64(sums.Alloc) * onCPU / g
	t.Lock = float64(sums.Lock) / g
	t.Wait = float64(sums.Wait) / g
	t.Sched = float64(runnable+startup) / g
	t.Other = 1 - t.Work - t.Alloc - t.Lock - t.Wait - t.Sched
	t.Startup = float64(startup) / g
	sw := Shares{Work: float64(sums.Work) / g, Lock: float64(sums.Lock) / g, Wait: float64(sums.Wait) / g,
		Alloc: float64(sums.Alloc) / g, Startup: t.Startup}
	sw.Other = 1 - sw.Work - sw.Lock - sw.Wait - sw.Alloc - sw.Startup
	t.Stopwatch = sw
	if sums.WorkCPU > 0 {
		t.WorkCPU, t.WorkWall = float64(sums.WorkCPU)/g, float64(sums.Work)/g
	}
	// A pause stops every P; it displaces at most the workers that can
	// run at once.
	spare := max(0, float64(demand-runnable))
	displaced := float64(m.Dedicated+m.Fractional) + float64(m.Pause)*float64(min(len(logs), procs))/float64(procs)
	t.Displaced = min(displaced, spare) / g
	if m.RunDelay > 0 {
		t.Delayed = min(float64(m.RunDelay), spare-t.Displaced*g) / g
	}
	return t, nil
}

// Mean is the truth of several recordings of one case — its traced
// slices — each weighing the same, as the runner weighs the slices' traces
// in the budget (runner.mergeSlices): the mean of their shares. Goroutine
// time, repetitions and the machine's figures are summed.
func Mean(ts []Truth) Truth {
	if len(ts) == 0 {
		return Truth{}
	}
	var m Truth
	n := float64(len(ts))
	m.Procs = ts[0].Procs
	m.Machine.RunDelay = 0
	for _, t := range ts {
		m.Work += t.Work / n
		m.Lock += t.Lock / n
		m.Wait += t.Wait / n
		m.Alloc += t.Alloc / n
		m.Sched += t.Sched / n
		m.Other += t.Other / n
		m.Displaced += t.Displaced / n
		m.Delayed += t.Delayed / n
		m.WorkCPU += t.WorkCPU / n
		m.WorkWall += t.WorkWall / n
		m.Startup += t.Startup / n
		m.Stopwatch.add(t.Stopwatch, 1/n)
		m.Goroutine += t.Goroutine
		m.Reps += t.Reps
		a, b := &m.Machine, t.Machine
		a.Cycles += b.Cycles
		a.Dedicated += b.Dedicated
		a.Fractional += b.Fractional
		a.Idle += b.Idle
		a.Assist += b.Assist
		a.Pause += b.Pause
		if a.RunDelay >= 0 && b.RunDelay >= 0 {
			a.RunDelay += b.RunDelay
		} else {
			a.RunDelay = -1
		}
	}
	return m
}
