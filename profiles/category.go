// Package profiles reads pprof profiles safely and explains where their time
// goes: every sample is put in one of seven categories (work, lock, wait,
// alloc, gc, sched, other) by ordered, context-aware rules over its stack, and a
// profile's samples add up to a time budget per category.
//
// The categories answer the question perflab asks of every case: how much of
// an operation is the useful work the scenario measures, and how much is
// waiting for locks, allocating, collecting garbage, scheduling goroutines or
// something else. A scenario says which frames are its work
// (perflab.Scenario.Work); the runtime categories come from built-in rules
// for Go 1.26 frame names, which user rules (LoadRules) can extend or
// override.
package profiles

// Category is the kind of time a stack sample represents.
type Category string

// The categories, in display order (see Categories).
const (
	// Work is time in the frames the scenario declared as its useful work
	// (Rules.WithWork or "work" rules in a rules file). Without such
	// patterns nothing is work: perflab never guesses what is useful.
	Work Category = "work"
	// Lock is time acquiring, waiting for or releasing mutual exclusion:
	// sync.Mutex, sync.RWMutex and the runtime locks taken on their behalf.
	Lock Category = "lock"
	// Wait is time blocked off the CPU waiting for a signal rather than for
	// a lock: channel operations and select, sync.WaitGroup and sync.Cond,
	// time.Sleep, network and system calls (a call's whole time, blocked or
	// running in the kernel, unless a rule claims its stack). A goroutine
	// blocked on a channel is not waiting for a CPU, so this is never Sched.
	Wait Category = "wait"
	// Alloc is time allocating memory: mallocgc and its callers such as
	// makeslice, growslice, newobject and string conversions, span refills,
	// stack growth copies and sync.Pool.
	Alloc Category = "alloc"
	// GC is time in the garbage collector: mark workers and assists, write
	// barriers, sweeping (also when an allocation sweeps), scavenging and
	// stop-the-world pauses started by the collector.
	GC Category = "gc"
	// Sched is time runnable without a CPU (after a preemption or a yield:
	// more goroutines than GOMAXPROCS, or another process on the cores) and
	// time in the scheduler itself: schedule/findRunnable, Gosched,
	// goroutine creation.
	Sched Category = "sched"
	// Other is everything no rule claims: the program's own code outside the
	// declared work (in a cache scenario, the cache's bookkeeping), the
	// profilers' and the tracer's own work, and every frame of a non-Go
	// program.
	Other Category = "other"
)

// Categories lists every category in display order: legends, budgets and
// tables use this order.
var Categories = []Category{Work, Lock, Wait, Alloc, GC, Sched, Other}

// palette is perflab's one palette, chosen from the Okabe–Ito colour-blind
// safe set where it could be, so that lock (vermilion) and work (green) stay
// distinguishable for the most common colour vision deficiencies.
var palette = map[Category]string{
	Work:  "#2e9e6a",
	Lock:  "#d55e00",
	Wait:  "#cc79a7",
	Alloc: "#e6a100",
	GC:    "#8c6bb1",
	Sched: "#3f88c5",
	Other: "#9e9e9e",
}

// Color returns the category's colour as "#rrggbb": the same in SVG and
// HTML flame graphs and in the web UI's charts. An unknown category gets
// Other's colour.
func (c Category) Color() string {
	if s, ok := palette[c]; ok {
		return s
	}
	return palette[Other]
}

// Valid reports whether c is one of Categories.
func (c Category) Valid() bool {
	_, ok := palette[c]
	return ok
}

// Index returns c's position in Categories, or the position of Other for an
// unknown category. It lets callers keep per-category values in arrays.
func (c Category) Index() int {
	for i, x := range Categories {
		if x == c {
			return i
		}
	}
	return len(Categories) - 1
}
