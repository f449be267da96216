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
//
// A wait that goroutines the operation started or fed end (a WaitGroup
// fan-out, a pool answering on a channel) is charged to what they did
// meanwhile, at their stacks under the waiting frame (critical.go): a
// fan-out of hashing reads as work, not as the worker's wait (issue 22).
//
// Which goroutines count: those inside a runtime/trace region (Options.Region,
// the runner's workers), or, for a service with no region to mark its work,
// every goroutine (Options.AllGoroutines) except the runtime's own, the
// tracer's and profilers' writers, and those Options.Exclude names by their
// root function, with the goroutines they start. Whose a goroutine is, is
// decided from the root of the first stack the trace shows of it; its time
// until then is held back, not lost.
package wallclock

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/internal/ctxswitch"
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
	// Run in one). Required unless AllGoroutines is set.
	Region string
	// AllGoroutines counts every goroutine of the process for the whole
	// trace instead, except the runtime's own and the profilers' (see
	// SystemGoroutine): what a service's wall clock is, where there is no
	// region to mark the work. It and Region are exclusive.
	AllGoroutines bool
	// Exclude lists more function-name prefixes for AllGoroutines: a
	// goroutine whose root function (the one it was started with) has one
	// does not count, nor do the goroutines it starts while traced. A
	// profiler names its own packages here so its uploads are not in the
	// profile it uploads.
	Exclude []string
	// Roots, with AllGoroutines, counts only the goroutines started with a
	// function that has one of these name prefixes: those that run a
	// test binary's benchmark (testing.(*B).launch, its run1 and
	// RunParallel goroutines), where the rest of the process is the
	// testing package's. The goroutines they start do not count unless
	// named too: like a Region's workers', they are what counted
	// goroutines wait on, and a wait they end is charged to what they did
	// meanwhile (the critical path, critical.go). A goroutine whose stack
	// is too deep to show its root does not count.
	Roots []string
	// Rules classify off-CPU stacks (see profiles.Rules.OffCPU). Nil means
	// profiles.DefaultRules().
	Rules *profiles.Rules
	// StartRegion, if set, is a region type around a goroutine's wait to
	// be released into Region (perflab's workers wait on a start channel):
	// inside it blocked time is left out, and runnable time after the
	// release is counted, as sched, for it is wall time of the work that
	// began when released.
	StartRegion string
	// Sched, if set, moves the time a running goroutine's thread waited in
	// the kernel's run queue from running to sched (see Result.OSWait).
	Sched *SchedStats
	// Windows, if set, are the only times counted goroutines count: their
	// time and CPU samples outside them are left out (a test binary's
	// benchmark counts while its timer runs, between the testing
	// package's StartTimer and StopTimer; see lab's benchtimer.go). Sorted
	// by From and not overlapping. Helpers' time is charged through the
	// waits of counted goroutines, so it follows the same windows.
	Windows []Window
}

// Window is an interval of the trace's time, From included, To not.
type Window struct{ From, To trace.Time }

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
	// HelperSamples is the number of CPU samples of helpers (critical.go)
	// that split the helpers' running time charged to waits: those taken
	// within the charged time, each at the share of its instant charged,
	// summed then rounded, and at least 1 where any samples split it (a
	// short wait's, none of whose samples fell within it, is split by
	// other samples of the helpers, which it does not count).
	HelperSamples int
	// BackgroundGC is the running time of the runtime's GC mark workers
	// (runtime.gcBgMarkWorker) during the trace: GC CPU that no counted
	// goroutine paid for, so it is never part of their wall time.
	BackgroundGC time.Duration
	// Span is the time from the first to the last event of the trace.
	Span time.Duration
	// OSWait is the time counted goroutines were running to Go, or in a
	// system call, while their thread waited for a CPU (Options.Sched),
	// charged to sched; it is in Time[Runnable], not in Time[Running] or
	// Time[Syscall].
	OSWait time.Duration
	// OSWake is the rest of their threads' wait for a CPU: what a
	// goroutine's own wake-up of another cost it, where the kernel gave its
	// CPU to the woken thread (see wakeWindow), charged to the waking call
	// — lock in an Unlock, wait in a send or a pipe's write. It is in
	// Time[Runnable] too; OSWait+OSWake is all the recorded wait.
	OSWake time.Duration
	// OSOwn is the part of OSWait during which another thread of the
	// process had the CPU (Preemption.ByOwn): the process's own threads
	// taking turns, not another program. Zero unless OSWaitExact.
	OSOwn time.Duration
	// OSWaitExact says OSWait is the sum of the kernel's preempted
	// intervals (SchedStats.Preempted), not an estimate from per-thread
	// totals.
	OSWaitExact bool
	// Helped is the part of the counted goroutines' waits (blocked, and
	// runnable after a helper woke them) that was a wait for helpers
	// (goroutines the operation started or fed) and is charged in the
	// profile to what they did meanwhile, at their stacks under the
	// waiting one (see critical.go); HelpedRunning the part of it the
	// helpers were running. Both are in Time[Blocked] and Time[Runnable].
	Helped, HelpedRunning time.Duration
	// HelpedOSWait is the part of Helped the helpers were running to Go
	// while their threads waited for a CPU (the kernel's preempted
	// intervals, Options.Sched; not estimated without them), charged to
	// sched: at the stacks their CPU samples say they ran, as a counted
	// goroutine's OSWait is, that part in HelpedRunning (unlike OSWait,
	// which is not in Time[Running]); but at no stack, and not in
	// HelpedRunning, where the thread was preempted as the helper began
	// to run (see startWindow). HelpedOSOwn is the part of HelpedOSWait
	// another thread of the process had the CPU; in the profile only the
	// part at the helpers' stacks says so (osOwnState).
	HelpedOSWait, HelpedOSOwn time.Duration
	// SharedHelped is the part of Helped charged to helpers that more
	// than one counted goroutine fed (a pool shared by the workers): a
	// pool goroutine that took a job from a buffered channel may have
	// run another worker's, and no trace event says whose it ran, so
	// this part of the budget is an attribution, not a measurement.
	SharedHelped time.Duration
	// Handoffs is how many times a counted goroutine, running, made
	// another counted goroutine runnable from a wait (an Unlock, a send
	// or a Signal that woke a worker): the workers handing a lock or work
	// to each other. Each wakes a thread, and the CPU samples taken
	// around such hand-offs land in the code that runs after them, so
	// many per millisecond of running make the split of running time by
	// CPU samples unreliable (the runner's trust judge, issue 22).
	Handoffs int
}

// SchedStat is one thread's kernel scheduling figures
// (/proc/self/task/TID/schedstat): time on a CPU, and time waiting in the
// run queue for one (package ctxswitch reads them).
type SchedStat = ctxswitch.SchedStat

// SchedStats are every thread's figures, by thread id (the trace's thread
// ids are the kernel's on Linux), read just before the trace starts and
// just after it stops.
//
// Preempted, when not nil, holds every interval a thread of the process was
// preempted over the window (StartSwitches): they then decide exactly when,
// and to which goroutine in which state, the wait happened, and Before and
// After are not used.
type SchedStats struct {
	Before, After map[int64]SchedStat
	Preempted     []Preemption
	// OwnUnknown says the Preempted intervals' ByWoken and ByOwn were not
	// worked out (SwitchRecorder.OwnUnknown).
	OwnUnknown bool
}

// Preemption is an interval a thread was taken off its CPU while still
// runnable, as the kernel's context-switch records tell it (package
// ctxswitch reads them).
type Preemption = ctxswitch.Preemption

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
	// via is the chain of waits the time was charged through, if it is
	// a helper's (see critical.go); 0 for a goroutine's own time.
	via int32
	// root is, for time at no stack, the function the goroutine was
	// started with, when another of its stacks said (see rooted).
	root string
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
	sysOS      time.Duration // preempted time in this system call, not yet charged
	sysSelf    time.Duration // of it, what the call's own wake-up of a thread cost (wakeWindow)
	sysOwn     time.Duration // of the rest, when another thread of the process had the CPU
	sysCat     profiles.Category
	sysAt      trace.Time // when the call began
	gcWorker   bool
	thread     trace.ThreadID // the thread it runs on, while running
	starting   bool           // inside Options.StartRegion
	// woke is when, while running, it last made a waiting goroutine
	// runnable (Unlock, a send), and wokeAt at which stack; NoStack once
	// it has changed state since.
	woke   trace.Time
	wokeAt trace.Stack
	// AllGoroutines only: whether the goroutine is the runtime's or a
	// profiler's, and its time while that is not known yet.
	class   class
	pending *pending
	// The critical path (critical.go). A wait (blocked in the Wait
	// category) is open from blockFrom; a counted goroutine's is kept
	// off the profile (waitPend) until it is known who ended it.
	waitOpen  bool
	blockFrom trace.Time
	waitPend  time.Duration
	// A wait a helper ended (waker, at wakeAt) is resolved when the
	// goroutine runs: wakeOpen until then, its runnable time in wakePend.
	wakeOpen   bool
	waker      *gor
	wakeAt     trace.Time
	wakePend   time.Duration
	blockFrame string // the frame of the wait, kept while runnable after it
	// helper: the goroutine works for the operation (created or fed by
	// it), for parent, started with root; pieces is its recent timeline.
	helper bool
	// shared: fed by more than one counted goroutine (a shared pool).
	shared   bool
	parent   *gor
	children []*gor
	root     string
	pieces   []piece
	// runSamples are its CPU samples since it last began running, for
	// the running piece flush makes of that time.
	runSamples []stamp
	stamped    int // samples kept in runSamples over the trace (maxStamps)
	// osUntil is, while running, when the preemption of its thread that
	// began at its last flush ends (the kernel's records), and osOwn the
	// share of it another thread of the process had the CPU: the next
	// running piece up to osUntil is a wait for a CPU (see help).
	osUntil trace.Time
	osOwn   float64
	osStart bool       // the preemption began as it began to run (startWindow)
	ranAt   trace.Time // when it last began to run
	// AllGoroutines: the function it was started with, once a stack
	// of it reaching its root says (ownRoot), and until then its time
	// charged at no stack (unrooted), moved under the root when known.
	ownRoot  string
	unrooted map[key]time.Duration
}

// class is what AllGoroutines knows of a goroutine.
type class uint8

const (
	undecided class = iota
	user
	system
)

// pending holds an undecided goroutine's time until its stack says whose it
// is: its first events (a status at the trace's start, say) often have none.
type pending struct {
	time    [numStates]time.Duration
	off     map[key]time.Duration
	samples map[trace.Stack]int
	cpu     int
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
	if opts.Region == "" && !opts.AllGoroutines {
		return nil, errors.New("wallclock: Options.Region is required")
	}
	if opts.Region != "" && opts.AllGoroutines {
		return nil, errors.New("wallclock: Options.Region and Options.AllGoroutines are exclusive")
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
		rules:       rules,
		region:      opts.Region,
		startRegion: opts.StartRegion,
		all:         opts.AllGoroutines,
		exclude:     opts.Exclude,
		roots:       opts.Roots,
		gs:          map[trace.GoID]*gor{},
		off:         map[key]time.Duration{},
		samples:     map[trace.Stack]int{},
		cats:        map[catKey]profiles.Category{},
		res:         &Result{},
		sched:       opts.Sched,
		windows:     opts.Windows,
	}
	if opts.Sched != nil {
		a.threadAll, a.threadCounted = map[trace.ThreadID]time.Duration{}, map[trace.ThreadID]time.Duration{}
		a.samplesAll, a.samplesCounted = map[trace.ThreadID]int{}, map[trace.ThreadID]int{}
		if opts.Sched.Preempted != nil {
			a.pre = slices.Clone(opts.Sched.Preempted)
			slices.SortFunc(a.pre, func(x, y Preemption) int { return cmp.Compare(x.From, y.From) })
			a.onThread = map[trace.ThreadID]*gor{}
		}
	}
	first, last := trace.Time(-1), trace.Time(0)
	var start time.Time // the first event's, by the wall clock
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
			a.first = first
		}
		last = ev.Time()
		a.now = last
		if a.onThread != nil {
			a.preempted(&ev)
		}
		if err := a.event(&ev); err != nil {
			return nil, err
		}
		if start.IsZero() && ev.Kind() == trace.EventSync {
			if snap := ev.Sync().ClockSnapshot; snap != nil {
				start = snap.Wall.Add(-snap.Trace.Sub(first))
			}
		}
	}
	if first >= 0 {
		a.res.Span = last.Sub(first)
	}
	a.finish(last)
	// When and over how long, which go tool pprof heads the profile with
	// and which profile.Merge keeps (the earliest time, the durations
	// summed): from the trace's clock snapshot (Go 1.25 and later; none
	// before) and its span. A caller that timed its own window sets
	// DurationNanos to it.
	if !start.IsZero() {
		a.res.Profile.TimeNanos = start.UnixNano()
	}
	a.res.Profile.DurationNanos = a.res.Span.Nanoseconds()
	return a.res, nil
}

type catKey struct {
	stack  trace.Stack
	reason string
	yield  bool
}

type accountant struct {
	rules       *profiles.Rules
	region      string
	startRegion string
	first       trace.Time // the trace's first event
	all         bool       // Options.AllGoroutines
	exclude     []string   // Options.Exclude
	roots       []string   // Options.Roots
	gs          map[trace.GoID]*gor
	off         map[key]time.Duration
	samples     map[trace.Stack]int // CPU samples of counted goroutines
	cats        map[catKey]profiles.Category
	res         *Result
	gcSTW       bool       // inside a GC stop-the-world
	now         trace.Time // the time of the event being read
	// With Options.Sched: running time per thread, of all goroutines and
	// of counted ones.
	sched                    *SchedStats
	threadAll, threadCounted map[trace.ThreadID]time.Duration
	samplesAll               map[trace.ThreadID]int
	samplesCounted           map[trace.ThreadID]int
	// With SchedStats.Preempted: the intervals not yet reached, the
	// trace's clock against CLOCK_MONOTONIC, the goroutine each thread
	// has, and the preempted time of counted goroutines while running.
	pre      []Preemption
	monoLead int64 // CLOCK_MONOTONIC minus trace time, from a clock snapshot
	clocked  bool
	onThread map[trace.ThreadID]*gor
	preRun   time.Duration
	// preRunOwn is the part of preRun during which another thread of
	// the process had the CPU (Preemption.ByOwn).
	preRunOwn time.Duration
	// preWake is the preempted time of counted goroutines that began as
	// they woke another, by the waking stack (see wakeWindow).
	preWake map[trace.Stack]time.Duration
	osRun   time.Duration // OS wait of counted goroutines while running
	osOwn   time.Duration // the part of osRun another thread of the process had the CPU
	// The critical path (critical.go): the chains of waits helpers' time
	// is charged through, the helpers' running time by chain and
	// function, and their CPU samples by function.
	vias          []via
	viaIDs        map[via]int32
	helpRun       map[helpKey]time.Duration
	helpOS        map[helpKey][2]time.Duration // their threads' wait for a CPU: another program's, the process's own
	helperSamples map[string]map[trace.Stack]int
	helpSamples   map[helpKey]map[trace.Stack]float64 // the samples within charged time
	open          map[*gor]struct{}                   // goroutines in a wait helpers may end
	sp            splitBufs
	windows       []Window // Options.Windows
}

// windowed returns how much of [from, to) lies in the windows: all of it
// without windows.
func (a *accountant) windowed(from, to trace.Time) time.Duration {
	if a.windows == nil {
		return to.Sub(from)
	}
	// The first window that ends after from.
	i, _ := slices.BinarySearchFunc(a.windows, from, func(w Window, t trace.Time) int { return cmp.Compare(w.To, t+1) })
	var d time.Duration
	for ; i < len(a.windows) && a.windows[i].From < to; i++ {
		d += min(to, a.windows[i].To).Sub(max(from, a.windows[i].From))
	}
	return max(0, d)
}

// inWindow reports whether instant t lies in the windows (always, without).
func (a *accountant) inWindow(t trace.Time) bool {
	return a.windows == nil || a.windowed(t, t+1) > 0
}

// follows reports whether the accountant follows waits into helpers (the
// critical path): not when every goroutine counts, for the helpers then
// count themselves.
func (a *accountant) follows() bool { return !a.all || len(a.roots) > 0 }

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
	if a.cats == nil {
		a.cats = map[catKey]profiles.Category{}
	}
	a.cats[k] = c
	return c
}

func (a *accountant) event(ev *trace.Event) error {
	switch ev.Kind() {
	case trace.EventRegionBegin, trace.EventRegionEnd:
		if !a.all && a.startRegion != "" && ev.Region().Type == a.startRegion {
			if id := ev.Goroutine(); id != trace.NoGoroutine {
				g := a.g(id)
				a.flush(g, ev.Time())
				g.state, g.thread = trace.GoRunning, ev.Thread()
				g.starting = ev.Kind() == trace.EventRegionBegin
			}
			return nil
		}
		if a.all || ev.Region().Type != a.region {
			return nil
		}
		id := ev.Goroutine()
		if id == trace.NoGoroutine {
			return nil
		}
		g := a.g(id)
		// A region begins and ends on its own goroutine, which is running.
		a.flush(g, ev.Time())
		g.state, g.thread = trace.GoRunning, ev.Thread()
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
		g := a.gs[id]
		if a.samplesAll != nil {
			// A CPU sample is 10 ms of its thread's CPU time, whichever
			// goroutine (or none) ran: it splits a thread's CPU between
			// counted goroutines and the rest.
			tid := ev.Thread()
			a.samplesAll[tid]++
			if g != nil && g.counted && g.state == trace.GoRunning && !(a.all && g.class == undecided) {
				a.samplesCounted[tid]++
			}
		}
		if !a.inWindow(ev.Time()) {
			return nil
		}
		if g != nil && a.all {
			if root, ok := sampleRoot(ev.Stack()); ok {
				a.rooted(g, root)
			}
			a.classify(g, ev.Stack())
			if g.class == undecided && g.state == trace.GoRunning {
				p := g.pend()
				p.samples[ev.Stack()]++
				p.cpu++
				return nil
			}
		}
		if g != nil && g.counted && g.state == trace.GoRunning {
			a.sample(ev.Stack(), 1)
		}
		if g != nil && g.helper && !g.counted && g.state == trace.GoRunning {
			a.helperSample(g, ev.Time(), ev.Stack())
		}
	case trace.EventStateTransition:
		st := ev.StateTransition()
		if st.Resource.Kind != trace.ResourceGoroutine {
			return nil
		}
		from, to := st.Goroutine()
		if from == trace.GoWaiting && to == trace.GoRunnable && ev.Goroutine() != st.Resource.Goroutine() && a.inWindow(ev.Time()) {
			// A worker woke a worker: a hand-off (Result.Handoffs).
			if w, g := a.gs[ev.Goroutine()], a.gs[st.Resource.Goroutine()]; w != nil && g != nil && w.counted && g.counted &&
				w.state == trace.GoRunning && !(a.all && (w.class == undecided || g.class == undecided)) {
				a.res.Handoffs++
			}
		}
		if from == trace.GoWaiting && to == trace.GoRunnable && ev.Stack() != trace.NoStack {
			// The event's own goroutine, if any, did the waking.
			if w := a.gs[ev.Goroutine()]; ev.Goroutine() != st.Resource.Goroutine() && w != nil && w.state == trace.GoRunning {
				w.woke, w.wokeAt = ev.Time(), ev.Stack()
			}
		}
		fresh := a.gs[st.Resource.Goroutine()] == nil
		g := a.g(st.Resource.Goroutine())
		a.flush(g, ev.Time())
		if from == trace.GoNotExist && ev.Goroutine() != trace.NoGoroutine {
			a.created(g, a.gs[ev.Goroutine()], st.Stack)
		}
		if from == trace.GoWaiting && to != trace.GoWaiting {
			// The goroutine on which the wake-up is emitted ended the
			// wait: a helper's ends it on the helpers' time.
			var w *gor
			if id := ev.Goroutine(); id != trace.NoGoroutine && id != st.Resource.Goroutine() {
				w = a.gs[id]
			}
			a.woken(g, w, ev.Time(), to)
			if w != nil && to == trace.GoRunnable {
				a.fed(g, w)
			}
		}
		if from == trace.GoRunnable && to != trace.GoRunnable && g.wakeOpen {
			a.resolve(g, ev.Time())
		}
		if a.all {
			if from == trace.GoNotExist {
				// Created while traced: a goroutine started by the
				// runtime's or a profiler's is theirs too (the HTTP
				// transport's connection goroutines of an uploader).
				if c := a.gs[ev.Goroutine()]; ev.Goroutine() != trace.NoGoroutine && c != nil {
					a.classify(c, ev.Stack())
					if c.class == system && len(a.roots) == 0 {
						a.decide(g, system)
					}
				}
			}
			a.classify(g, st.Stack)
			if root := stateRoot(st.Stack); root != "" {
				// A state transition's stack ends at the goroutine's
				// root function (a creation's is that function).
				a.rooted(g, root)
			}
		}
		if !g.gcWorker && st.Stack != trace.NoStack {
			for f := range st.Stack.Frames() {
				if f.Func == "runtime.gcBgMarkWorker" {
					g.gcWorker = true
				}
			}
		}
		a.transition(g, from, to, st)
		if to == trace.GoNotExist && a.follows() && !g.seen && !g.gcWorker && !g.counted {
			// An uncounted goroutine's end: a fan-out starts two an
			// operation, and a window holds hundreds of thousands.
			// Whoever waited for it holds its timeline.
			delete(a.gs, st.Resource.Goroutine())
		}
		if to == trace.GoRunning {
			g.thread = ev.Thread()
		}
		if a.onThread != nil {
			// A goroutine is on its thread while running and in a
			// system call, which it leaves on the same thread.
			switch {
			case to == trace.GoRunning:
				a.onThread[g.thread] = g
			case to != trace.GoSyscall && a.onThread[g.thread] == g:
				delete(a.onThread, g.thread)
			}
		}
		if a.all && fresh && from == trace.GoUndetermined {
			// The tracer tells of a goroutine that existed before the
			// trace when it first does something, or at the end: it was
			// in this state since the start.
			g.since = a.first
			a.flush(g, ev.Time())
		}
	}
	return nil
}

// transition records what a goroutine will be doing in its new state.
func (a *accountant) transition(g *gor, from, to trace.GoState, st trace.StateTransition) {
	g.state = to
	if to == trace.GoRunning && from != to {
		g.ranAt = a.now
	}
	if g.helper {
		a.learnRoot(g, stateRoot(st.Stack))
	}
	if from != to { // not a new generation's status
		g.wokeAt = trace.NoStack
	}
	switch to {
	case trace.GoWaiting:
		if from == trace.GoWaiting && st.Stack == trace.NoStack && g.blockStack != trace.NoStack {
			// A new generation's status without a stack: still the
			// wait it was, where it was.
			return
		}
		if from != trace.GoWaiting {
			g.waitOpen, g.blockFrom, g.waitPend = true, g.since, 0
		}
		g.blockStack, g.blockWhy = st.Stack, st.Reason
		g.blockCat = a.category(st.Stack, st.Reason, false)
		if from != trace.GoWaiting && g.blockCat == profiles.Wait {
			a.opened(g)
		}
		g.offState, g.offStack = Blocked, st.Stack
		g.offFrame = profiles.StateFrame(g.blockCat, "blocked"+because(st.Reason))
		g.blockFrame = g.offFrame
	case trace.GoRunnable:
		if from == to {
			// A new generation's status: still runnable as it was, and
			// for the same cause (after a wake-up it is still the wait's).
			return
		}
		switch from {
		case trace.GoWaiting:
			// Woken: the wait goes on until it runs (issue 9's first rule).
			g.offState, g.offStack = Runnable, g.blockStack
			g.offFrame = profiles.StateFrame(g.blockCat, "runnable after wake"+because(g.blockWhy))
		case trace.GoRunning:
			g.offState, g.offStack = Runnable, st.Stack
			if a.gcSTW {
				g.offFrame = profiles.StateFrame(profiles.GC, "runnable (stopped for GC)")
				break
			}
			c := a.category(st.Stack, st.Reason, true)
			g.offFrame = profiles.StateFrame(c, "runnable"+because(st.Reason))
		case trace.GoSyscall:
			// The system call returned but the P was taken meanwhile.
			g.offState = Runnable
			g.offFrame = profiles.StateFrame(profiles.Sched, "runnable after syscall")
		default:
			// Created, or first seen runnable. For a creation the trace
			// gives the new goroutine's starting stack (its function),
			// the root of the rest of its time; for one first seen at a
			// generation's start, the stack it is runnable at, when the
			// status carries one.
			g.offState, g.offStack = Runnable, st.Stack
			g.offFrame = profiles.StateFrame(profiles.Sched, "runnable")
		}
	case trace.GoSyscall:
		if from != trace.GoSyscall { // not a new generation's status
			g.sysOS, g.sysSelf, g.sysOwn = 0, 0, 0
			// When it entered a call it was in at the trace's start is
			// not known.
			g.sysAt = g.since
			if from == trace.GoUndetermined {
				g.sysAt = -1
			}
		}
		c := profiles.Wait
		if st.Stack != trace.NoStack {
			c = a.category(st.Stack, "syscall", false)
		}
		g.sysCat = c
		g.offState, g.offStack = Syscall, st.Stack
		g.offFrame = profiles.StateFrame(c, "syscall")
	}
}

// because is a state frame's reason in parentheses, or nothing where the
// trace gave none (a park by a runtime path with no reason string).
func because(reason string) string {
	if reason == "" {
		return ""
	}
	return " (" + reason + ")"
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
		if a.threadAll != nil {
			a.threadAll[g.thread] += d
			if g.counted && !(a.all && g.class == undecided) {
				a.threadCounted[g.thread] += d
			}
		}
	}
	if a.windows != nil && !(g.helper && !g.counted) {
		// A helper's timeline is kept whole: the waits it is charged
		// through are counted goroutines', windowed themselves.
		if d = a.windowed(now-trace.Time(d), now); d <= 0 {
			return
		}
	}
	if a.all && g.class == undecided {
		p := g.pend()
		switch g.state {
		case trace.GoRunning:
			p.time[Running] += d
		case trace.GoRunnable, trace.GoWaiting, trace.GoSyscall:
			p.time[g.offState] += d
			p.off[key{frame: g.offFrame, state: g.offState, stack: g.offStack}] += d
		}
		return
	}
	if g.starting {
		// Released but not yet running: the work's wall time, waiting for
		// a CPU. Parked before the release, or running the receive: not.
		if g.state == trace.GoRunnable {
			a.res.Time[Runnable] += d
			a.offTime(key{frame: profiles.StateFrame(profiles.Sched, "runnable (released, waiting for a CPU to start)"), state: Runnable}, d)
		}
		return
	}
	if !g.counted {
		if g.helper {
			a.help(g, now-trace.Time(d), now)
		}
		return
	}
	switch g.state {
	case trace.GoRunning:
		a.res.Time[Running] += d
	case trace.GoWaiting:
		if g.waitOpen && g.blockCat == profiles.Wait {
			// Whose wait it was is known when it ends (woken).
			a.res.Time[Blocked] += d
			g.waitPend += d
			return
		}
		fallthrough
	case trace.GoRunnable, trace.GoSyscall:
		if g.state == trace.GoRunnable && g.wakeOpen {
			// Runnable after a helper woke it: see resolve.
			a.res.Time[Runnable] += d
			g.wakePend += d
			return
		}
		if os := min(d, g.sysOS); g.state == trace.GoSyscall && os > 0 {
			// The thread was preempted inside the system call: that
			// was a wait for a CPU, not for the call — unless the
			// call woke a thread of the process that took the CPU (a
			// pipe's write waking the network poller's thread), which
			// the call's time includes (see wakeWindow).
			self := min(os, g.sysSelf)
			own := min(os-self, g.sysOwn)
			g.sysOS -= os
			g.sysSelf -= self
			g.sysOwn -= own
			a.res.OSOwn += own
			d -= os
			a.res.Time[Runnable] += os
			a.res.OSWait += os - self
			a.res.OSWake += self
			a.ownTime(g, key{frame: profiles.StateFrame(profiles.Sched, osSyscallState), state: Runnable, stack: g.offStack}, os-self)
			a.ownTime(g, key{frame: profiles.StateFrame(g.sysCat, osSelfSyscallState), state: Runnable, stack: g.offStack}, self)
		}
		a.res.Time[g.offState] += d
		a.ownTime(g, key{frame: g.offFrame, state: g.offState, stack: g.offStack}, d)
	}
}

// preempted charges the kernel's preempted intervals that began before ev
// to the goroutine on the thread then: running, the wait goes from running
// to sched at the end (osWait), as the schedstat estimate's does; in a
// system call, it leaves the call's time for sched at the call's stack.
// The trace's clock is related to CLOCK_MONOTONIC by its sync events' clock
// snapshots (Go 1.25 and later), one per generation; a trace without one
// leaves the estimate to osWait.
func (a *accountant) preempted(ev *trace.Event) {
	if ev.Kind() == trace.EventSync {
		if snap := ev.Sync().ClockSnapshot; snap != nil {
			a.monoLead = int64(snap.Mono) - int64(snap.Trace)
			a.clocked = true
		}
	}
	if !a.clocked {
		return
	}
	now := int64(ev.Time()) + a.monoLead
	for len(a.pre) > 0 && a.pre[0].From <= now {
		p := a.pre[0]
		a.pre = a.pre[1:]
		g := a.onThread[trace.ThreadID(p.TID)]
		if g != nil && g.helper && !g.counted && g.state == trace.GoRunning {
			a.helperPreempted(g, p)
			continue
		}
		if g == nil || !g.counted || g.starting || a.all && g.class == undecided {
			continue // not counted work: an idle thread, the runtime's
		}
		d := time.Duration(p.To - p.From)
		switch g.state {
		case trace.GoRunning:
			var w time.Duration // the part its own wake-up of another cost
			if g.wokeAt != trace.NoStack {
				w = a.byWake(p, g.woke)
			}
			if w > 0 {
				if a.preWake == nil {
					a.preWake = map[trace.Stack]time.Duration{}
				}
				a.preWake[g.wokeAt] += w
				d -= w
			}
			// The rest that another thread of the process had the
			// CPU (one woken for another goroutine's hand-off, often):
			// say so, not "the OS ran something else".
			a.preRunOwn += min(d, max(0, p.ByOwn-w))
			a.preRun += d
		case trace.GoSyscall:
			if at := trace.Time(p.From - a.monoLead); at > g.since {
				a.flush(g, at)
			}
			g.sysOS += d
			var self time.Duration
			if g.sysAt >= 0 {
				self = a.byWake(p, g.sysAt)
				g.sysSelf += self
			}
			g.sysOwn += max(0, min(d, p.ByOwn)-self)
		}
	}
}

// wakeWindow is how soon after a goroutine wakes another a preemption of
// its thread counts as caused by the wake-up: Go's ready() hands the woken
// goroutine to a P and wakes a thread to run it (futex), and the kernel
// often runs that thread on the waker's core at once, preempting the waker
// inside Unlock or the send. On the 2-core VM, in the truth suite's
// mutex-all at two goroutines, the preemptions that began within 200 µs of
// the goroutine's last wake-up of another fell 2966 in 2–5 µs, 127 under
// 2 µs, none in 5–10 and 7 in 10–20 (one run; loaded by another process,
// 13942, 120, 4 and 9): a peak at the wake-up and a floor of preemptions
// at random times. Such a preemption, when the CPU went to a thread of the
// process just woken (Preemption.ByWoken), is charged at the waking stack, as
// a yield there — lock inside Unlock, wait inside a send — where the
// workers' own timing of Lock and Unlock puts it; a random one goes where
// the running time goes.
//
// A system call can wake a thread of the process too: writing to a pipe
// wakes the thread parked in the network poller. Of an outside suite's
// pipe write-and-read-back at one goroutine, 7,637 of 8,065 preemptions by
// such a thread began 2–5 µs into the call, and 287 sooner; of a read of
// /dev/zero under three spinning processes, none began before 14 µs. One
// within wakeWindow of the call's start stays the call's time.
const wakeWindow = 10 * time.Microsecond

// byWake is how much of p a wake-up at trace time at cost: the stay of the
// process's just-woken thread on the CPU, if p began within wakeWindow of
// at; else nothing.
func (a *accountant) byWake(p Preemption, at trace.Time) time.Duration {
	if p.ByWoken <= 0 || p.From-(int64(at)+a.monoLead) > int64(wakeWindow) {
		return 0
	}
	return min(time.Duration(p.To-p.From), p.ByWoken)
}

// offTime charges d of off-CPU time to k.
func (a *accountant) offTime(k key, d time.Duration) {
	if d <= 0 {
		return
	}
	if _, ok := a.off[k]; !ok && len(a.off) >= maxStackKeys {
		k.stack = trace.NoStack // keep the time, lose the stack
	}
	a.off[k] += d
}

// ownTime charges d of g's own off-CPU time to k. Time at no stack (a
// goroutine first seen runnable, or blocked since before the trace and
// woken in it: the tracer gives such a status no stack, golang/go#65634)
// goes under g's root function when a stack of g has said it, now or later
// (rooted); else it stays at no root, whose goroutine's the profile cannot
// say. Under load a wall window's workers sat runnable, first seen, for a
// quarter of it, and an HTTP server's accept loop blocked until an upload
// woke it: their time was at no root.
func (a *accountant) ownTime(g *gor, k key, d time.Duration) {
	if d <= 0 {
		return
	}
	if k.stack == trace.NoStack && k.via == 0 && k.root == "" {
		if g.ownRoot == "" {
			if g.unrooted == nil {
				g.unrooted = map[key]time.Duration{}
			}
			g.unrooted[k] += d
		} else {
			k.root = g.ownRoot
		}
	}
	a.offTime(k, d)
}

// rooted records g's root function and moves its time charged at no stack
// so far under it.
func (a *accountant) rooted(g *gor, root string) {
	if g.ownRoot != "" {
		return
	}
	g.ownRoot = root
	for k, d := range g.unrooted {
		if a.off[k] -= d; a.off[k] <= 0 {
			delete(a.off, k)
		}
		k.root = root
		a.off[k] += d
	}
	g.unrooted = nil
}

// sampleRoot returns the root function of a CPU sample's stack that the
// profiler unwound whole, to runtime.goexit (or runtime.main); one that
// stopped short (at racecall, time.now, runtime._System) says nothing of
// its root.
func sampleRoot(s trace.Stack) (string, bool) {
	var last, below string
	n := 0
	for f := range s.Frames() {
		below, last = last, f.Func
		n++
	}
	switch {
	case n < 2 || n >= maxTraceDepth:
		return "", false
	case last == "runtime.goexit":
		return below, !pseudoFrame(below)
	case last == "runtime.main":
		return "main.main", true
	}
	return "", false
}

// sample counts n CPU samples of a counted goroutine at stack s.
func (a *accountant) sample(s trace.Stack, n int) {
	if _, ok := a.samples[s]; ok || len(a.samples) < maxStackKeys {
		a.samples[s] += n
	}
	a.res.CPUSamples += n
}

func (g *gor) pend() *pending {
	if g.pending == nil {
		g.pending = &pending{off: map[key]time.Duration{}, samples: map[trace.Stack]int{}}
	}
	return g.pending
}

// systemRoots are the function-name prefixes of the root functions of the
// goroutines that AllGoroutines leaves out: the runtime's (GC mark workers,
// bgsweep, the scavenger, forcegc, finalizers and cleanups, the tracer's
// advancer and CPU-sample reader), the tracer's and CPU profiler's writers,
// and os/signal's loop. A state transition's stack ends at the root function
// (the main goroutine's at main.main); a CPU sample's has runtime.goexit
// (or runtime.main) below it, which rootFunc skips.
var systemRoots = []string{"runtime.", "runtime/trace.", "runtime/pprof.", "os/signal."}

// maxTraceDepth is the runtime's limit on the frames of a trace stack: a
// stack this deep may be cut before its root, so says nothing of it.
const maxTraceDepth = 128

// SystemGoroutine reports whether a goroutine started with the function
// root (a full name such as "runtime.bgsweep") is one that AllGoroutines
// leaves out, before Options.Exclude.
func SystemGoroutine(root string) bool {
	return hasPrefix(root, systemRoots) && !pseudoFrame(root)
}

// pseudoFrame reports whether f is one of the CPU profiler's stand-ins for a
// stack it could not unwind (runtime._System, runtime._ExternalCode…): such
// a sample still belongs to its goroutine but says nothing of its root.
func pseudoFrame(f string) bool { return strings.HasPrefix(f, "runtime._") }

func hasPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// classify decides, for AllGoroutines, whose goroutine g is from a stack of
// it, once: by the stack's root function.
func (a *accountant) classify(g *gor, s trace.Stack) {
	if g.class != undecided || s == trace.NoStack {
		return
	}
	root, n := rootFunc(s)
	switch {
	case n == 0 || pseudoFrame(root):
		return
	case n < maxTraceDepth && (SystemGoroutine(root) || hasPrefix(root, a.exclude)):
		a.decide(g, system)
	case len(a.roots) > 0 && (n >= maxTraceDepth || !hasPrefix(root, a.roots)):
		a.decide(g, system)
	default:
		a.decide(g, user)
	}
}

// rootFunc returns the function a stack's goroutine was started with and the
// stack's depth.
func rootFunc(s trace.Stack) (string, int) {
	var root, below string
	n := 0
	for f := range s.Frames() {
		below, root = root, f.Func
		n++
	}
	if root == "runtime.goexit" {
		root = below
	}
	if root == "runtime.main" {
		root = "main.main"
	}
	return root, n
}

// decide settles g's class and hands its pending time to the profile (a
// user goroutine's) or drops it.
func (a *accountant) decide(g *gor, c class) {
	if g.class != undecided {
		return
	}
	g.class = c
	p := g.pending
	g.pending = nil
	if c != user {
		return
	}
	g.counted, g.seen = true, true
	if p == nil {
		return
	}
	for st, d := range p.time {
		a.res.Time[st] += d
	}
	for k, d := range p.off {
		a.ownTime(g, k, d)
	}
	for s, n := range p.samples {
		a.sample(s, n)
	}
}

func (a *accountant) finish(end trace.Time) {
	defer a.osWait()
	for _, g := range a.gs {
		a.flush(g, end)
		if g.waitOpen && g.counted {
			a.woken(g, nil, end, trace.GoWaiting) // still waiting: its own wait
		}
		if g.wakeOpen {
			a.resolve(g, end)
		}
		if a.all && g.class == undecided {
			// No stack of it in the whole trace: it never blocked,
			// was never sampled and started before the trace. Not
			// the runtime's (they all block with a stack), so count it,
			// unless only goroutines with known roots count.
			c := user
			if len(a.roots) > 0 {
				c = system
			}
			a.decide(g, c)
		}
		if g.seen {
			a.res.Goroutines++
		}
		if g.gcWorker {
			a.res.BackgroundGC += g.running
		}
	}
}

// osWait moves the time counted goroutines were "running" while their
// thread waited in the kernel's run queue (another process, or another of
// this process's threads, had the CPU) from running to sched, then builds
// the profile. The tracer cannot see it: to Go the goroutine is running.
// With the kernel's preempted intervals (SchedStats.Preempted) that time is
// exact, summed by preempted as the trace is read; without, it is
// estimated (estimateOSWait).
//
// Per thread, the kernel says exactly how much CPU it had over the window
// (/proc/TID/schedstat); the CPU samples on the thread, each 10 ms of its
// CPU whoever ran, split that CPU between the counted goroutines and the
// rest; what the counted goroutines ran beyond their CPU, their thread
// spent waiting (at most its run-queue wait). Splitting the wait by
// running time instead put it on the worker, not on the GC workers that
// shared its threads and were descheduled more: a lone worker with 95 CPU
// samples in a 1 s window was charged 39% sched. Without samples on a
// thread, its wait is split by running time.
func (a *accountant) osWait() {
	defer func() { a.res.Profile = a.build() }()
	if a.sched == nil || a.threadAll == nil {
		return
	}
	wait := a.preRun
	if a.res.OSWaitExact = a.clocked; !a.clocked {
		wait = a.estimateOSWait()
	}
	// Preemptions at a wake-up are off-CPU time at the waking stack.
	var woke time.Duration
	for _, d := range a.preWake {
		woke += d
	}
	if woke > 0 {
		scale := min(1, float64(a.res.Time[Running])/float64(woke))
		var moved time.Duration
		for s, d := range a.preWake {
			d = time.Duration(float64(d) * scale)
			moved += d
			a.offTime(key{frame: profiles.StateFrame(a.category(s, "", true), osWakeState), state: Runnable, stack: s}, d)
		}
		a.res.OSWake += moved
		a.res.Time[Running] -= moved
		a.res.Time[Runnable] += moved
	}
	wait = min(wait, a.res.Time[Running])
	if wait <= 0 {
		return
	}
	a.osRun = wait
	if a.clocked && a.preRun > 0 {
		// Where running time capped the wait, the own part in proportion.
		a.osOwn = time.Duration(float64(a.preRunOwn) * float64(wait) / float64(a.preRun))
		a.res.OSOwn += a.osOwn
	}
	a.res.OSWait += wait
	a.res.Time[Running] -= wait
	a.res.Time[Runnable] += wait
}

// estimateOSWait is the running time the counted goroutines' threads
// waited for a CPU, from the threads' schedstat totals over the window.
func (a *accountant) estimateOSWait() time.Duration {
	var wait time.Duration
	for tid, counted := range a.threadCounted {
		before, okB := a.sched.Before[int64(tid)]
		after, okA := a.sched.After[int64(tid)]
		if !okA {
			continue // the thread exited: unknown
		}
		if !okB {
			before = SchedStat{} // started during the window
		}
		dRun, dWait := after.Run-before.Run, after.Wait-before.Wait
		if dWait <= 0 || counted <= 0 {
			continue
		}
		var w time.Duration
		if all := a.samplesAll[tid]; all > 0 {
			cpu := time.Duration(float64(dRun) * float64(a.samplesCounted[tid]) / float64(all))
			w = counted - cpu
		} else {
			busy := max(dRun+dWait, a.threadAll[tid])
			w = time.Duration(float64(dWait) * float64(counted) / float64(busy))
		}
		wait += max(0, min(w, dWait))
	}
	return wait
}

// osWaitState is the state frame text of the time a goroutine was running
// to Go while its thread waited for a CPU, osOwnState of the part of it
// another thread of the process had the CPU (the runtime's thread woken for
// another goroutine, a GC worker: on an idle machine most of it); osSyscallState
// of the time its thread waited for one inside a system call.
const (
	osWaitState        = "runnable (its thread waited for a CPU: the OS ran something else)"
	osSyscallState     = SyscallWaitState + " (its thread waited for a CPU)"
	osOwnState         = "runnable (its thread waited for a CPU: another thread of this process had it)"
	osWaitUnknownState = "runnable (its thread waited for a CPU)"
	osWakeState        = "runnable (its thread was preempted as it woke another goroutine)"
	osStartState       = "runnable (its thread was preempted as it began to run)"
	osSelfSyscallState = SyscallWaitState + " (a thread of this process, just woken, took its CPU)"
)

// SyscallWaitState begins the state frame text of every wait for a CPU
// inside a system call (osSyscallState, osSelfSyscallState), for readers
// of the profile that classify such a wait as the call's own time.
const SyscallWaitState = "runnable in a system call"

// osOtherState is the frame of the OS wait no thread of the process had
// the CPU for: another program's, where the kernel's records say who had
// each CPU; where they do not (the per-thread estimate, or too many switches
// to keep), only that it was a wait for a CPU.
func (a *accountant) osOtherState() string {
	if !a.clocked || a.sched == nil || a.sched.OwnUnknown {
		return osWaitUnknownState
	}
	return osWaitState
}

// build assembles the pprof profile.
func (a *accountant) build() *profile.Profile {
	b := newBuilder()
	// The OS wait was running time to Go: it goes where the running time
	// goes, at the CPU samples' stacks (the kernel says how long a thread
	// waited, not where its goroutine was), so that a goroutine's flame
	// tower holds it. Its category is a preemption's at that stack: sched,
	// but lock where the goroutine was inside a lock — a spinning waiter,
	// an Unlock waking the next — and wait inside a wait.
	b.spread(a, a.res.Time[Running], Running, nil)
	for _, part := range []struct {
		d     time.Duration
		state string
	}{{a.osRun - a.osOwn, a.osOtherState()}, {a.osOwn, osOwnState}} {
		b.spread(a, part.d, Runnable, func(s trace.Stack) []trace.StackFrame {
			return []trace.StackFrame{{Func: profiles.StateFrame(a.category(s, "", true), part.state)}}
		})
	}
	for k, d := range a.off {
		if k.via != 0 {
			// A helper's time under the wait it was charged to.
			c := a.rules.Classify([]string{k.frame})
			b.addFrames(int64(d), k.state, append([]trace.StackFrame{{Func: k.frame}}, stackFrames(k.stack)...), b.chain(a, k.via, c))
			continue
		}
		leaf := []trace.StackFrame{{Func: k.frame}}
		if k.root != "" {
			leaf = append(leaf, trace.StackFrame{Func: k.root})
		}
		b.add(int64(d), k.state, leaf, k.stack)
	}
	b.addHelped(a)
	return b.p
}

// spread adds d of time in state st over a's CPU samples' stacks, each
// sample an equal share, under leaf(stack) if leaf is set; without samples,
// all of it at no stack, under leaf(NoStack) or a frame that says so.
func (b *builder) spread(a *accountant, d time.Duration, st State, leaf func(trace.Stack) []trace.StackFrame) {
	if d <= 0 {
		return
	}
	frames := func(s trace.Stack) []trace.StackFrame {
		if leaf == nil {
			return nil
		}
		return leaf(s)
	}
	if a.res.CPUSamples == 0 || len(a.samples) == 0 {
		f := frames(trace.NoStack)
		if f == nil {
			f = []trace.StackFrame{{Func: profiles.StateFrame(profiles.Other, "running, no CPU samples")}}
		}
		b.add(int64(d), st, f, trace.NoStack)
		return
	}
	// Each sample stands for an equal share; the rounding remainder goes
	// to the last one so the total is exact.
	per := float64(d) / float64(a.res.CPUSamples)
	var given int64
	n := 0
	for s, count := range a.samples {
		n++
		v := int64(per * float64(count))
		if n == len(a.samples) {
			v = int64(d) - given
		}
		given += v
		b.add(v, st, frames(s), s)
	}
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
		var root string
		for f := range s.Frames() {
			locs = append(locs, b.loc(f))
			root = f.Func
		}
		// A CPU sample's stack ends in runtime.goexit, a state
		// transition's at the goroutine's own root function: without the
		// goexit frame the running and the off-CPU time of the same code
		// share one root in a flame graph instead of growing two.
		if root == "runtime.goexit" {
			locs = locs[:len(locs)-1]
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
