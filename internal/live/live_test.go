package live

import (
	"context"
	"errors"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab"
)

// counter is a worker that counts its operations, as a Counter.
type counter struct {
	ops     atomic.Int64
	panicAt int64 // panic once ops reach it; 0: never
	block   chan struct{}
	sleep   time.Duration // each Run call takes at least this
	_       [40]byte
}

func (w *counter) Run(n int) {
	if w.block != nil {
		<-w.block
	}
	time.Sleep(w.sleep)
	if w.panicAt > 0 && w.ops.Load()+int64(n) >= w.panicAt {
		panic("boom in Run")
	}
	w.ops.Add(int64(n))
}

func (w *counter) Counts() map[string]int64 { return map[string]int64{"events": w.ops.Load()} }

// state is a case that counts its Close calls.
type state struct {
	workers []*counter
	closes  atomic.Int32
	opts    func(id int) *counter
}

func (s *state) NewWorker(id int) perflab.Worker {
	w := s.opts(id)
	s.workers = append(s.workers, w)
	return w
}
func (s *state) Close() error { s.closes.Add(1); return nil }

func scenario(v perflab.Variant) *perflab.Scenario {
	return &perflab.Scenario{Name: "t", Variants: []perflab.Variant{v}}
}

func TestLifecycle(t *testing.T) {
	for _, tt := range []struct {
		name    string
		threads int
		newFn   func(st *state) (perflab.Case, error)
		worker  func(id int) *counter
		run     func(ctx context.Context, c *Case) (ops int64, err error)
		cancel  time.Duration // cancel the context this long after the run starts; 0: never
		// want
		newErr, runErr string
		ops            int64 // operations counted by the workers' Counters
		closes         int32
	}{
		{
			name:    "n per worker",
			threads: 3,
			run: func(ctx context.Context, c *Case) (int64, error) {
				_, err := c.Run(ctx, 7, nil)
				return 21, err
			},
			ops: 21, closes: 1,
		},
		{
			name:    "total split over workers",
			threads: 3,
			run: func(ctx context.Context, c *Case) (int64, error) {
				_, err := c.RunTotal(ctx, 10, nil)
				return 10, err
			},
			ops: 10, closes: 1,
		},
		{
			name:    "until a time",
			threads: 2,
			run: func(ctx context.Context, c *Case) (int64, error) {
				ops, _, err := c.RunUntil(ctx, 5, time.Now().Add(30*time.Millisecond))
				return ops, err
			},
			ops: -1, closes: 1, // whatever RunUntil says it did
		},
		{
			name:    "panicking New",
			threads: 1,
			newFn:   func(*state) (perflab.Case, error) { panic("no config") },
			newErr:  "setup panicked: no config",
		},
		{
			name:    "New error keeps ErrNotApplicable",
			threads: 1,
			newFn: func(*state) (perflab.Case, error) {
				return nil, perflab.ErrNotApplicable
			},
			newErr: "setup: not applicable",
		},
		{
			name:    "panicking NewWorker closes the state",
			threads: 2,
			worker: func(id int) *counter {
				if id == 1 {
					panic("worker 1 has no buffer")
				}
				return &counter{}
			},
			newErr: "setup panicked: NewWorker: worker 1 has no buffer",
			closes: 1,
		},
		{
			name:    "panicking op is the run's error",
			threads: 2,
			worker:  func(int) *counter { return &counter{panicAt: 3} },
			run: func(ctx context.Context, c *Case) (int64, error) {
				_, err := c.Run(ctx, 5, nil)
				return 0, err
			},
			runErr: "worker panicked: boom in Run",
			ops:    0, closes: 1,
		},
		{
			name:    "cancelled run is abandoned and never closed",
			threads: 2,
			worker:  func(int) *counter { return &counter{block: make(chan struct{})} },
			run: func(ctx context.Context, c *Case) (int64, error) {
				_, err := c.Run(ctx, 5, nil)
				if !c.Abandoned() {
					t.Error("Abandoned() = false after a cancelled Run")
				}
				return 0, err
			},
			cancel: 20 * time.Millisecond,
			runErr: "run abandoned",
			ops:    0, closes: 0,
		},
		{
			// Its workers return within a call of stop: what they did
			// is counted, and the case closed (it was abandoned, so a
			// Ctrl-C during soak leaked every case's state).
			name:    "cancelled RunUntil stops, counts and closes",
			threads: 2,
			run: func(ctx context.Context, c *Case) (int64, error) {
				ops, _, err := c.RunUntil(ctx, 5, time.Now().Add(time.Hour))
				if c.Abandoned() {
					t.Error("Abandoned() = true after a RunUntil whose workers stopped")
				}
				return ops, err
			},
			cancel: 20 * time.Millisecond,
			runErr: "run interrupted",
			ops:    -1, closes: 1,
		},
		{
			// The call in flight when ctx ends takes 100 ms more, within
			// StopGrace: waited for and counted.
			name:    "cancelled RunUntil waits for the call in flight",
			threads: 2,
			worker:  func(int) *counter { return &counter{sleep: 100 * time.Millisecond} },
			run: func(ctx context.Context, c *Case) (int64, error) {
				ops, _, err := c.RunUntil(ctx, 3, time.Now().Add(time.Hour))
				if c.Abandoned() {
					t.Error("Abandoned() = true after a RunUntil whose workers returned within StopGrace")
				}
				return ops, err
			},
			cancel: 20 * time.Millisecond,
			runErr: "run interrupted",
			ops:    6, closes: 1,
		},
		{
			// Run's workers do not check stop: it does not wait for
			// them (Ctrl-C at once, issue 14), even when they would end
			// within StopGrace.
			name:    "cancelled Run does not wait",
			threads: 2,
			worker:  func(int) *counter { return &counter{sleep: 200 * time.Millisecond} },
			run: func(ctx context.Context, c *Case) (int64, error) {
				before := c.Counts()["events"]
				_, err := c.Run(ctx, 3, nil)
				if got := c.Counts()["events"] - before; got != 0 {
					t.Errorf("cancelled Run returned after its workers did %d ops, want before they finished", got)
				}
				// Let the abandoned workers end, for the count below.
				for deadline := time.Now().Add(10 * time.Second); c.Counts()["events"]-before < 6 && time.Now().Before(deadline); {
					time.Sleep(10 * time.Millisecond)
				}
				return 0, err
			},
			cancel: 20 * time.Millisecond,
			runErr: "run abandoned",
			ops:    6, closes: 0,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := &state{opts: tt.worker}
			if st.opts == nil {
				st.opts = func(int) *counter { return &counter{} }
			}
			newFn := tt.newFn
			if newFn == nil {
				newFn = func(st *state) (perflab.Case, error) { return st, nil }
			}
			s := scenario(perflab.Variant{Name: "v", New: func(perflab.Params) (perflab.Case, error) { return newFn(st) }})
			c, err := New(context.Background(), s, perflab.CaseSpec{Variant: "v", Threads: tt.threads}, map[string]string{"case": "c1"})
			if tt.newErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.newErr) {
					t.Fatalf("New error %v, want %q", err, tt.newErr)
				}
				if strings.Contains(tt.newErr, "not applicable") && !errors.Is(err, perflab.ErrNotApplicable) {
					t.Errorf("errors.Is(%v, ErrNotApplicable) = false", err)
				}
				if got := st.closes.Load(); got != tt.closes {
					t.Errorf("state closed %d times, want %d", got, tt.closes)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Threads() != tt.threads {
				t.Errorf("Threads() = %d, want %d", c.Threads(), tt.threads)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel > 0 {
				time.AfterFunc(tt.cancel, cancel)
			}
			before := c.Counts()["events"]
			ops, err := tt.run(ctx, c)
			if tt.runErr == "" && err != nil {
				t.Fatalf("run: %v", err)
			}
			if tt.runErr != "" && (err == nil || !strings.Contains(err.Error(), tt.runErr)) {
				t.Fatalf("run error %v, want %q", err, tt.runErr)
			}
			if tt.runErr == "run abandoned" && !errors.Is(err, ErrAbandoned) || tt.runErr == "run abandoned" && !errors.Is(err, context.Canceled) {
				t.Errorf("errors.Is(%v, ErrAbandoned and context.Canceled) = false", err)
			}
			if tt.runErr == "run interrupted" && (!errors.Is(err, ErrInterrupted) || errors.Is(err, ErrAbandoned) || !errors.Is(err, context.Canceled)) {
				t.Errorf("err %v: want ErrInterrupted and context.Canceled, not ErrAbandoned", err)
			}
			if errors.Is(err, ErrAbandoned) && !errors.Is(err, ErrInterrupted) {
				t.Errorf("errors.Is(%v, ErrInterrupted) = false for an abandoned run", err)
			}
			if tt.ops >= 0 {
				if got := c.Counts()["events"] - before; got != tt.ops {
					t.Errorf("counted %d ops, want %d", got, tt.ops)
				}
			} else if tt.runErr == "" || tt.runErr == "run interrupted" {
				if ops <= 0 || c.Counts()["events"]-before != ops {
					t.Errorf("RunUntil said %d ops, Counters counted %d", ops, c.Counts()["events"]-before)
				}
			}
			c.Close()
			c.Close()
			if got := st.closes.Load(); got != tt.closes {
				t.Errorf("state closed %d times, want %d", got, tt.closes)
			}
			for _, w := range st.workers {
				if w.block != nil {
					close(w.block) // let the abandoned workers end
				}
			}
		})
	}
}

// TestNewAbandoned: a New that blocks is given up when the context ends,
// and what it returns later is closed.
func TestNewAbandoned(t *testing.T) {
	release := make(chan struct{})
	st := &state{opts: func(int) *counter { return &counter{} }}
	s := scenario(perflab.Variant{Name: "v", New: func(perflab.Params) (perflab.Case, error) {
		<-release
		return st, nil
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := New(ctx, s, perflab.CaseSpec{Variant: "v", Threads: 1}, nil)
	if !errors.Is(err, ErrAbandoned) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want ErrAbandoned by the deadline", err)
	}
	close(release)
	for deadline := time.Now().Add(2 * time.Second); st.closes.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if st.closes.Load() != 1 {
		t.Errorf("the case New returned after it was abandoned was closed %d times, want 1", st.closes.Load())
	}
}

// TestLabelsAndMeter: every worker goroutine runs workerLoop under the
// case's pprof labels, and the Meter's Before runs with every worker
// parked, After with every one finished.
func TestLabelsAndMeter(t *testing.T) {
	var ran atomic.Int32
	hold := make(chan struct{})
	ws := make([]perflab.Worker, 3)
	for i := range ws {
		ws[i] = perflab.WorkerFunc(func(n int) {
			ran.Add(1)
			<-hold
		})
	}
	c := Of(map[string]string{"case": "c1", "variant": "v"}, nil, ws...)
	var atBefore, atAfter int32 = -1, -1
	go func() {
		for ran.Load() < 3 {
			time.Sleep(time.Millisecond)
		}
		// Every worker is in Run: their goroutines carry the labels.
		var b strings.Builder
		pprof.Lookup("goroutine").WriteTo(&b, 1)
		if got := strings.Count(b.String(), `labels: {"case":"c1", "variant":"v"}`); got != 1 {
			t.Errorf("goroutine profile: %d groups labelled case=c1, variant=v, want the 3 workers in one:\n%s", got, b.String())
		}
		if !strings.Contains(b.String(), WorkerFrame) {
			t.Errorf("goroutine profile has no %s frame", WorkerFrame)
		}
		close(hold)
	}()
	_, err := c.Run(context.Background(), 1, &Meter{
		Before: func() { atBefore = ran.Load() },
		After:  func() { atAfter = ran.Load() },
	})
	if err != nil {
		t.Fatal(err)
	}
	if atBefore != 0 || atAfter != 3 {
		t.Errorf("workers run at Before %d, at After %d; want 0 and 3", atBefore, atAfter)
	}
}
