package profiles

import (
	"regexp"
	"sync"
)

// tracerPattern matches the execution tracer's own functions (TracerFrame).
const tracerPattern = `^runtime\.(\(\*trace[A-Z][A-Za-z]*\)\.|trace[A-Z])`

var tracerFrame = regexp.MustCompile(tracerPattern)

// TracerFrame reports whether fn, a full function name, is the execution
// tracer's own (traceBuf, traceWriter, traceLocker.GoCreate, traceStack…):
// time a traced execution spends that an untraced one does not. The
// tracer's functions call no code of the program's, so a stack with one of
// them is the tracer's whatever lies below it (memmove, nanotime, a lock).
func TracerFrame(fn string) bool { return tracerFrame.MatchString(fn) }

// builtinRules are the Go 1.26 frame names perflab knows, in the order they
// are consulted. They were read off real stacks (fgprof, CPU, mutex, block
// and allocs profiles of a program contending a sync.Mutex and RWMutex,
// hashing with crypto/sha256 and allocating; see testdata/real and
// ../shared/DESIGN.md's frame facts), not guessed.
//
// The principle: a normal (deciding) rule only names frames that never call
// back into user code, so the leaf-most decision is the right one. Frames
// shared by several subsystems (runtime.lock2, futex, semacquire1, gopark,
// ready) are fallback rules: the sweeper's lock is gc, the scheduler's is
// sched, and only a lock with no other context is lock. Frames that say
// nothing (systemstack, mcall, goexit, memmove) match no rule
// and take the class of the frames around them.
var builtinRules = []Rule{
	// Profiler overhead is never the program's: fgprof's goroutine
	// snapshots stop the world, and memory/block profiling records stacks
	// inside mallocgc and semrelease.
	{Category: Other, Pattern: `^runtime/pprof\.`},
	{Category: Other, Pattern: `^github\.com/felixge/fgprof\.`},
	// The execution tracer's own work (traceBuf, traceWriter, traceLocker,
	// traceStack…), seen in the CPU samples of a traced window. Not
	// runtime.traceback*, which has no capital after "trace".
	{Category: Other, Pattern: tracerPattern},
	{Category: Other, Pattern: `^runtime\.(GoroutineProfile|goroutineProfileWithLabels.*|goroutineProfileInternal|doRecordGoroutineProfile.*|tryRecordGoroutineProfile|saveg|makeProfStack.*|mProf_.*|profilealloc|blockevent|saveblockevent|fpTracebackPartialExpand|stkbucket|sigprof|cpuprof.*|\(\*cpuProfile\)\..*|\(\*profBuf\)\..*)$`},

	// Garbage collection. gcWriteBarrier is an assembly symbol without the
	// runtime. prefix in Go 1.26 profiles.
	{Category: GC, Pattern: `^(runtime\.)?gcWriteBarrier`},
	{Category: GC, Pattern: `^runtime\.gc[A-Z]`}, // gcBgMarkWorker, gcDrain*, gcAssistAlloc*, gcMarkDone, gcMarkTermination*, gcStart, gcTrigger.test, gcWaitOnMark
	{Category: GC, Pattern: `^runtime\.(gcstopm|gcmarknewobject|gcenable|GC|wbBuf.*|\(\*wbBuf\)\..*|bulkBarrierPreWrite.*|bulkBarrierBitmap|typeBitsBulkBarrier|scanobject|scanObject|scanSpan.*|scanblock|scanstack|scanframeworker|scanConservative|greyobject|shade|markroot.*|markrootBlock|markrootSpans|tryDeferToSpanScan|findObject|\(\*gcWork\)\..*|\(\*gcControllerState\)\..*|\(\*gcCPULimiterState\)\..*|\(\*mspan\)\.moveInlineMarks|\(\*spanQueue\)\..*|\(\*gcBits\)\..*)$`},
	// Sweeping is gc even when an allocation does it (deductSweepCredit,
	// mheap.reclaim): without the collector there would be nothing to sweep.
	{Category: GC, Pattern: `^runtime\.(bgsweep|sweepone|deductSweepCredit|freeDeadSpanSPMCs|finishsweep_m|\(\*sweepLocked\)\..*|\(\*sweepLocker\)\..*|\(\*activeSweep\)\..*|\(\*mheap\)\.reclaim.*|\(\*mheap\)\.freeSpan.*|\(\*mcentral\)\.(uncacheSpan|partialSwept|fullSwept|partialUnswept|fullUnswept))$`},
	{Category: GC, Pattern: `^runtime\.(bgscavenge|\(\*scavengerState\)\..*|\(\*pageAlloc\)\.scavenge.*|\(\*mheap\)\.scavenge.*)$`},

	// Allocation, including the copy in growslice and string conversions
	// (a conversion that allocates is an allocation) and sync.Pool, which
	// exists to avoid allocating.
	{Category: Alloc, Pattern: `^runtime\.(mallocgc.*|newobject|newarray|makeslice|makeslice64|makeslicecopy|growslice|makemap.*|makechan|rawstring|rawstringtmp|rawbyteslice|rawruneslice|stringtoslicebyte|stringtoslicerune|slicebytetostring|slicerunetostring|intstring|convT.*|stackalloc|stackcacherefill|copystack|memclrNoHeapPointersChunked|\(\*mcache\)\.(nextFree|refill|allocLarge)|\(\*mcentral\)\.(cacheSpan|grow)|\(\*mheap\)\.(alloc.*|grow)|\(\*mspan\)\.(nextFreeIndex|refillAllocCache)|nextFreeFast|heapSetType.*|persistentalloc.*)$`},
	{Category: Alloc, Pattern: `^internal/runtime/maps\.(newarray|newTable|\(\*table\)\.(grow|split|rehash)|\(\*Map\)\.(growToSmall|growToTable))$`},
	{Category: Alloc, Pattern: `^sync\.\(\*Pool\)\.`},

	// Locks. sync.Mutex is internal/sync.Mutex since Go 1.24.
	{Category: Lock, Pattern: `^(internal/)?sync\.\(\*(Mutex|RWMutex)\)\.`},
	{Category: Lock, Pattern: `^sync\.\(\*(rlocker)\)\.`},
	{Category: Lock, Pattern: `^(internal/)?sync\.runtime_(SemacquireMutex|SemacquireRWMutex|SemacquireRWMutexR|canSpin|doSpin)$`},
	{Category: Lock, Pattern: `^internal/sync\.runtime_Semrelease$`}, // only internal/sync.Mutex uses it
	{Category: Lock, Pattern: `^runtime\.(lock|unlock|lock2|unlock2|lockWithRank|unlockWithRank|_LostContendedRuntimeLock|semacquire|semacquire1|semrelease|semrelease1|\(\*semaRoot\)\..*)$`, Fallback: true},

	// Waiting for a signal rather than for a lock: channels, select,
	// WaitGroup, Cond, sleep, the network poller and blocking system calls.
	// sync.runtime_SemacquireWaitGroup is a WaitGroup wait, not a lock.
	{Category: Wait, Pattern: `^runtime\.(chansend.*|chanrecv.*|selectgo|selectnbsend|selectnbrecv.*|block|closechan|notifyList.*|timeSleep|resetForSleep|netpollblock.*|poll_runtime_pollWait)$`},
	{Category: Wait, Pattern: `^sync\.(runtime_SemacquireWaitGroup|runtime_notifyList.*|\(\*WaitGroup\)\..*|\(\*Cond\)\..*)$`},
	{Category: Wait, Pattern: `^time\.Sleep$`},
	{Category: Wait, Pattern: `^internal/poll\.runtime_pollWait$`},

	// Asynchronous preemption: a CPU sample in asyncPreempt is the
	// goroutine being preempted (the injected call saves every register
	// and enters the scheduler), which is the scheduler's time, not the
	// interrupted frame's. It used to take its caller's category and read
	// as work under hashing (issue 13 asked to check what users expect).
	{Category: Sched, Pattern: `^runtime\.asyncPreempt2?$`},

	// The scheduler.
	{Category: Sched, Pattern: `^runtime\.(schedule|findRunnable|findrunnable|park_m|parkunlock_c|goschedImpl|gosched_m|Gosched|goschedguarded.*|gopreempt_m|preemptPark|execute|runqsteal|runqgrab|stealWork|checkTimers|sysmon|retake|goexit0|goexit1|newproc|newproc1|exitsyscall.*|entersyscall.*|reentersyscall|handoffp|netpoll.*|resetspinning|checkRunqsNoP|checkIdleGCNoP|\(\*timers?\)\..*)$`},
	// A bare park is a wait; the scheduler's own helpers are sched.
	{Category: Wait, Pattern: `^runtime\.(gopark|goparkunlock)$`, Fallback: true},
	{Category: Sched, Pattern: `^runtime\.(goyield.*|stopm|mPark|injectglist|runSafePointFn|forEachP.*|ready|goready.*|readyWithTime|wakep|startm|notesleep|notetsleep|notetsleepg|notetsleep_internal|notewakeup|stopTheWorld.*|startTheWorld.*)$`, Fallback: true},

	// Off-CPU states of a wall-clock profile made from an execution trace
	// (internal/wallclock): a leaf frame named "[category] state" that
	// carries the category decided when the state was recorded.
	{Category: Work, Pattern: `^\[work\] `},
	{Category: Lock, Pattern: `^\[lock\] `},
	{Category: Wait, Pattern: `^\[wait\] `},
	{Category: Alloc, Pattern: `^\[alloc\] `},
	{Category: GC, Pattern: `^\[gc\] `},
	{Category: Sched, Pattern: `^\[sched\] `},
	{Category: Other, Pattern: `^\[other\] `},
}

var builtin = sync.OnceValue(func() []rule {
	out := make([]rule, len(builtinRules))
	for i, r := range builtinRules {
		ru, err := compileRule(r)
		if err != nil {
			panic("profiles: built-in rule: " + err.Error())
		}
		out[i] = ru
	}
	return out
})
