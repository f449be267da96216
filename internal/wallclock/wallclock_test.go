package wallclock

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"math"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/internal/timingtest"
	"github.com/perflab/perflab/profiles"
	xtrace "golang.org/x/exp/trace"
)

const region = "test.worker"

// traced runs f on a goroutine inside a counting region, with the tracer and
// the CPU profiler on, and returns the trace.
func traced(t *testing.T, f func()) []byte {
	t.Helper()
	var tb, cb bytes.Buffer
	if err := pprof.StartCPUProfile(&cb); err != nil {
		t.Fatal(err)
	}
	if err := trace.Start(&tb); err != nil {
		pprof.StopCPUProfile()
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		r := trace.StartRegion(context.Background(), region)
		f()
		r.End()
	}()
	// A goroutine outside any region: never counted.
	go func() {
		defer wg.Done()
		time.Sleep(50 * time.Millisecond)
	}()
	wg.Wait()
	trace.Stop()
	pprof.StopCPUProfile()
	return tb.Bytes()
}

// pairInRegion runs work on the calling goroutine (inside traced's
// region) and at once on a second goroutine in the same region, and waits
// for both: two counted workers.
func pairInRegion(work func()) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r := trace.StartRegion(context.Background(), region)
		work()
		r.End()
	}()
	work()
	wg.Wait()
}

func spin(d time.Duration) {
	buf := make([]byte, 4096)
	for end := time.Now().Add(d); time.Now().Before(end); {
		sha256.Sum256(buf)
	}
}

// TestStates checks the accounting of one goroutine that sleeps, waits for
// a mutex held by another goroutine, waits on a channel, and hashes, each
// for a known time, against the times it measured itself.
func TestStates(t *testing.T) {
	timingtest.Require(t)
	const d = 60 * time.Millisecond
	var mu sync.Mutex
	var sleep, lock, recv time.Duration
	osWait := runQueueWait()
	data := traced(t, func() {
		t0 := time.Now()
		time.Sleep(d)
		sleep = time.Since(t0)

		mu.Lock()
		go func() { time.Sleep(d); mu.Unlock() }()
		t0 = time.Now()
		mu.Lock()
		lock = time.Since(t0)
		mu.Unlock()

		ch := make(chan int)
		go func() { time.Sleep(d); ch <- 1 }()
		t0 = time.Now()
		<-ch
		recv = time.Since(t0)

		spinCPU(3 * d)
	})
	osWait = runQueueWait() - osWait
	rules, err := profiles.DefaultRules().WithWork(`^crypto/internal/fips140/sha256\.`)
	if err != nil {
		t.Fatal(err)
	}
	res, err := FromTrace(bytes.NewReader(data), Options{Region: region, Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	if res.Goroutines != 1 {
		t.Errorf("counted %d goroutines, want 1 (the other is outside the region)", res.Goroutines)
	}
	by, total := profiles.Breakdown(res.Profile, 0, rules)
	if time.Duration(total) != res.Total() {
		t.Errorf("profile holds %v, accounting %v", time.Duration(total), res.Total())
	}
	// Each wait, timed by the goroutine itself, against its category. The
	// tolerance covers the instrumentation's own few microseconds and the
	// scheduler's latency in waking the goroutine (which both count).
	near := func(name string, got int64, want time.Duration) {
		t.Helper()
		if diff := time.Duration(got) - want; diff < -2*time.Millisecond || diff > 2*time.Millisecond {
			t.Errorf("%s = %v, want %v (timed by the goroutine)", name, time.Duration(got), want)
		}
	}
	near("wait (sleep + channel)", by[profiles.Wait], sleep+recv)
	near("lock", by[profiles.Lock], lock)
	// Go's scheduler preempts the hashing loop for the tracer's and the
	// profiler's goroutines only when no other P is free, which another
	// program taking the threads' CPUs causes: beside a spinning process
	// under -race sched read 13-52 ms (3 runs in 10). What the process's
	// threads waited in the kernel's run queue bounds that.
	if by[profiles.Sched] > int64(5*time.Millisecond+osWait) {
		t.Errorf("sched = %v for a goroutine that had a CPU but while the process's threads waited %v for one", time.Duration(by[profiles.Sched]), osWait)
	}
	if res.CPUSamples < 5 {
		t.Fatalf("%d CPU samples in %v of hashing", res.CPUSamples, 3*d)
	}
	// About 90% of the loop's samples are in SHA-256 (less under -race, in
	// its other work); at 18 samples one is 6 points: three standard
	// errors below 90% is the bound, 69% there, so that a CI run under
	// -race does not fail on a few samples (78% seen) and a hashing
	// goroutine whose assembly is not work still does.
	n := float64(res.CPUSamples)
	if w := float64(by[profiles.Work]) / float64(res.Time[Running]); w < 0.9-3*math.Sqrt(0.9*0.1/n) {
		t.Errorf("work is %.0f%% of running time for a goroutine that mostly hashed (%d CPU samples)", 100*w, res.CPUSamples)
	}
	roots := map[string]bool{}
	for _, s := range res.Profile.Sample {
		if len(s.Label["state"]) != 1 {
			t.Fatalf("sample without a state label")
		}
		leaf := s.Location[0].Line[0].Function.Name
		// The goroutines the worker starts to unlock its mutex and send
		// on its channel are its helpers (critical.go): its wait is
		// charged to what they did, at their stacks, labelled with its
		// own state and "helped". Where a helper ran, the leaf is its
		// own frame (CI under -race at a load of 7 caught one in the
		// tracer's runtime.(*traceMap).newTraceMapNode).
		if s.Label["state"][0] != "running" && len(s.Label["helped"]) == 0 && !strings.HasPrefix(leaf, "[") {
			t.Errorf("off-CPU sample without a state frame: leaf %q", leaf)
		}
		if strings.HasSuffix(leaf, "()") {
			t.Errorf("state frame with an empty reason: %q", leaf)
		}
		// A CPU sample the profiler could not unwind (runtime._System,
		// seen under -race on a loaded machine) has no root to share, nor
		// one whose unwinding stopped at the race detector's switch to
		// the system stack (racecall, seen in CI), nor one cut short in
		// the clock read (rooted at time.now, seen in CI: the signal
		// landed while the goroutine read the clock).
		if root := s.Location[len(s.Location)-1].Line[0].Function.Name; !pseudoFrame(root) && !truncatedRoot[root] {
			roots[root] = true
		}
	}
	// Running time (CPU-sample stacks, which end in runtime.goexit) and
	// off-CPU time (transition stacks, which end at the goroutine's own
	// function) of one goroutine grow from one root in a flame graph.
	if len(roots) != 1 || roots["runtime.goexit"] {
		t.Errorf("the goroutine's samples have roots %v, want its one function", roots)
	}
}

// truncatedRoot holds the roots of CPU-sample stacks the profiler could not
// unwind to the goroutine's function.
var truncatedRoot = map[string]bool{"racecall": true, "time.now": true, "runtime.nanotime": true, "runtime.nanotime1": true}

// TestPreempted: two goroutines in regions that both hash on one P spend
// about half their time runnable after preemption, which is sched.
func TestPreempted(t *testing.T) {
	var tb, cb bytes.Buffer
	if err := pprof.StartCPUProfile(&cb); err != nil {
		t.Fatal(err)
	}
	if err := trace.Start(&tb); err != nil {
		t.Fatal(err)
	}
	prev := runtime.GOMAXPROCS(1)
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := trace.StartRegion(context.Background(), region)
			spin(200 * time.Millisecond)
			r.End()
		}()
	}
	wg.Wait()
	runtime.GOMAXPROCS(prev)
	trace.Stop()
	pprof.StopCPUProfile()
	res, err := FromTrace(&tb, Options{Region: region})
	if err != nil {
		t.Fatal(err)
	}
	by, total := profiles.Breakdown(res.Profile, 0, profiles.DefaultRules())
	if s := float64(by[profiles.Sched]) / float64(total); s < 0.3 || s > 0.6 {
		t.Errorf("sched share %.2f for two hashing goroutines on one P, want about 0.5 (they take turns)", s)
	}
}

func TestCorrupt(t *testing.T) {
	for _, tt := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"not a trace", []byte("go 1.26 trace\x00\x00\x00garbage garbage garbage")},
		{"header only", []byte("go 1.26 trace\x00\x00\x00")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := FromTrace(bytes.NewReader(tt.data), Options{Region: region})
			if err == nil && res.Total() != 0 {
				t.Fatalf("a %s trace counted %v", tt.name, res.Total())
			}
		})
	}
	if _, err := FromTrace(bytes.NewReader(nil), Options{}); err == nil {
		t.Error("no region: want an error")
	}
}

var garbage *[1 << 16]byte

// TestStoppedForGC: a hashing goroutine stopped for the collector's
// stop-the-world pauses spends that runnable time in gc, not sched.
//
// It hashes until 30 forced collections have ended, not for a fixed
// time: each has two pauses, and a pause finds the goroutine running only
// by chance (else it is in an assist, or runnable already). Under -race
// at a load of 7 on 2 cores 150 ms held 4-9 collections, and none of
// their pauses found it running in 3 runs of 40.
func TestStoppedForGC(t *testing.T) {
	const collections = 30
	var forced atomic.Int64
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				runtime.GC()
				forced.Add(1)
			}
		}
	}()
	var during int64
	data := traced(t, func() {
		buf := make([]byte, 4096)
		from := forced.Load()
		for limit := time.Now().Add(time.Minute); during < collections && time.Now().Before(limit); during = forced.Load() - from {
			sha256.Sum256(buf)
			garbage = new([1 << 16]byte)
		}
	})
	close(stop)
	res, err := FromTrace(bytes.NewReader(data), Options{Region: region})
	if err != nil {
		t.Fatal(err)
	}
	var gcRunnable time.Duration
	for _, s := range res.Profile.Sample {
		if s.Location[0].Line[0].Function.Name == profiles.StateFrame(profiles.GC, "runnable (stopped for GC)") {
			gcRunnable += time.Duration(s.Value[0])
		}
	}
	if gcRunnable == 0 {
		t.Errorf("no runnable time charged to GC stop-the-world pauses in %d forced collections over %v", during, res.Span)
	}
}

// allSleeper, allSpinner and excludedRoot are goroutine roots that
// TestAllGoroutines finds (or must not find) in the profile by name.
//
//go:noinline
func allSleeper(d time.Duration, done *sync.WaitGroup) {
	defer done.Done()
	time.Sleep(d)
}

//go:noinline
func allSpinner(d time.Duration, done *sync.WaitGroup) {
	defer done.Done()
	spin(d)
}

//go:noinline
func excludedRoot(d time.Duration, done *sync.WaitGroup) {
	defer done.Done()
	done.Add(1)
	go allSleeper(d, done) // started by an excluded goroutine: excluded too
	time.Sleep(d)
}

// TestAllGoroutines: without a region every goroutine counts, except the
// runtime's, the profilers' and those Exclude names (and their children).
func TestAllGoroutines(t *testing.T) {
	timingtest.Require(t)
	const d = 80 * time.Millisecond
	var tb, cb bytes.Buffer
	if err := pprof.StartCPUProfile(&cb); err != nil {
		t.Fatal(err)
	}
	if err := trace.Start(&tb); err != nil {
		pprof.StopCPUProfile()
		t.Fatal(err)
	}
	var wg, excl sync.WaitGroup
	excl.Add(1)
	go excludedRoot(d, &excl)
	wg.Add(2)
	go allSleeper(d, &wg)
	go allSpinner(d, &wg)
	runtime.GC() // GC workers and the sweeper run, and must not count
	wg.Wait()
	excl.Wait()
	trace.Stop()
	pprof.StopCPUProfile()

	const pkg = "github.com/perflab/perflab/internal/wallclock."
	res, err := FromTrace(bytes.NewReader(tb.Bytes()), Options{AllGoroutines: true, Exclude: []string{pkg + "excludedRoot"}})
	if err != nil {
		t.Fatal(err)
	}
	if time.Duration(res.Profile.Sample[0].Value[0]) <= 0 || res.Total() <= 0 {
		t.Fatalf("nothing counted")
	}
	var sum int64
	byRoot := map[string]time.Duration{}
	for _, s := range res.Profile.Sample {
		sum += s.Value[0]
		root := ""
		for _, l := range s.Location {
			if n := l.Line[0].Function.Name; n != "runtime.goexit" {
				root = n
			}
		}
		byRoot[root] += time.Duration(s.Value[0])
		if SystemGoroutine(root) {
			t.Errorf("%v at a system goroutine's root %s", time.Duration(s.Value[0]), root)
		}
	}
	if time.Duration(sum) != res.Total() {
		t.Errorf("profile holds %v, accounting %v", time.Duration(sum), res.Total())
	}
	// The sleeper started by the test is counted for its whole sleep (the
	// one started by excludedRoot is not); the spinner ran.
	if got := byRoot[pkg+"allSleeper"]; got < d-2*time.Millisecond || got > d+d/2 {
		t.Errorf("allSleeper: %v, want about %v (one of two: the other was started by an excluded goroutine)", got, d)
	}
	// (A CPU sample the profiler could not unwind is runtime._System: part
	// of the spinner's running time may be there.)
	if got := byRoot[pkg+"allSpinner"]; got < d/2 {
		t.Errorf("allSpinner: %v, want most of %v", got, d)
	}
	if got := byRoot[pkg+"excludedRoot"]; got != 0 {
		t.Errorf("excludedRoot counted %v", got)
	}
	// The test's own goroutines (this one, the testing framework's) count:
	// more than the two it started.
	if res.Goroutines < 3 {
		t.Errorf("counted %d goroutines, want the test's own too", res.Goroutines)
	}
	// The test binary's main goroutine waits for the test all along: it
	// existed before the trace, which first tells of it late.
	if got := byRoot["main.main"]; got < res.Span*9/10 {
		t.Errorf("main.main: %v of a %v trace", got, res.Span)
	}
	// At most the user goroutines' lifetimes: Span × goroutines.
	if max := time.Duration(res.Goroutines) * res.Span; res.Total() > max {
		t.Errorf("total %v over %d goroutines × span %v", res.Total(), res.Goroutines, res.Span)
	}
	if res.BackgroundGC <= 0 {
		t.Errorf("no background GC time after runtime.GC")
	}
	t.Logf("%d goroutines, total %v, span %v, by root %v", res.Goroutines, res.Total(), res.Span, byRoot)
}

//go:noinline
func createdLate(done *sync.WaitGroup) { done.Done() }

// TestCreatedRunnableRoot: a goroutine's time runnable from its creation
// until it first runs is at its own function, the root of its other time,
// not at a state frame with no stack: the trace gives the new goroutine's
// starting stack with its creation. With one P, the creator yields (so
// that sysmon, which preempts after 10 ms, does not before it means to),
// creates it and spins 6 ms, then yields to it.
func TestCreatedRunnableRoot(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var tb bytes.Buffer
	if err := trace.Start(&tb); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	runtime.Gosched()
	go createdLate(&wg)
	spin(6 * time.Millisecond)
	runtime.Gosched()
	wg.Wait()
	trace.Stop()
	res, err := FromTrace(bytes.NewReader(tb.Bytes()), Options{AllGoroutines: true})
	if err != nil {
		t.Fatal(err)
	}
	const fn = "github.com/perflab/perflab/internal/wallclock.createdLate"
	var atRoot, stateless time.Duration
	for _, s := range res.Profile.Sample {
		if s.Label["state"][0] != "runnable" {
			continue
		}
		root := s.Location[len(s.Location)-1].Line[0].Function.Name
		switch {
		case root == fn:
			atRoot += time.Duration(s.Value[0])
		case len(s.Location) == 1 && strings.HasPrefix(root, "["):
			stateless += time.Duration(s.Value[0])
		}
	}
	if atRoot < 4*time.Millisecond {
		t.Errorf("createdLate was runnable %v at its own root (%v at state frames with no stack); want the ~6 ms it waited to run", atRoot, stateless)
	}
}

func TestOptionsExclusive(t *testing.T) {
	if _, err := FromTrace(bytes.NewReader(nil), Options{Region: region, AllGoroutines: true}); err == nil {
		t.Error("Region with AllGoroutines: want an error")
	}
}

func TestSystemGoroutine(t *testing.T) {
	for root, want := range map[string]bool{
		"runtime.gcBgMarkWorker": true, "runtime.bgsweep": true, "runtime.bgscavenge": true,
		"runtime.(*traceAdvancerState).start.func1":           true,
		"runtime/trace.(*traceMultiplexer).startLocked.func1": true,
		"runtime/pprof.profileWriter":                         true,
		"os/signal.loop":                                      true,
		"main.main":                                           false,
		"net/http.(*conn).serve":                              false,
		"runtimefoo.bar":                                      false,
	} {
		if got := SystemGoroutine(root); got != want {
			t.Errorf("SystemGoroutine(%q) = %v, want %v", root, got, want)
		}
	}
}

// TestOSWait: a thread's kernel run-queue wait is moved from the counted
// goroutines' running time to sched, in proportion to their share of the
// thread's time; a thread that exited is left alone.
func TestOSWait(t *testing.T) {
	ms := time.Millisecond
	a := &accountant{
		res: &Result{}, rules: profiles.DefaultRules(),
		off: map[key]time.Duration{}, samples: map[xtrace.Stack]int{},
		sched: &SchedStats{
			Before: map[int64]SchedStat{1: {Run: 100 * ms, Wait: 10 * ms}, 2: {}},
			After:  map[int64]SchedStat{1: {Run: 160 * ms, Wait: 50 * ms}, 2: {Run: 100 * ms}},
		},
		// Thread 1: 100 ms of the window, 40 ms of it waiting; counted
		// goroutines ran 80 of its 100 ms. Thread 2 never waited;
		// thread 3 exited (no After).
		threadAll:     map[xtrace.ThreadID]time.Duration{1: 100 * ms, 2: 100 * ms, 3: 50 * ms},
		threadCounted: map[xtrace.ThreadID]time.Duration{1: 80 * ms, 2: 100 * ms, 3: 50 * ms},
	}
	a.res.Time[Running] = 230 * ms
	a.osWait()
	if want := 32 * ms; a.res.OSWait != want {
		t.Errorf("OSWait = %v, want %v (40 ms × 80/100)", a.res.OSWait, want)
	}
	if a.res.Time[Running] != 198*ms || a.res.Time[Runnable] != 32*ms {
		t.Errorf("running %v runnable %v", a.res.Time[Running], a.res.Time[Runnable])
	}
	by, total := profiles.Breakdown(a.res.Profile, 0, profiles.DefaultRules())
	if time.Duration(by[profiles.Sched]) != 32*ms || time.Duration(total) != 230*ms {
		t.Errorf("profile: sched %v of %v", time.Duration(by[profiles.Sched]), time.Duration(total))
	}
}

// TestStartRegion: workers released together onto one P wait their turn
// to begin; that wait is sched, while the time parked before the release
// is left out.
func TestStartRegion(t *testing.T) {
	var tb bytes.Buffer
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	if err := trace.Start(&tb); err != nil {
		t.Fatal(err)
	}
	start := make(chan struct{})
	var released time.Time
	var resumed [2]time.Duration // from the release to each one running
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := trace.StartRegion(context.Background(), "test.start")
			<-start
			resumed[i] = time.Since(released)
			s.End()
			r := trace.StartRegion(context.Background(), region)
			spin(40 * time.Millisecond)
			r.End()
		}()
	}
	time.Sleep(30 * time.Millisecond) // parked on start: not counted
	released = time.Now()
	close(start)
	wg.Wait()
	trace.Stop()
	res, err := FromTrace(&tb, Options{Region: region, StartRegion: "test.start"})
	if err != nil {
		t.Fatal(err)
	}
	var waited time.Duration
	for _, s := range res.Profile.Sample {
		if s.Location[0].Line[0].Function.Name == profiles.StateFrame(profiles.Sched, "runnable (released, waiting for a CPU to start)") {
			waited += time.Duration(s.Value[0])
		}
	}
	// One of the two waits for the other's first time slice (10 ms) or
	// its whole spin, or less when a collection stops the other; never
	// the 30 ms parked before the release. The wait is what the two saw
	// from the release to their running: at most that (and a millisecond
	// for the trace's clock against time.Now), and at least half (their
	// own count runs a few µs past the start; 40 runs under -race agreed
	// within 0.13 ms). A fixed 5-45 ms failed 3 runs in 40 at a load of 7
	// on 2 cores under -race: 2.97 ms when a collection stopped the
	// spinner early, and 52 and 78 ms when other programs held the CPU.
	saw := resumed[0] + resumed[1]
	if waited < saw/2 || waited > saw+time.Millisecond {
		t.Errorf("start-up wait %v, want the %v the two goroutines saw from the release to their start", waited, saw)
	}
	// The workers block only on the start channel, before the release:
	// no blocked time may be counted at all.
	if b := res.Time[Blocked]; b != 0 {
		t.Errorf("counted %v blocked: the parked time before the release leaked in", b)
	}
}

// TestOSWaitBySamples: with CPU samples on a thread, its CPU is split by
// them, and the counted goroutines' wait is what they ran beyond their CPU:
// here the worker had 90% of the thread's samples, so 90 of its 100 ms of
// CPU, and of its 95 ms running only 5 ms... never more than the thread
// waited.
func TestOSWaitBySamples(t *testing.T) {
	ms := time.Millisecond
	a := &accountant{
		res: &Result{}, rules: profiles.DefaultRules(), off: map[key]time.Duration{}, samples: map[xtrace.Stack]int{},
		sched: &SchedStats{
			Before: map[int64]SchedStat{1: {}},
			After:  map[int64]SchedStat{1: {Run: 100 * ms, Wait: 60 * ms}},
		},
		// The thread waited 60 ms, mostly while a GC worker on it ran.
		threadAll:      map[xtrace.ThreadID]time.Duration{1: 160 * ms},
		threadCounted:  map[xtrace.ThreadID]time.Duration{1: 95 * ms},
		samplesAll:     map[xtrace.ThreadID]int{1: 10},
		samplesCounted: map[xtrace.ThreadID]int{1: 9},
	}
	a.res.Time[Running] = 95 * ms
	a.osWait()
	if want := 5 * ms; a.res.OSWait != want {
		t.Errorf("OSWait = %v, want %v (95 ms running − 90 ms CPU)", a.res.OSWait, want)
	}
}

// TestOSWaitAtSampleStacks: the time a goroutine ran to Go while its thread
// waited for a CPU is in the profile at its own stacks, as its running time
// is, under the OS-wait frame: a flame graph shows it in the goroutine's
// tower, not as a root of its own.
func TestOSWaitAtSampleStacks(t *testing.T) {
	timingtest.Require(t)
	if ReadSchedStats() == nil {
		t.Skip("no per-thread scheduler statistics here")
	}
	// The threads' totals are read around the spin, inside the trace:
	// read around trace.Start and Stop, they held those calls' CPU, which
	// under -race outweighed the 40 ms below, and no CPU sample of the
	// trace covered it (CI read an OS wait of 0 s).
	var before, after map[int64]SchedStat
	data := traced(t, func() {
		before = ReadSchedStats()
		spin(200 * time.Millisecond)
		after = ReadSchedStats()
	})
	// As if the kernel had kept every thread off its core 40 ms more: that
	// much less CPU, that much more run-queue wait.
	for tid, st := range after {
		take := min(40*time.Millisecond, st.Run-before[tid].Run)
		st.Run -= take
		st.Wait += take
		after[tid] = st
	}
	res, err := FromTrace(bytes.NewReader(data), Options{Region: region, Sched: &SchedStats{Before: before, After: after}})
	if err != nil {
		t.Fatal(err)
	}
	if res.OSWait <= 0 || res.CPUSamples == 0 {
		t.Fatalf("OS wait %v, %d CPU samples: the test needs both", res.OSWait, res.CPUSamples)
	}
	// The OS wait sits where the running time does: at the same stacks,
	// one frame deeper. (Under -race some samples' stacks end in racecall
	// or a stand-in such as runtime._System; running time sits there too.)
	key := func(locs []*profile.Location) string {
		var b strings.Builder
		for _, l := range locs {
			b.WriteString(l.Line[0].Function.Name + ";")
		}
		return b.String()
	}
	running := map[string]bool{}
	for _, s := range res.Profile.Sample {
		if s.Label["state"][0] == "running" {
			running[key(s.Location)] = true
		}
	}
	var atOSWait, atGoroutine time.Duration
	for _, s := range res.Profile.Sample {
		// From per-thread totals nobody knows who had the CPU: the
		// frame says only that it was a wait for one.
		if leaf := s.Location[0].Line[0].Function.Name; strings.HasSuffix(leaf, "] "+osWaitState) {
			t.Errorf("%q: the estimate cannot say another program had the CPU", leaf)
		}
		if !strings.HasSuffix(s.Location[0].Line[0].Function.Name, "] "+osWaitUnknownState) {
			continue
		}
		v := time.Duration(s.Value[0])
		atOSWait += v
		if len(s.Location) < 2 {
			t.Errorf("OS wait of %v at no stack", v)
			continue
		}
		if !running[key(s.Location[1:])] {
			t.Errorf("OS wait of %v at a stack with no running time: %s", v, key(s.Location))
		}
		if strings.HasSuffix(s.Location[len(s.Location)-1].Line[0].Function.Name, "wallclock.traced.func1") {
			atGoroutine += v
		}
	}
	if atGoroutine < atOSWait/2 {
		t.Errorf("only %v of %v OS wait is under the goroutine's own function", atGoroutine, atOSWait)
	}
	if atOSWait != res.OSWait {
		t.Errorf("the profile holds %v of OS wait, the result says %v", atOSWait, res.OSWait)
	}
}

// TestWakePreemption: a preemption that begins as a goroutine wakes another
// and gives the CPU to a thread of the process (the kernel running the
// woken goroutine's thread on the waker's core) is the wake-up's cost for
// as long as that thread had the CPU, charged at the waking stack — lock
// inside Unlock — and one that begins later, while the goroutine works on,
// or that gives the CPU to another program, goes where the running time
// goes. The kernel's records are laid by hand at known offsets
// from the trace's own wake-up events, so where each must land is known.
func TestWakePreemption(t *testing.T) {
	timingtest.Require(t)
	var mu sync.Mutex
	span := 150 * time.Millisecond
	work := func() {
		for end := time.Now().Add(span); time.Now().Before(end); {
			mu.Lock()
			spin(time.Millisecond)
			mu.Unlock() // wakes the other when it is parked in Lock
			spin(time.Millisecond)
		}
	}
	// The trace's clock against CLOCK_MONOTONIC, and each wake-up inside
	// Unlock by a goroutine that was running, with its thread.
	type wake struct {
		at  int64
		tid int64
		g   xtrace.GoID
	}
	var wakes []wake
	var data []byte
	var lead int64
	stopped := map[xtrace.GoID][]int64{} // when each goroutine stopped running
	// A loaded machine (CI runs test binaries side by side) can keep the
	// two from overlapping: 9 wake-ups in one such window, 4 in three of
	// them under -race at load 1. Up to four, each twice as long.
	for try := 0; try < 4 && len(wakes) < 10; try, span = try+1, 2*span {
		data = traced(t, func() {
			pairInRegion(work)
		})
		wakes = wakes[:0]
		clear(stopped)
		lead = readGoTransitions(t, data, func(ev *xtrace.Event, st xtrace.StateTransition, from, to xtrace.GoState) {
			if from == xtrace.GoRunning && to != xtrace.GoRunning {
				g := st.Resource.Goroutine()
				stopped[g] = append(stopped[g], int64(ev.Time()))
			}
			if from != xtrace.GoWaiting || to != xtrace.GoRunnable || ev.Goroutine() == xtrace.NoGoroutine {
				return
			}
			if hasFrame(ev.Stack(), "sync.(*Mutex).Unlock") {
				wakes = append(wakes, wake{int64(ev.Time()), int64(ev.Thread()), ev.Goroutine()})
			}
		})
	}
	if len(wakes) < 10 {
		t.Fatalf("only %d wake-ups inside Unlock in four tries: the test needs more", len(wakes))
	}
	const took = 20 * time.Microsecond
	// moved counts the wake-ups whose waker stopped running (a GC stop,
	// Go's own preemption) within d of waking: a preemption laid d after
	// such a one goes with the running time, not at the wake-up.
	moved := func(d time.Duration) int {
		n := 0
		for _, w := range wakes {
			if slices.ContainsFunc(stopped[w.g], func(at int64) bool { return at > w.at && at <= w.at+int64(d) }) {
				n++
			}
		}
		return n
	}
	for _, tc := range []struct {
		name    string
		after   time.Duration // from the wake-up to the preemption
		byWoken time.Duration // how long a thread of the process, just woken, had the CPU
		byOwn   time.Duration // how long any other thread of the process had it
		woke    float64       // the share charged at the wake-up
	}{
		{"at the wake-up", 3 * time.Microsecond, took, took, 1},
		// The woken thread left the CPU to another program: only its
		// stay was the wake-up's.
		{"at the wake-up, then another program", 3 * time.Microsecond, took / 4, took / 4, 0.25},
		// ... or to another of the process's threads, having its turn:
		// sched, said to be that.
		{"at the wake-up, then another thread's turn", 3 * time.Microsecond, took / 4, took, 0.25},
		// Not its own wake-up's, but still a thread of the process.
		{"later", 3*wakeWindow + 3*time.Microsecond, took, took, 0},
		{"later, then another program", 3*wakeWindow + 3*time.Microsecond, took / 4, took / 4, 0},
		{"later, another thread's turn", 3*wakeWindow + 3*time.Microsecond, 0, took, 0},
		// Another program's thread took the CPU: chance, not the wake-up.
		{"at the wake-up, by another program", 3 * time.Microsecond, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pre []Preemption
			for _, w := range wakes {
				from := w.at + lead + int64(tc.after)
				pre = append(pre, Preemption{TID: w.tid, From: from, To: from + int64(took), ByWoken: tc.byWoken, ByOwn: tc.byOwn})
			}
			res, err := FromTrace(bytes.NewReader(data), Options{Region: region, Sched: &SchedStats{Preempted: pre}})
			if err != nil {
				t.Fatal(err)
			}
			if !res.OSWaitExact {
				t.Fatal("the preemptions were not used")
			}
			// The waker spins for a millisecond after Unlock: it is
			// running at nearly every laid preemption, so nearly all
			// of them count (not one that a GC stop or Go's own
			// preemption of the goroutine fell on, seen under -race).
			laid := took * time.Duration(len(wakes))
			all := res.OSWait + res.OSWake
			if all > laid || all < laid*9/10 {
				t.Errorf("OS wait %v + %v, want 90–100%% of the %v laid (%d preemptions of %v)", res.OSWait, res.OSWake, laid, len(wakes), took)
			}
			var atWake, atRun, atOwn time.Duration
			for _, s := range res.Profile.Sample {
				leaf := s.Location[0].Line[0].Function.Name
				v := time.Duration(s.Value[0])
				switch {
				case strings.HasSuffix(leaf, "] "+osWakeState):
					atWake += v
					if !strings.HasPrefix(leaf, "[lock]") {
						t.Errorf("%v at %q: a preemption inside Unlock is lock", v, leaf)
					}
					unlock := false
					for _, l := range s.Location[1:] {
						unlock = unlock || l.Line[0].Function.Name == "sync.(*Mutex).Unlock"
					}
					if !unlock {
						t.Errorf("%v of wake-up preemption at a stack without Unlock", v)
					}
				case strings.HasSuffix(leaf, "] "+osWaitState):
					atRun += v
				case strings.HasSuffix(leaf, "] "+osOwnState):
					atRun += v
					atOwn += v
					if !strings.HasPrefix(leaf, "[sched]") && !strings.HasPrefix(leaf, "[lock]") {
						t.Errorf("%v at %q: a preemption while running is sched, or lock inside the lock", v, leaf)
					}
				}
			}
			if atWake != res.OSWake || atRun != res.OSWait {
				t.Errorf("%v at the wake-up and %v with the running time; the result says %v and %v", atWake, atRun, res.OSWake, res.OSWait)
			}
			// Where it is not the wake-up's, as much as the process's
			// other threads held the CPU is said to be theirs: of each
			// preemption, ByOwn less what the wake-up took (all of it
			// for one that a GC stop moved to the running time).
			if want := time.Duration(float64(all)*float64(tc.byOwn)/float64(took)) - atWake; atOwn < want-all/100 || atOwn > want+all/100 {
				t.Errorf("%v said to be another thread's of the process, want %v (%v of %v laid, less %v at the wake-up)", atOwn, want, tc.byOwn, took, atWake)
			}
			if atOwn != res.OSOwn {
				t.Errorf("%v under the frame, the result says %v", atOwn, res.OSOwn)
			}
			// One whose goroutine changed state in the 3 µs since
			// its wake-up (a GC stop, Go's own preemption) goes with
			// the running time: of the others, tc.woke of each is the
			// wake-up's. (A fixed 90-100% of all failed 4 runs in 10
			// under -race at a load of 10-12 on 2 cores: 2 of 13-18
			// wake-ups moved, each as the trace says.)
			m := moved(tc.after)
			want := time.Duration(tc.woke*float64(took)) * time.Duration(len(wakes)-m)
			if d := atWake - want; d > time.Microsecond || d < -time.Microsecond || atWake > time.Duration(tc.woke*float64(all)) {
				t.Errorf("%v charged at the wake-up, %v where the running time is; want %.0f%% of the %v laid at the %d of %d wake-ups whose goroutine ran on past them, %v", atWake, atRun, 100*tc.woke, took, len(wakes)-m, len(wakes), want)
			}
		})
	}
	// Where the recorder could not say who had each CPU (OwnUnknown), the
	// frame says only that the thread waited for one.
	var pre []Preemption
	for _, w := range wakes {
		from := w.at + lead + int64(3*wakeWindow)
		pre = append(pre, Preemption{TID: w.tid, From: from, To: from + int64(took)})
	}
	res, err := FromTrace(bytes.NewReader(data), Options{Region: region, Sched: &SchedStats{Preempted: pre, OwnUnknown: true}})
	if err != nil {
		t.Fatal(err)
	}
	var neutral time.Duration
	for _, s := range res.Profile.Sample {
		switch leaf := s.Location[0].Line[0].Function.Name; {
		case strings.HasSuffix(leaf, "] "+osWaitUnknownState):
			neutral += time.Duration(s.Value[0])
		case strings.HasSuffix(leaf, "] "+osWaitState), strings.HasSuffix(leaf, "] "+osOwnState):
			t.Errorf("%q with who had the CPU unknown", leaf)
		}
	}
	if neutral != res.OSWait || neutral == 0 {
		t.Errorf("%v under the neutral frame, the result's OS wait %v", neutral, res.OSWait)
	}
}

// TestWakeStale: a wake-up stops counting once its goroutine has blocked
// and run again — a preemption a few µs after it resumes is not the old
// wake-up's, however recent. A ping-pong over unbuffered channels on one P
// wakes, blocks and resumes within a microsecond or two; the kernel's
// records are laid between each resumption and the goroutine's next
// wake-up, within wakeWindow of its previous one.
func TestWakeStale(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	data := traced(t, func() {
		a, b := make(chan int), make(chan int)
		go func() {
			for v := range a {
				b <- v
			}
		}()
		for i := range 20000 {
			a <- i // wakes the other goroutine
			<-b    // blocks until it answers
		}
		close(a)
	})
	worker := xtrace.NoGoroutine
	var woke, resumed int64 = -1, -1
	var tid int64
	var pre []Preemption // in trace time until lead is known
	lead := readTrace(t, data, func(ev *xtrace.Event) {
		switch ev.Kind() {
		case xtrace.EventRegionBegin:
			worker = ev.Goroutine()
		case xtrace.EventStateTransition:
			st := ev.StateTransition()
			if st.Resource.Kind != xtrace.ResourceGoroutine || worker == xtrace.NoGoroutine {
				return
			}
			from, to := st.Goroutine()
			at := int64(ev.Time())
			switch {
			case st.Resource.Goroutine() == worker && to == xtrace.GoRunning:
				resumed, tid = at, int64(ev.Thread())
			case ev.Goroutine() == worker && from == xtrace.GoWaiting && to == xtrace.GoRunnable:
				// The counted goroutine wakes the other: lay one
				// between its last resumption and now, if that came
				// after its previous wake-up, within wakeWindow of it.
				if woke >= 0 && resumed > woke && at-resumed >= 2 && at-woke <= int64(wakeWindow) {
					from := (resumed + at) / 2
					pre = append(pre, Preemption{TID: tid, From: from, To: from + 1, ByWoken: 1})
				}
				woke = at
			}
		}
	})
	for i := range pre {
		pre[i].From += lead
		pre[i].To += lead
	}
	if len(pre) < 100 {
		t.Skipf("only %d resumptions within %v of a wake-up: the machine is too slow to tell", len(pre), wakeWindow)
	}
	res, err := FromTrace(bytes.NewReader(data), Options{Region: region, Sched: &SchedStats{Preempted: pre}})
	if err != nil {
		t.Fatal(err)
	}
	if res.OSWait+res.OSWake == 0 {
		t.Fatalf("none of %d laid preemptions was charged", len(pre))
	}
	t.Logf("%d preemptions laid after a resumption within %v of a wake-up", len(pre), wakeWindow)
	if res.OSWake != 0 {
		t.Errorf("%v of %v charged to wake-ups the goroutine had blocked since (%d laid)", res.OSWake, res.OSWait+res.OSWake, len(pre))
	}
}

// readTrace calls each for every event of an execution trace and returns
// the trace's clock against CLOCK_MONOTONIC (Go's nanotime, the kernel's
// records' clock) from its first clock snapshot, skipping the test if it
// has none (Go before 1.25).
func readTrace(t *testing.T, data []byte, each func(*xtrace.Event)) (lead int64) {
	t.Helper()
	tr, err := xtrace.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	clocked := false
	for {
		ev, err := tr.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind() == xtrace.EventSync && !clocked {
			if snap := ev.Sync().ClockSnapshot; snap != nil {
				lead, clocked = int64(snap.Mono)-int64(snap.Trace), true
			}
		}
		each(&ev)
	}
	if !clocked {
		t.Skip("no clock snapshot in the trace (Go 1.25 or later has one)")
	}
	return lead
}

// hasFrame reports whether stack s has a frame of function fn.
func hasFrame(s xtrace.Stack, fn string) bool {
	for f := range s.Frames() {
		if f.Func == fn {
			return true
		}
	}
	return false
}

// readGoTransitions is readTrace for the goroutines' state transitions only.
func readGoTransitions(t *testing.T, data []byte, each func(ev *xtrace.Event, st xtrace.StateTransition, from, to xtrace.GoState)) (lead int64) {
	t.Helper()
	return readTrace(t, data, func(ev *xtrace.Event) {
		if ev.Kind() != xtrace.EventStateTransition {
			return
		}
		if st := ev.StateTransition(); st.Resource.Kind == xtrace.ResourceGoroutine {
			from, to := st.Goroutine()
			each(ev, st, from, to)
		}
	})
}

// TestRunnableAcrossGenerations: a goroutine woken from a wait that is
// still runnable when a new generation restates its status stays the
// wait's, not sched's: the status is no transition.
func TestRunnableAcrossGenerations(t *testing.T) {
	a := &accountant{rules: profiles.DefaultRules(), cats: map[catKey]profiles.Category{}}
	g := &gor{}
	a.transition(g, xtrace.GoRunning, xtrace.GoWaiting, xtrace.StateTransition{Reason: "chan receive"})
	a.transition(g, xtrace.GoWaiting, xtrace.GoRunnable, xtrace.StateTransition{})
	woken := g.offFrame
	a.transition(g, xtrace.GoRunnable, xtrace.GoRunnable, xtrace.StateTransition{})
	if g.offFrame != woken || g.offState != Runnable {
		t.Errorf("after a new generation's status: %q (%v), want %q", g.offFrame, g.offState, woken)
	}
	if !strings.Contains(woken, "runnable after wake") {
		t.Errorf("woken from a channel receive: %q", woken)
	}
}

// TestProfileTime: the profile says when the trace began and how long it
// ran, which go tool pprof heads it with ("Time:", "Duration:"): a wall
// profile without them showed neither, beside a CPU profile that does.
func TestProfileTime(t *testing.T) {
	before := time.Now()
	data := traced(t, func() { time.Sleep(20 * time.Millisecond) })
	after := time.Now()
	res, err := FromTrace(bytes.NewReader(data), Options{Region: region})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Profile
	if at := time.Unix(0, p.TimeNanos); at.Before(before.Round(0)) || at.After(after.Round(0)) {
		t.Errorf("TimeNanos %v, want between %v and %v, when the trace ran", at, before, after)
	}
	if d := time.Duration(p.DurationNanos); d != res.Span || d < 20*time.Millisecond || d > after.Sub(before) {
		t.Errorf("DurationNanos %v, want the trace's span %v, at least the 20ms slept and at most the %v it ran", d, res.Span, after.Sub(before))
	}
}
