// Package wallclock turns a Go execution trace into an exact wall-clock
// profile: for every goroutine that counts, the time it spent running,
// runnable, blocked and in system calls, each interval at its stack and with
// its category decided by the classification rules.
//
// It replaces sampling wall-clock profilers (fgprof) for budgets because
// sampling the goroutine profile gets blocked time wrong: with two goroutines
// and a quarter of each operation's hashing under a sync.Mutex, time spent
// inside Lock() was ~5% by time.Now, yet fgprof showed ~30% parked under
// Mutex.lockSlow (issue 9). The tracer records every state transition with
// its timestamp, reason and stack, so blocked and runnable time is exact; and
// with the CPU profiler on, the trace carries CPU samples tagged with their
// goroutine, which split running time by what the goroutine was executing,
// assembly included (SHA-256, AES and MD5 blocks are invisible to a
// goroutine-profile sampler, which only sees safe points).
//
// Two rules decide where off-CPU time goes (both measured in issue 9):
//
//   - A goroutine woken from a wait (by Unlock, a send) often sits runnable in
//     the waker's run queue before it runs. That runnable time is charged to
//     the wait it was woken from, not to sched: without this a fully locked
//     2-goroutine workload showed 43% sched and 6% lock; with it, lock 47%
//     against 46% timed by the workload itself.
//   - Runnable time after a preemption or a yield is sched: the goroutine
//     wanted a CPU and had none (more goroutines than GOMAXPROCS, or another
//     process on the cores). A yield inside a mutex handoff is lock.
package wallclock

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/profiles"
	"golang.org/x/exp/trace"
)

// State is the scheduling state of a goroutine over an interval.
type State int

// The states a counted goroutine's time is split into.
const (
	Running State = iota
	Runnable
	Blocked
	Syscall
	numStates
)

var stateNames = [numStates]string{"running", "runnable", "blocked", "syscall"}

// String returns the state's name, as used in the profile's "state" label.
func (s State) String() string {
	if s < 0 || s >= numStates {
		return "unknown"
	}
	return stateNames[s]
}

// Options say which goroutines count and how to classify their time.
type Options struct {
	// Region is the runtime/trace region type that marks counted time: a
	// goroutine counts only between the begin and end of a region of this
	// type that it entered itself (perflab's runner wraps each worker's
	// Run in one). Required.
	Region string
	// Rules classify off-CPU stacks (see profiles.Rules.OffCPU). Nil means
	// profiles.DefaultRules().
	Rules *profiles.Rules
}

// Result is what one trace says about its counted goroutines.
type Result struct {
	// Profile is the wall-clock profile: sample type wall/nanoseconds, one
	// sample per distinct (state, stack), labelled "state" (running,
	// runnable, blocked, syscall). Running time is spread over the
	// goroutines' own CPU samples; every off-CPU sample has a leaf frame
	// named by profiles.StateFrame that carries its category.
	Profile *profile.Profile
	// Time is the counted goroutines' total time in each state.
	Time [numStates]time.Duration
	// Goroutines is the number of distinct goroutines that counted.
	Goroutines int
	// CPUSamples is the number of CPU samples that split running time. Zero
	// means the CPU profiler was off: running time is then one "[other]
	// running, no CPU samples" frame.
	CPUSamples int
	// BackgroundGC is the running time of the runtime's GC mark workers
	// (runtime.gcBgMarkWorker) during the trace: GC CPU that no counted
	// goroutine paid for, so it is never part of their wall time.
	BackgroundGC time.Duration
	// Span is the time from the first to the last event of the trace.
	Span time.Duration
}

// Total returns the counted goroutines' total time.
func (r *Result) Total() time.Duration {
	var t time.Duration
	for _, d := range r.Time {
		t += d
	}
	return t
}

// maxStackKeys bounds the number of distinct (state, stack) entries kept: a
// trace is produced by the process itself, but a hostile or enormous one
// must not grow memory without limit.
const maxStackKeys = 1 << 16

// key is one distinct place off-CPU time is charged to.
type key struct {
	frame string // the synthetic leaf frame, "[lock] blocked (sync)"
	state State
	stack trace.Stack
}

// gor is what is known of one goroutine while reading the trace.
type gor struct {
	state   trace.GoState
	since   trace.Time
	counted bool // inside a counting region
	seen    bool // has been counted at some point
	// what it is doing while off the CPU
	offFrame string
	offState State
	offStack trace.Stack
	// the stack and category it blocked at, kept while it is woken
	blockStack trace.Stack
	blockCat   profiles.Category
	blockWhy   string
	running    time.Duration // all running time, counted or not
	gcWorker   bool
}

// FromTrace reads an execution trace (runtime/trace) and returns the
// wall-clock accounting of the goroutines that opts says count.
func FromTrace(r io.Reader, opts Options) (res *Result, err error) {
	// The trace parser checks what it reads, but a corrupt trace must be an
	// error, never a crash of the process that measured everything else.
	defer func() {
		if v := recover(); v != nil {
			res, err = nil, fmt.Errorf("reading trace: corrupt trace (%v)", v)
		}
	}()
	if opts.Region == "" {
		return nil, errors.New("wallclock: Options.Region is required")
	}
	rules := opts.Rules
	if rules == nil {
		rules = profiles.DefaultRules()
	}
	tr, err := trace.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("reading trace: %w", err)
	}
	a := &accountant{
		rules:   rules,
		region:  opts.Region,
		gs:      map[trace.GoID]*gor{},
		off:     map[key]time.Duration{},
		samples: map[trace.Stack]int{},
		cats:    map[catKey]profiles.Category{},
		res:     &Result{},
	}
	first, last := trace.Time(-1), trace.Time(0)
	for {
		ev, err := tr.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading trace: %w", err)
		}
		if first < 0 {
			first = ev.Time()
		}
		last = ev.Time()
		if err := a.event(&ev); err != nil {
			return nil, err
		}
	}
	if first >= 0 {
		a.res.Span = last.Sub(first)
	}
	a.finish(last)
	return a.res, nil
}

type catKey struct {
	stack  trace.Stack
	reason string
	yield  bool
}

type accountant struct {
	rules   *profiles.Rules
	region  string
	gs      map[trace.GoID]*gor
	off     map[key]time.Duration
	samples map[trace.Stack]int // CPU samples of counted goroutines
	cats    map[catKey]profiles.Category
	res     *Result
	gcSTW   bool // inside a GC stop-the-world
}

func (a *accountant) g(id trace.GoID) *gor {
	g := a.gs[id]
	if g == nil {
		g = &gor{state: trace.GoUndetermined}
		a.gs[id] = g
	}
	return g
}

// names returns a trace stack's function names, leaf first.
func names(s trace.Stack) []string {
	var out []string
	for f := range s.Frames() {
		out = append(out, f.Func)
	}
	return out
}

// category classifies an off-CPU stack once per (stack, reason).
func (a *accountant) category(s trace.Stack, reason string, yield bool) profiles.Category {
	k := catKey{s, reason, yield}
	if c, ok := a.cats[k]; ok {
		return c
	}
	var c profiles.Category
	if yield {
		c = a.rules.Yielded(names(s))
	} else {
		c = a.rules.OffCPU(names(s), reason)
	}
	a.cats[k] = c
	return c
}

func (a *accountant) event(ev *trace.Event) error {
	switch ev.Kind() {
	case trace.EventRegionBegin, trace.EventRegionEnd:
		if ev.Region().Type != a.region {
			return nil
		}
		id := ev.Goroutine()
		if id == trace.NoGoroutine {
			return nil
		}
		g := a.g(id)
		// A region begins and ends on its own goroutine, which is running.
		a.flush(g, ev.Time())
		g.state = trace.GoRunning
		if ev.Kind() == trace.EventRegionBegin {
			g.counted, g.seen = true, true
		} else {
			g.counted = false
		}
	case trace.EventRangeBegin, trace.EventRangeEnd:
		// Goroutines stopped for a GC stop-the-world are preempted and sit
		// runnable until the world restarts: that is the collector's time.
		if strings.HasPrefix(ev.Range().Name, "stop-the-world (GC") {
			a.gcSTW = ev.Kind() == trace.EventRangeBegin
		}
	case trace.EventStackSample:
		id := ev.Goroutine()
		if g := a.gs[id]; g != nil && g.counted && g.state == trace.GoRunning {
			s := ev.Stack()
			if _, ok := a.samples[s]; ok || len(a.samples) < maxStackKeys {
				a.samples[s]++
			}
			a.res.CPUSamples++
		}
	case trace.EventStateTransition:
		st := ev.StateTransition()
		if st.Resource.Kind != trace.ResourceGoroutine {
			return nil
		}
		from, to := st.Goroutine()
		g := a.g(st.Resource.Goroutine())
		a.flush(g, ev.Time())
		if !g.gcWorker && st.Stack != trace.NoStack {
			for f := range st.Stack.Frames() {
				if f.Func == "runtime.gcBgMarkWorker" {
					g.gcWorker = true
				}
			}
		}
		a.transition(g, from, to, st)
	}
	return nil
}

// transition records what a goroutine will be doing in its new state.
func (a *accountant) transition(g *gor, from, to trace.GoState, st trace.StateTransition) {
	g.state = to
	switch to {
	case trace.GoWaiting:
		g.blockStack, g.blockWhy = st.Stack, st.Reason
		g.blockCat = a.category(st.Stack, st.Reason, false)
		g.offState, g.offStack = Blocked, st.Stack
		g.offFrame = profiles.StateFrame(g.blockCat, "blocked ("+st.Reason+")")
	case trace.GoRunnable:
		switch from {
		case trace.GoWaiting:
			// Woken: the wait goes on until it runs (issue 9's first rule).
			g.offState, g.offStack = Runnable, g.blockStack
			g.offFrame = profiles.StateFrame(g.blockCat, "runnable after wake ("+g.blockWhy+")")
		case trace.GoRunning:
			g.offState, g.offStack = Runnable, st.Stack
			if a.gcSTW {
				g.offFrame = profiles.StateFrame(profiles.GC, "runnable (stopped for GC)")
				break
			}
			c := a.category(st.Stack, st.Reason, true)
			g.offFrame = profiles.StateFrame(c, "runnable ("+st.Reason+")")
		case trace.GoSyscall:
			// The system call returned but the P was taken meanwhile.
			g.offState = Runnable
			g.offFrame = profiles.StateFrame(profiles.Sched, "runnable after syscall")
		default:
			// Created, or first seen runnable.
			g.offState, g.offStack = Runnable, trace.NoStack
			g.offFrame = profiles.StateFrame(profiles.Sched, "runnable")
		}
	case trace.GoSyscall:
		c := profiles.Wait
		if st.Stack != trace.NoStack {
			c = a.category(st.Stack, "syscall", false)
		}
		g.offState, g.offStack = Syscall, st.Stack
		g.offFrame = profiles.StateFrame(c, "syscall")
	}
}

// flush charges a goroutine's time since its last event to its state, if it
// is counted, and moves its clock to now.
func (a *accountant) flush(g *gor, now trace.Time) {
	d := now.Sub(g.since)
	g.since = now
	if d <= 0 {
		return
	}
	if g.state == trace.GoRunning {
		g.running += d
	}
	if !g.counted {
		return
	}
	switch g.state {
	case trace.GoRunning:
		a.res.Time[Running] += d
	case trace.GoRunnable, trace.GoWaiting, trace.GoSyscall:
		a.res.Time[g.offState] += d
		k := key{frame: g.offFrame, state: g.offState, stack: g.offStack}
		if _, ok := a.off[k]; !ok && len(a.off) >= maxStackKeys {
			k.stack = trace.NoStack // keep the time, lose the stack
		}
		a.off[k] += d
	}
}

func (a *accountant) finish(end trace.Time) {
	for _, g := range a.gs {
		a.flush(g, end)
		if g.seen {
			a.res.Goroutines++
		}
		if g.gcWorker {
			a.res.BackgroundGC += g.running
		}
	}
	a.res.Profile = a.build()
}

// build assembles the pprof profile.
func (a *accountant) build() *profile.Profile {
	b := newBuilder()
	running := a.res.Time[Running]
	if running > 0 {
		if a.res.CPUSamples == 0 {
			b.add(int64(running), Running, []trace.StackFrame{{Func: profiles.StateFrame(profiles.Other, "running, no CPU samples")}}, trace.NoStack)
		} else {
			// Each sample stands for an equal share of the running time; the
			// rounding remainder goes to the last one so the total is exact.
			per := float64(running) / float64(a.res.CPUSamples)
			var given int64
			n := 0
			for s, count := range a.samples {
				n++
				v := int64(per * float64(count))
				if n == len(a.samples) {
					v = int64(running) - given
				}
				given += v
				b.add(v, Running, nil, s)
			}
		}
	}
	for k, d := range a.off {
		b.add(int64(d), k.state, []trace.StackFrame{{Func: k.frame}}, k.stack)
	}
	return b.p
}

type funcKey struct{ name, file string }
type locKey struct {
	pc   uint64
	name string
}

type builder struct {
	p     *profile.Profile
	funcs map[funcKey]*profile.Function
	locs  map[locKey]*profile.Location
	stack map[trace.Stack][]*profile.Location
}

func newBuilder() *builder {
	return &builder{
		p: &profile.Profile{
			SampleType:        []*profile.ValueType{{Type: "wall", Unit: "nanoseconds"}},
			PeriodType:        &profile.ValueType{Type: "wall", Unit: "nanoseconds"},
			Period:            1,
			DefaultSampleType: "wall",
		},
		funcs: map[funcKey]*profile.Function{},
		locs:  map[locKey]*profile.Location{},
		stack: map[trace.Stack][]*profile.Location{},
	}
}

func (b *builder) loc(f trace.StackFrame) *profile.Location {
	k := locKey{f.PC, f.Func}
	if l := b.locs[k]; l != nil {
		return l
	}
	fk := funcKey{f.Func, f.File}
	fn := b.funcs[fk]
	if fn == nil {
		fn = &profile.Function{ID: uint64(len(b.p.Function) + 1), Name: f.Func, SystemName: f.Func, Filename: f.File}
		b.funcs[fk] = fn
		b.p.Function = append(b.p.Function, fn)
	}
	l := &profile.Location{ID: uint64(len(b.p.Location) + 1), Address: f.PC, Line: []profile.Line{{Function: fn, Line: int64(f.Line)}}}
	b.locs[k] = l
	b.p.Location = append(b.p.Location, l)
	return l
}

func (b *builder) add(v int64, st State, leaf []trace.StackFrame, s trace.Stack) {
	if v <= 0 {
		return
	}
	locs, ok := b.stack[s]
	if !ok {
		for f := range s.Frames() {
			locs = append(locs, b.loc(f))
		}
		b.stack[s] = locs
	}
	all := make([]*profile.Location, 0, len(leaf)+len(locs))
	for _, f := range leaf {
		all = append(all, b.loc(f))
	}
	all = append(all, locs...)
	b.p.Sample = append(b.p.Sample, &profile.Sample{
		Location: all,
		Value:    []int64{v},
		Label:    map[string][]string{"state": {st.String()}},
	})
}

// Encode writes the profile as gzipped pprof, the format every tool reads.
func (r *Result) Encode() ([]byte, error) {
	var buf bytes.Buffer
	if err := r.Profile.Write(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
