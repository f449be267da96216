package profiles

import (
	"strings"
	"testing"
)

// cipherWork are the cipher-cache scenario's work patterns.
var cipherWork = []string{`^crypto/internal/fips140/sha256\.`, `^crypto/sha256\.`}

// st splits a stack written leaf first as "a < b < c", the way
// `go tool pprof -traces` prints it top to bottom.
func st(s string) []string {
	parts := strings.Split(s, "<")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// The stacks below were captured on Go 1.26 with fgprof and runtime/pprof
// (CPU, mutex, block) from testdata/real/capture.go.txt; see testdata/real.
func TestClassifyGo126(t *testing.T) {
	r, err := DefaultRules().WithWork(cipherWork...)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		stack string
		want  Category
	}{
		// work
		{"sha256 block", "crypto/internal/fips140/sha256.blockSHANI < crypto/internal/fips140/sha256.block < crypto/internal/fips140/sha256.(*Digest).Write < crypto/sha256.Sum256 < main.hashWork < main.worker < runtime.goexit", Work},
		{"preempted in sha256", "runtime.asyncPreempt2 < runtime.asyncPreempt < crypto/internal/fips140/sha256.(*Digest).Sum < crypto/sha256.Sum256 < main.hashWork < main.worker < runtime.goexit", Sched},
		{"memmove under sha256", "runtime.memmove < crypto/internal/fips140/sha256.(*Digest).Write < crypto/sha256.Sum256 < main.worker", Work},
		{"alloc in sha256.New is alloc", "runtime.mallocgcSmallScanNoHeader < runtime.mallocgc < runtime.newobject < crypto/sha256.New < main.worker", Alloc},

		// lock
		{"mutex park", "runtime.gopark < runtime.goparkunlock < runtime.semacquire1 < internal/sync.runtime_SemacquireMutex < internal/sync.(*Mutex).lockSlow < internal/sync.(*Mutex).Lock < sync.(*Mutex).Lock < main.worker < runtime.goexit", Lock},
		{"mutex spin", "runtime.procyieldAsm < runtime.procyield < internal/sync.runtime_doSpin < internal/sync.(*Mutex).lockSlow < internal/sync.(*Mutex).Lock < sync.(*Mutex).Lock < main.worker", Lock},
		{"rwmutex read park", "runtime.gopark < runtime.goparkunlock < runtime.semacquire1 < sync.runtime_SemacquireRWMutexR < sync.(*RWMutex).RLock < main.worker < runtime.goexit", Lock},
		{"rwmutex write park", "runtime.gopark < runtime.goparkunlock < runtime.semacquire1 < sync.runtime_SemacquireRWMutex < sync.(*RWMutex).Lock < main.worker < runtime.goexit", Lock},
		{"unlock wakes waiter", "runtime.readyWithTime < runtime.semrelease1 < internal/sync.runtime_Semrelease < internal/sync.(*Mutex).unlockSlow < internal/sync.(*Mutex).Unlock < sync.(*Mutex).Unlock < sync.(*RWMutex).Unlock < main.worker < runtime.goexit", Lock},
		{"unlock hands off", "runtime.goyield < runtime.semrelease1 < internal/sync.runtime_Semrelease < internal/sync.(*Mutex).unlockSlow < internal/sync.(*Mutex).Unlock < sync.(*Mutex).Unlock < main.worker", Lock},
		{"runtime lock in semacquire", "runtime.lock2 < runtime.lockWithRank < runtime.semacquire1 < internal/sync.runtime_SemacquireMutex < internal/sync.(*Mutex).lockSlow < internal/sync.(*Mutex).Lock < sync.(*Mutex).Lock < main.worker", Lock},
		{"atomic in RLock", "sync/atomic.(*Int32).Add < sync.(*RWMutex).RLock < main.worker", Lock},
		{"mutex profile leaf", "sync.(*Mutex).Unlock < main.worker < main.main.gowrap1", Lock},
		{"lost runtime lock", "runtime._LostContendedRuntimeLock", Lock},
		{"bare runtime lock", "runtime.futex < runtime.futexsleep < runtime.lock2 < runtime.lockWithRank < runtime.lock", Lock},

		// alloc
		{"makeslice", "runtime.mallocgcSmallNoscan < runtime.mallocgc < runtime.makeslice < main.worker < runtime.goexit", Alloc},
		{"refill", "runtime.(*mcentral).cacheSpan < runtime.(*mcache).refill < runtime.(*mcache).nextFree < runtime.mallocgcSmallNoscan < runtime.mallocgc < runtime.makeslice < main.worker", Alloc},
		{"memclr under mallocgc", "runtime.memclrNoHeapPointers < runtime.mallocgcLarge < runtime.mallocgc < runtime.makeslice < main.worker", Alloc},
		{"growslice copy", "runtime.memmove < runtime.growslice < main.worker", Alloc},
		{"sync.Pool", "sync.(*Pool).Get < main.worker", Alloc},

		// gc
		{"mark worker", "runtime.findObject < runtime.scanObject < runtime.gcDrain < runtime.gcDrainMarkWorkerFractional < runtime.gcBgMarkWorker.func2 < runtime.systemstack < runtime.gcBgMarkWorker", GC},
		{"green tea span scan", "runtime.tryDeferToSpanScan < runtime.scanObject < runtime.gcDrain < runtime.gcBgMarkWorker.func2 < runtime.systemstack < runtime.gcBgMarkWorker", GC},
		{"assist parks in gcMarkDone", "runtime.gopark < runtime.goparkunlock < runtime.semacquire1 < runtime.semacquire < runtime.gcMarkDone < runtime.gcAssistAlloc < runtime.deductAssistCredit < runtime.mallocgc < runtime.makeslice < main.worker < runtime.goexit", GC},
		{"write barrier without prefix", "gcWriteBarrier < main.worker", GC},
		{"write barrier flush", "runtime.wbBufFlush1 < runtime.wbBufFlush.func1 < runtime.systemstack < runtime.wbBufFlush < gcWriteBarrier < main.(*lru).insert", GC},
		{"bulk barrier", "runtime.bulkBarrierPreWriteSrcOnly < runtime.growslice < main.worker", GC},
		{"sweep lock2 under allocation", "runtime.lock2 < runtime.lockWithRank < runtime.lock < runtime.(*sweepLocked).sweep < runtime.sweepone < runtime.deductSweepCredit < runtime.(*mcentral).cacheSpan < runtime.(*mcache).refill < runtime.mallocgc", GC},
		{"sweep freeSpan", "runtime.(*pageAlloc).update < runtime.(*pageAlloc).free < runtime.(*mheap).freeSpanLocked < runtime.(*sweepLocked).sweep.(*mheap).freeSpan.func2 < runtime.systemstack < runtime.(*mheap).freeSpan < runtime.(*sweepLocked).sweep < runtime.sweepone < runtime.deductSweepCredit < runtime.(*mcentral).cacheSpan < runtime.(*mcache).refill < runtime.mallocgc", GC},
		{"bgsweep", "runtime.(*spanSet).push < runtime.(*sweepLocked).sweep < runtime.sweepone < runtime.bgsweep", GC},
		{"mark termination futex", "runtime.futex < runtime.futexwakeup < runtime.notewakeup < runtime.startTheWorldWithSema < runtime.gcMarkTermination.func3 < runtime.systemstack < runtime.gcMarkTermination < runtime.gcMarkDone < runtime.gcBgMarkWorker", GC},
		{"forEachP lock in gcMarkDone", "runtime.unlock < runtime.forEachPInternal < runtime.gcMarkDone.forEachP.func5 < runtime.systemstack < runtime.forEachP < runtime.gcMarkDone < runtime.gcBgMarkWorker", GC},
		{"M stopped for GC", "runtime.futex < runtime.futexsleep < runtime.notesleep < runtime.mPark < runtime.stopm < runtime.gcstopm < runtime.findRunnable < runtime.schedule < runtime.goschedImpl < runtime.gopreempt_m < runtime.newstack < runtime.morestack", GC},
		{"allocation starts GC", "runtime.gcTrigger.test < runtime.mallocgcSmallNoscan < runtime.mallocgc < runtime.makeslice < main.worker", GC},
		{"scavenger wake in gcStart", "runtime.unlock < runtime.wakep < runtime.injectglist < runtime.(*scavengerState).wake < runtime.finishsweep_m < runtime.gcStart.func3 < runtime.systemstack < runtime.gcStart < runtime.mallocgcSmallNoscan < runtime.mallocgc", GC},

		// sched
		{"WaitGroup is not a lock", "runtime.gopark < runtime.goparkunlock < runtime.semacquire1 < sync.runtime_SemacquireWaitGroup < sync.(*WaitGroup).Wait < main.main < runtime.main < runtime.goexit", Wait},
		{"findRunnable lock", "runtime.unlock < runtime.findRunnable < runtime.schedule < runtime.park_m < runtime.mcall", Sched},
		{"steal", "runtime.usleep < runtime.runqgrab < runtime.runqsteal < runtime.stealWork < runtime.findRunnable < runtime.schedule < runtime.park_m < runtime.mcall", Sched},
		{"preempt lock", "runtime.osyield < runtime.lock2 < runtime.lockWithRank < runtime.lock < runtime.goschedImpl < runtime.gopreempt_m < runtime.newstack < runtime.morestack", Sched},
		{"Gosched", "runtime.Gosched < main.worker < runtime.goexit", Sched},
		{"chan recv", "runtime.gopark < runtime.chanrecv < runtime.chanrecv2 < main.main.func1 < runtime.goexit", Wait},
		{"sleep", "runtime.gopark < time.Sleep < main.main.func2 < runtime.goexit", Wait},
		{"netpoll syscall", "internal/runtime/syscall/linux.Syscall6 < internal/runtime/syscall/linux.EpollWait < runtime.netpoll < runtime.findRunnable < runtime.schedule < runtime.park_m < runtime.mcall", Sched},
		{"bare gopark", "runtime.gopark", Wait},

		// other
		{"cache bookkeeping", "runtime.mapaccess1_fast64 < main.worker < runtime.goexit", Other},
		{"swiss map", "internal/runtime/maps.ctrlGroup.matchH2 < runtime.mapassign_fast64 < main.worker", Other},
		{"user code", "main.worker", Other},
		{"user helper not in work", "main.hashWork < main.worker", Other},
		{"fgprof stop the world", "runtime.unlock < runtime.stopTheWorldWithSema < runtime.stopTheWorld.func1 < runtime.systemstack < runtime.stopTheWorld < runtime.goroutineProfileWithLabelsConcurrent < runtime.goroutineProfileWithLabels < runtime.goroutineProfileInternal < runtime.GoroutineProfile < github.com/felixge/fgprof.(*profiler).GoroutineProfile < github.com/felixge/fgprof.Start.func1", Other},
		{"memory profiling in mallocgc", "runtime.stkbucket < runtime.mProf_Malloc < runtime.profilealloc < runtime.mallocgcSmallNoscan < runtime.mallocgc < runtime.makeslice < main.worker", Other},
		{"block profiling in unlock", "runtime.fpTracebackPartialExpand < runtime.saveblockevent < sync.event < runtime.semrelease1 < internal/sync.runtime_Semrelease < internal/sync.(*Mutex).unlockSlow < internal/sync.(*Mutex).Unlock < sync.(*Mutex).Unlock < main.worker", Other},
		{"pprof writer", "runtime.notetsleepg < runtime.(*profBuf).read < runtime/pprof.readProfile < runtime/pprof.profileWriter < runtime.goexit", Other},
		{"C++ frames", "std::vector<int>::push_back < main", Other},
		{"address only", "0x4f2a10 < 0x4f1000", Other},
		{"empty stack", "", Other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stack := st(tt.stack)
			if tt.stack == "" {
				stack = nil
			}
			if got := r.Classify(stack); got != tt.want {
				t.Errorf("Classify = %s, want %s\nstack: %s", got, tt.want, tt.stack)
			}
		})
	}
}

func TestWithoutWorkNothingIsWork(t *testing.T) {
	s := st("crypto/internal/fips140/sha256.blockSHANI < crypto/sha256.Sum256 < main.worker")
	if got := DefaultRules().Classify(s); got != Other {
		t.Errorf("default rules: %s, want other", got)
	}
}

func TestWorkPatternsBeforeBuiltins(t *testing.T) {
	r, err := DefaultRules().WithWork(`^runtime\.memmove$`)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Classify(st("runtime.memmove < runtime.growslice < main.f")); got != Work {
		t.Errorf("memmove as work: %s", got)
	}
	if _, err := DefaultRules().WithWork(`(`); err == nil || !strings.Contains(err.Error(), "work pattern") {
		t.Errorf("bad work pattern: err = %v", err)
	}
}

func TestParseRules(t *testing.T) {
	src := `# comment
lock   ^example\.com/spin\.\(\*Lock\)\.

work	^example\.com/codec\.
other? ^cgocall$
alloc  ^runtime\.memmove$
`
	r, err := ParseRules(strings.NewReader(src), "rules.txt")
	if err != nil {
		t.Fatal(err)
	}
	r, err = r.WithWork(`^example\.com/hash\.`)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, stack string
		want        Category
	}{
		{"user lock", "example.com/spin.(*Lock).Acquire < main.f", Lock},
		{"user work", "runtime.memclrNoHeapPointers < example.com/codec.Encode < main.f", Work},
		{"user rule beats built-in", "runtime.memmove < crypto/sha256.Sum256", Alloc},
		{"scenario work", "example.com/hash.Sum < main.f", Work},
		{"fallback", "runtime.cgocall < cgocall", Other},
		{"fallback loses to context", "cgocall < runtime.mallocgc", Alloc},
		{"built-ins still there", "sync.(*Mutex).Lock < main.f", Lock},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Classify(st(tt.stack)); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
	list := r.List()
	if list[0].Category != Lock || list[2].Fallback != true || list[4].Pattern != `^example\.com/hash\.` {
		t.Errorf("List order wrong: %+v", list[:5])
	}
}

func TestParseRulesErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"no pattern", "lock\n", "r:1: want \"category regexp\""},
		{"bad category", "# x\nspeed ^a\n", "r:2: unknown category \"speed\""},
		{"bad regexp", "work (\n", "r:1: bad pattern"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseRules(strings.NewReader(tt.src), "r")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := LoadRules("testdata/no-such-file"); err == nil {
		t.Error("LoadRules of a missing file: no error")
	}
}

func TestPalette(t *testing.T) {
	seen := map[string]Category{}
	for i, c := range Categories {
		col := c.Color()
		if len(col) != 7 || col[0] != '#' {
			t.Errorf("%s: colour %q", c, col)
		}
		if o, dup := seen[col]; dup {
			t.Errorf("%s and %s share colour %s", c, o, col)
		}
		seen[col] = c
		if c.Index() != i || !c.Valid() {
			t.Errorf("%s: Index %d Valid %v", c, c.Index(), c.Valid())
		}
	}
	if Category("bogus").Color() != Other.Color() {
		t.Error("unknown category should get Other's colour")
	}
}

func TestClassUnder(t *testing.T) {
	// Building from the root, as a flame tree does, must agree with
	// Classify's leaf-first walk.
	r, _ := DefaultRules().WithWork(cipherWork...)
	stacks := []string{
		"runtime.lock2 < runtime.lock < runtime.(*sweepLocked).sweep < runtime.sweepone < runtime.mallocgc < main.worker",
		"runtime.futex < runtime.futexsleep < runtime.lock2 < runtime.lock",
		"runtime.memmove < crypto/sha256.Sum256 < main.worker",
		"runtime.asyncPreempt2 < runtime.asyncPreempt < main.worker",
	}
	for _, s := range stacks {
		names := st(s)
		var c Class
		for i := len(names) - 1; i >= 0; i-- {
			c = r.Frame(names[i]).Under(c)
		}
		if got, want := c.Category(), r.Classify(names); got != want {
			t.Errorf("%s: root-first %s, leaf-first %s", s, got, want)
		}
	}
}
