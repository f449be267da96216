package wallclock

import (
	"bytes"
	"runtime/pprof"
	"runtime/trace"
	"sync"
	"testing"
	"time"
)

// rootsParent starts a sleeper and waits for it: with Roots naming only
// rootsParent, its wait counts and the sleeper it started does not.
//
//go:noinline
func rootsParent(d time.Duration, done *sync.WaitGroup) {
	defer done.Done()
	var child sync.WaitGroup
	child.Add(1)
	go allSleeper(d, &child)
	child.Wait()
}

// TestRoots: with Roots, only goroutines started with one of those
// functions count — not the test's own, not the ones they start — even
// when one of them was started by a goroutine that does not count, as a
// test binary's benchmark goroutines are.
func TestRoots(t *testing.T) {
	const d = 60 * time.Millisecond
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
	go rootsParent(d, &wg)
	go allSpinner(d, &wg)
	wg.Wait()
	trace.Stop()
	pprof.StopCPUProfile()

	const pkg = "github.com/perflab/perflab/internal/wallclock."
	res, err := FromTrace(bytes.NewReader(tb.Bytes()), Options{AllGoroutines: true, Roots: []string{pkg + "rootsParent", pkg + "allSpinner"}})
	if err != nil {
		t.Fatal(err)
	}
	byRoot := map[string]time.Duration{}
	for _, s := range res.Profile.Sample {
		root := ""
		for _, l := range s.Location {
			if n := l.Line[0].Function.Name; n != "runtime.goexit" {
				root = n
			}
		}
		byRoot[root] += time.Duration(s.Value[0])
	}
	if got := byRoot[pkg+"rootsParent"]; got < d-2*time.Millisecond || got > d+d/2 {
		t.Errorf("rootsParent: %v, want about %v (its wait for the sleeper)", got, d)
	}
	if got := byRoot[pkg+"allSpinner"]; got < d/2 {
		t.Errorf("allSpinner: %v, want most of %v", got, d)
	}
	for root, got := range byRoot {
		// A CPU sample the profiler could not unwind (runtime._System),
		// or whose unwinding stopped short (truncatedRoot: racecall,
		// seen here under -race 1 run in 3), says nothing of its root.
		if root != pkg+"rootsParent" && root != pkg+"allSpinner" && !pseudoFrame(root) && !truncatedRoot[root] && got > 0 {
			t.Errorf("%s counted %v: not a root", root, got)
		}
	}
	if res.Goroutines != 2 {
		t.Errorf("counted %d goroutines, want 2", res.Goroutines)
	}
}
