package wallclock

import (
	"bytes"
	"sync"
	"testing"
	"time"

	xtrace "golang.org/x/exp/trace"
)

// TestHandoffs checks Result.Handoffs: a wake-up counts when a counted
// goroutine wakes another counted one (workers handing a lock to each
// other), not when the waker is not counted (a ticker feeding a worker),
// though both wake a worker from a wait.
func TestHandoffs(t *testing.T) {
	const span = 100 * time.Millisecond
	locked := func() {
		var mu sync.Mutex
		work := func() {
			for end := time.Now().Add(span); time.Now().Before(end); {
				mu.Lock()
				spin(time.Millisecond) // long enough that the other parks in Lock
				mu.Unlock()
			}
		}
		pairInRegion(work)
	}
	fed := func() {
		ch := make(chan struct{})
		go func() { // outside any region: not counted
			for end := time.Now().Add(span); time.Now().Before(end); {
				time.Sleep(time.Millisecond)
				ch <- struct{}{}
			}
			close(ch)
		}()
		for range ch {
			spin(100 * time.Microsecond)
		}
	}
	for _, tc := range []struct {
		name string
		f    func()
		// whether the counted goroutines' wake-ups are hand-offs
		handoffs bool
	}{
		{"workers hand a lock to each other", locked, true},
		{"a worker fed by an uncounted goroutine", fed, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := traced(t, tc.f)
			// The wake-ups of goroutines from a wait by another
			// goroutine, whoever they are: the test needs some.
			wakes := 0
			readGoTransitions(t, data, func(ev *xtrace.Event, st xtrace.StateTransition, from, to xtrace.GoState) {
				if from == xtrace.GoWaiting && to == xtrace.GoRunnable && ev.Goroutine() != xtrace.NoGoroutine && ev.Goroutine() != st.Resource.Goroutine() {
					wakes++
				}
			})
			if wakes < 5 {
				t.Skipf("only %d wake-ups in the trace: the machine kept the goroutines apart", wakes)
			}
			res, err := FromTrace(bytes.NewReader(data), Options{Region: region})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.handoffs && res.Handoffs == 0:
				t.Errorf("no hand-off counted among %d wake-ups", wakes)
			case !tc.handoffs && res.Handoffs != 0:
				t.Errorf("%d hand-offs counted, want 0: the waker is not counted (%d wake-ups)", res.Handoffs, wakes)
			case res.Handoffs > wakes:
				t.Errorf("%d hand-offs counted, more than the trace's %d wake-ups", res.Handoffs, wakes)
			}
			t.Logf("%d hand-offs of %d wake-ups", res.Handoffs, wakes)
		})
	}
}
