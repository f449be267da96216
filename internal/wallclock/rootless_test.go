package wallclock

import (
	"bytes"
	"runtime/trace"
	"strings"
	"testing"
	"time"
)

// stacklessWaiter waits on ch from before the trace starts until woken in
// it: the tracer gives its status, at the wake-up, no stack
// (golang/go#65634). It then blocks again, on ch, where the trace has its
// stack, which says its root.
//
//go:noinline
func stacklessWaiter(ch chan struct{}, done chan struct{}) {
	<-ch
	close(done)
	<-ch
}

// TestStacklessRooted: with AllGoroutines, a goroutine's time at no stack
// (blocked since before the trace and woken in it) is under its root
// function, which its later stacks say, not at no root. An HTTP server's
// accept loop woken by an upload mid-window had its wait there, and the
// continuous profiler's tests counted it as the workers' missing time.
func TestStacklessRooted(t *testing.T) {
	const d = 40 * time.Millisecond
	ch, done := make(chan struct{}), make(chan struct{})
	go stacklessWaiter(ch, done)
	time.Sleep(10 * time.Millisecond) // parked before the trace starts
	var tb bytes.Buffer
	if err := trace.Start(&tb); err != nil {
		t.Fatal(err)
	}
	time.Sleep(d)
	ch <- struct{}{}
	<-done
	time.Sleep(time.Millisecond) // blocked again, with its stack
	trace.Stop()
	close(ch)

	res, err := FromTrace(bytes.NewReader(tb.Bytes()), Options{AllGoroutines: true})
	if err != nil {
		t.Fatal(err)
	}
	const waiter = "github.com/perflab/perflab/internal/wallclock.stacklessWaiter"
	var got, blocked, rootless time.Duration
	for _, s := range res.Profile.Sample {
		leaf := s.Location[0].Line[0].Function.Name
		root := s.Location[len(s.Location)-1].Line[0].Function.Name
		v := time.Duration(s.Value[0])
		if root == waiter {
			got += v
			if strings.HasPrefix(leaf, "[wait] blocked") {
				blocked += v
			}
		}
		if strings.HasPrefix(root, "[") {
			rootless += v
		}
	}
	// Its wait from the trace's start to the wake-up, at least d, is its
	// own; at most the trace's span.
	if blocked < d || got > res.Span {
		t.Errorf("%s: %v blocked and %v in all, want at least %v blocked and at most the span %v; %v at no root", waiter, blocked, got, d, res.Span, rootless)
	}
}
