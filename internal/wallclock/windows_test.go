package wallclock

import (
	"bytes"
	"context"
	"io"
	"runtime/pprof"
	rtrace "runtime/trace"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/timingtest"
	"golang.org/x/exp/trace"
)

// TestWindowed: the part of an interval inside the windows.
func TestWindowed(t *testing.T) {
	a := &accountant{windows: []Window{{10, 20}, {30, 40}, {50, 60}}}
	for _, tt := range []struct {
		name     string
		from, to trace.Time
		want     time.Duration
	}{
		{"before all", 0, 5, 0},
		{"inside one", 12, 18, 6},
		{"across one edge", 15, 25, 5},
		{"across two windows", 15, 35, 10},
		{"all", 0, 100, 30},
		{"between", 20, 30, 0},
		{"after all", 60, 70, 0},
		{"touching the start", 5, 11, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := a.windowed(tt.from, tt.to); got != tt.want {
				t.Errorf("windowed(%d, %d) = %d, want %d", tt.from, tt.to, got, tt.want)
			}
		})
	}
	if !a.inWindow(10) || a.inWindow(20) || a.inWindow(25) {
		t.Errorf("inWindow: 10 %v 20 %v 25 %v, want true false false", a.inWindow(10), a.inWindow(20), a.inWindow(25))
	}
	if got := (&accountant{}).windowed(3, 9); got != 6 {
		t.Errorf("no windows: %d, want all 6", got)
	}
}

// windowedWorker spins, sleeps and spins again, logging "on" and "off"
// around the spins: the windows the test gives FromTrace.
//
//go:noinline
func windowedWorker(d time.Duration, done *sync.WaitGroup) {
	defer done.Done()
	ctx := context.Background()
	rtrace.Log(ctx, "window", "on")
	spin(d)
	rtrace.Log(ctx, "window", "off")
	time.Sleep(2 * d)
	rtrace.Log(ctx, "window", "on")
	spin(d)
	rtrace.Log(ctx, "window", "off")
}

// logWindows reads the "window" logs of a trace as windows.
func logWindows(t *testing.T, r io.Reader) []Window {
	tr, err := trace.NewReader(r)
	if err != nil {
		t.Fatal(err)
	}
	var out []Window
	var from trace.Time
	for {
		ev, err := tr.ReadEvent()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind() != trace.EventLog || ev.Log().Category != "window" {
			continue
		}
		if ev.Log().Message == "on" {
			from = ev.Time()
		} else {
			out = append(out, Window{From: from, To: ev.Time()})
		}
	}
}

// traceGo runs start, which starts one goroutine that calls wg.Done when
// it ends, with the tracer and the CPU profiler on, and returns the trace.
// Unlike traced, the goroutine is start's own: no region, no other
// goroutine, its root the function start names.
func traceGo(t *testing.T, start func(wg *sync.WaitGroup)) []byte {
	t.Helper()
	var tb, cb bytes.Buffer
	if err := pprof.StartCPUProfile(&cb); err != nil {
		t.Fatal(err)
	}
	if err := rtrace.Start(&tb); err != nil {
		pprof.StopCPUProfile()
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	start(&wg)
	wg.Wait()
	rtrace.Stop()
	pprof.StopCPUProfile()
	return tb.Bytes()
}

// TestWindows: with Windows, a counted goroutine's time outside them is
// left out (a benchmark's setup while its timer is stopped), its time
// inside kept.
func TestWindows(t *testing.T) {
	timingtest.Require(t)
	const d = 40 * time.Millisecond
	tb := traceGo(t, func(wg *sync.WaitGroup) { go windowedWorker(d, wg) })

	ws := logWindows(t, bytes.NewReader(tb))
	if len(ws) != 2 {
		t.Fatalf("%d windows in the trace, want 2", len(ws))
	}
	const pkg = "github.com/perflab/perflab/internal/wallclock."
	opts := Options{AllGoroutines: true, Roots: []string{pkg + "windowedWorker"}}
	all, err := FromTrace(bytes.NewReader(tb), opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Windows = ws
	in, err := FromTrace(bytes.NewReader(tb), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("whole trace %v, in the windows %v (running %v, blocked %v)", all.Total(), in.Total(), in.Time[Running], in.Time[Blocked])
	if all.Time[Blocked] < 2*d-time.Millisecond {
		t.Errorf("whole trace: blocked %v, want the sleep's %v", all.Time[Blocked], 2*d)
	}
	if in.Time[Blocked] > time.Millisecond {
		t.Errorf("in the windows: blocked %v, want none (the sleep is outside)", in.Time[Blocked])
	}
	var spans time.Duration
	for _, w := range ws {
		spans += w.To.Sub(w.From)
	}
	if got := in.Total(); got < spans-time.Millisecond || got > spans+time.Millisecond {
		t.Errorf("in the windows: %v counted, want the windows' %v", got, spans)
	}
}

// rootsFanOut hands its hashing to a goroutine it starts and waits for
// it: with Roots naming only rootsFanOut, the helper does not count, but
// the wait is charged to its running (the critical path), as in a
// benchmark that fans out.
//
//go:noinline
func rootsFanOut(d time.Duration, done *sync.WaitGroup) {
	defer done.Done()
	var child sync.WaitGroup
	child.Add(1)
	go allSpinner(d, &child)
	child.Wait()
}

// TestRootsHelpers: under Roots, a counted goroutine's wait for a
// goroutine it started is the helper's time, not wait.
func TestRootsHelpers(t *testing.T) {
	timingtest.Require(t)
	const d = 80 * time.Millisecond
	tb := traceGo(t, func(wg *sync.WaitGroup) { go rootsFanOut(d, wg) })

	const pkg = "github.com/perflab/perflab/internal/wallclock."
	res, err := FromTrace(bytes.NewReader(tb), Options{AllGoroutines: true, Roots: []string{pkg + "rootsFanOut"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("total %v, helped %v, helped running %v, helper samples %d", res.Total(), res.Helped, res.HelpedRunning, res.HelperSamples)
	if res.Goroutines != 1 {
		t.Errorf("counted %d goroutines, want 1 (the helper is not a root)", res.Goroutines)
	}
	if res.HelpedRunning < d/2 {
		t.Errorf("helped running %v of a %v wait for a spinning helper: the critical path was not followed", res.HelpedRunning, d)
	}
}
