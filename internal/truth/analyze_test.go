package truth

import (
	"crypto/sha256"
	"math"
	"runtime"
	"strings"
	"testing"
)

func TestAnalyze(t *testing.T) {
	run := func(start, end int64) Span { return Span{start, end} }
	tests := []struct {
		name  string
		procs int
		logs  []Log
		m     Machine
		want  Truth // shares only
	}{
		{
			// Two hash from the release; the other two start 10 later,
			// when the time slice of the first ends, and from then on
			// four want two Ps: half of it is runnable.
			name: "four on two Ps", procs: 2,
			logs: []Log{
				{Runs: []Span{run(0, 100)}, Sums: Sums{Work: 100, Total: 100}},
				{Runs: []Span{run(0, 100)}, Sums: Sums{Work: 100, Total: 100}},
				{Runs: []Span{run(10, 100)}, Sums: Sums{Work: 90, Total: 90}},
				{Runs: []Span{run(10, 100)}, Sums: Sums{Work: 90, Total: 90}},
			},
			// 380 goroutine-ns in Run: 2×90 runnable, 200 on a CPU; 20
			// more before Run, runnable too, which the budget counts.
			want: Truth{Work: 200.0 / 400, Sched: 200.0 / 400, Startup: 20.0 / 400},
		},
		{
			name: "lock waiter, enough Ps", procs: 2,
			logs: []Log{
				{Runs: []Span{run(0, 100)}, Sums: Sums{Work: 100, Total: 100}},
				{Runs: []Span{run(0, 100)}, Waits: []Span{{0, 50}}, Sums: Sums{Lock: 50, Work: 50, Total: 100}},
			},
			want: Truth{Work: 0.75, Lock: 0.25},
		},
		{
			// One P: while both are out of their waits (40–60), one of
			// them is runnable; the 20 come out of the on-CPU pieces
			// (work and unlocking) in proportion.
			name: "one P, waits overlap", procs: 1,
			logs: []Log{
				{Runs: []Span{run(0, 100)}, Waits: []Span{{0, 40}}, Sums: Sums{Lock: 40, Work: 48, Total: 100}},
				{Runs: []Span{run(0, 100)}, Waits: []Span{{60, 100}}, Sums: Sums{Wait: 40, Work: 60, Total: 100}},
			},
			// demand 120 (12 of it neither waiting nor hashing), runnable
			// 20: on-CPU pieces keep 100/120.
			want: Truth{Work: 108 * 100.0 / 120 / 200, Lock: 40.0 / 200, Wait: 40.0 / 200, Sched: 0.1, Other: 12 * 100.0 / 120 / 200},
		},
		{
			// A wait that ends where the next begins: at no instant do
			// both goroutines want the one P.
			name: "hand-off at one instant", procs: 1,
			logs: []Log{
				{Runs: []Span{run(0, 100)}, Waits: []Span{{50, 100}}, Sums: Sums{Lock: 50, Work: 50, Total: 100}},
				{Runs: []Span{run(0, 100)}, Waits: []Span{{0, 50}}, Sums: Sums{Lock: 50, Work: 50, Total: 100}},
			},
			want: Truth{Work: 0.5, Lock: 0.5},
		},
		{
			// Mark workers ran for 30 and a pause stopped both Ps for 10
			// (20 CPU): at most 30 + 10 of the one worker's time.
			name: "collector", procs: 2,
			logs: []Log{
				{Runs: []Span{run(0, 100)}, Sums: Sums{Work: 50, Alloc: 50, Total: 100}},
			},
			m:    Machine{Fractional: 30, Pause: 20, Idle: 70, RunDelay: -1},
			want: Truth{Work: 0.5, Alloc: 0.5, Displaced: 0.4},
		},
		{
			// The kernel kept threads waiting for 30: as much of the
			// workers' time may have been runnable with a P idle.
			name: "loaded machine", procs: 2,
			logs: []Log{
				{Runs: []Span{run(0, 100)}, Sums: Sums{Work: 100, Total: 100}},
			},
			m:    Machine{RunDelay: 30},
			want: Truth{Work: 1, Delayed: 0.3},
		},
		{
			// Two repetitions: each has its own release.
			name: "repetitions", procs: 1,
			logs: []Log{
				{Runs: []Span{run(0, 10), run(100, 110)}, Sums: Sums{Work: 18, Total: 20}},
			},
			want: Truth{Work: 0.9, Other: 0.1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Analyze(tt.logs, tt.m, tt.procs)
			if err != nil {
				t.Fatal(err)
			}
			w := tt.want
			for _, c := range []struct {
				name      string
				got, want float64
			}{
				{"work", got.Work, w.Work}, {"lock", got.Lock, w.Lock}, {"wait", got.Wait, w.Wait},
				{"alloc", got.Alloc, w.Alloc}, {"sched", got.Sched, w.Sched}, {"other", got.Other, w.Other},
				{"startup", got.Startup, w.Startup}, {"displaced", got.Displaced, w.Displaced}, {"delayed", got.Delayed, w.Delayed},
			} {
				if math.Abs(c.got-c.want) > 1e-9 {
					t.Errorf("%s = %v, want %v (%+v)", c.name, c.got, c.want, got)
				}
			}
		})
	}
}

func TestAnalyzeErrors(t *testing.T) {
	tests := []struct {
		name string
		logs []Log
		want string
	}{
		{"nothing", nil, "no worker ran"},
		{"uneven", []Log{{Runs: []Span{{0, 1}}}, {Runs: []Span{{0, 1}, {2, 3}}}}, "each repetition must run every worker once"},
		{"wait outside run", []Log{{Runs: []Span{{0, 10}}, Waits: []Span{{20, 30}}, Sums: Sums{Total: 10}}}, "a wait outside Run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Analyze(tt.logs, Machine{}, 2)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestWorkersDoNotAllocate: only the alloc variant may allocate in the
// timed loop, or the others' budgets would have an alloc row the truth
// cannot see. The sleep variant's timer is allocated once per goroutine.
func TestWorkersDoNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	rec, err := NewRecorder(1)
	if err != nil {
		t.Fatal(err)
	}
	rec.Start()
	defer rec.Stop()
	for _, v := range Scenario(rec).Variants {
		if v.Name == "alloc" {
			continue
		}
		c, err := v.New(nil)
		if err != nil {
			t.Fatal(err)
		}
		w := c.NewWorker(0)
		w.Run(1)
		// A recorded Run reads the machine's figures once at its start
		// and end (Recorder.begin, finish), which allocates; the
		// operations in it must not.
		one := testing.AllocsPerRun(20, func() { w.Run(1) })
		many := testing.AllocsPerRun(20, func() { w.Run(65) })
		if got := (many - one) / 64; got != 0 {
			t.Errorf("%s: %v allocations per operation", v.Name, got)
		}
	}
}

// TestWorkersHash checks that every variant hashes the same 16 KiB per
// operation and that the pieces add up to no more than Run's time.
func TestWorkersHash(t *testing.T) {
	rec, err := NewRecorder(1)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range Scenario(rec).Variants {
		c, _ := v.New(nil)
		w := c.NewWorker(0).(*worker)
		rec.Start()
		w.Run(64)
		logs, _, err := rec.Stop()
		if err != nil {
			t.Fatal(err)
		}
		if len(logs) != 1 || len(logs[0].Runs) != 1 {
			t.Fatalf("%s: logs %+v", v.Name, logs)
		}
		s := logs[0].Sums
		if parts := s.Lock + s.Wait + s.Work + s.Alloc; parts > s.Total || s.Work <= 0 {
			t.Errorf("%s: pieces %+v exceed total or no work", v.Name, s)
		}
		// The fan-out and pool classes' helpers hash the two halves.
		if none := ([sha256.Size]byte{}); w.sum == none && (w.hs.spans[0].sum == none || w.hs.spans[1].sum == none) {
			t.Errorf("%s: no digest", v.Name)
		}
		// Every hashing is timed with the thread CPU clock too: a
		// worker's (hashOnCPU), a helper's (hashHalf).
		if haveThreadCPU && (s.WorkCPU <= 0 || s.WorkCPU > s.Work) {
			t.Errorf("%s: hashing took %d ns of CPU in %d ns", v.Name, s.WorkCPU, s.Work)
		}
		if v.Name == "sleep" && s.Wait < int64(sleepFor) {
			t.Errorf("sleep: waited %d ns in 64 operations, want at least one %v sleep", s.Wait, sleepFor)
		}
	}
}

func TestRunDelays(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("schedstat is Linux's")
	}
	d := runDelays()
	if len(d) == 0 {
		t.Fatal("no thread's run delay read from /proc/self/task/*/schedstat")
	}
	for tid, ns := range d {
		if tid <= 0 || ns < 0 {
			t.Errorf("thread %d: run delay %d", tid, ns)
		}
	}
}

// TestComplement: a group of rows is work's complement only where every
// other asserted row is none, in the budget and the truth.
func TestComplement(t *testing.T) {
	group := []string{"wait", "sched", "other"}
	rows := func(lock, allocHi float64) []row {
		return []row{
			{name: "work", budget: 0.53, asserted: true},
			{name: "lock", budget: lock, hi: lock, asserted: true},
			{name: "wait", budget: 0.38},
			{name: "alloc+gc", budget: 0.001, hi: allocHi, asserted: true},
			{name: "other", budget: 0.09},
			{name: "wait+sched+other", budget: 0.47, hi: 0.42, asserted: true}, // the group's own row
		}
	}
	for _, tt := range []struct {
		name         string
		lock, allocH float64
		want         bool
	}{
		{"work and the group only", 0, 0.001, true},
		{"a lock share", 0.02, 0, false},
		{"alloc in the truth", 0, 0.03, false},
	} {
		if got := complement(rows(tt.lock, tt.allocH), group); got != tt.want {
			t.Errorf("%s: complement %v, want %v", tt.name, got, tt.want)
		}
	}
}
