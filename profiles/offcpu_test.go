package profiles

import (
	"strings"
	"testing"
)

func TestOffCPU(t *testing.T) {
	user, err := ParseRules(strings.NewReader("lock ^example\\.com/sem\\.\\(\\*Sem\\)\\.Acquire$\n"), "test.rules")
	if err != nil {
		t.Fatal(err)
	}
	user, err = user.WithWork(`^example\.com/app\.`)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		stack  string // leaf first, " < " between frames
		reason string
		want   Category
	}{
		{"mutex", "internal/sync.runtime_SemacquireMutex < internal/sync.(*Mutex).lockSlow < sync.(*Mutex).Lock < example.com/app.run", "sync", Lock},
		{"rwmutex reader", "sync.runtime_SemacquireRWMutexR < sync.(*RWMutex).RLock < example.com/app.run", "sync", Lock},
		{"channel", "runtime.chansend1 < example.com/app.run", "chan send", Wait},
		{"select", "runtime.selectgo < example.com/app.run", "select", Wait},
		{"sleep", "time.Sleep < example.com/app.run", "sleep", Wait},
		{"waitgroup", "sync.runtime_SemacquireWaitGroup < sync.(*WaitGroup).Wait < example.com/app.run", "sync", Wait},
		{"cond", "sync.runtime_notifyListWait < sync.(*Cond).Wait < example.com/app.run", "sync.(*Cond).Wait", Wait},
		// The work pattern matches a frame of the stack, but a blocked
		// goroutine does no work.
		{"unknown wait under work", "example.com/app.wait < example.com/app.run", "forever", Wait},
		{"gc assist", "runtime.gcParkAssist < runtime.gcAssistAlloc < runtime.mallocgc < example.com/app.run", "GC mark assist wait for work", GC},
		{"gc reason without gc frames", "example.com/app.run", "wait until GC ends", GC},
		// "This channel is my lock": a user rule anywhere in the stack beats
		// the leaf-most built-in rule (chansend1 is a wait).
		{"user rule decides", "runtime.chansend1 < example.com/sem.(*Sem).Acquire < example.com/app.run", "chan send", Lock},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := user.OffCPU(strings.Split(tt.stack, " < "), tt.reason); got != tt.want {
				t.Errorf("OffCPU = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestYielded(t *testing.T) {
	r := DefaultRules()
	handoff := "runtime.goyield < runtime.semrelease1 < internal/sync.runtime_Semrelease < internal/sync.(*Mutex).unlockSlow < internal/sync.(*Mutex).Unlock < sync.(*Mutex).Unlock < main.worker"
	if got := r.Yielded(strings.Split(handoff, " < ")); got != Lock {
		t.Errorf("yield inside a mutex handoff = %s, want lock", got)
	}
	if got := r.Yielded([]string{"crypto/internal/fips140/sha256.blockSHANI", "main.worker"}); got != Sched {
		t.Errorf("preempted while hashing = %s, want sched", got)
	}
	spin := "runtime.procyieldAsm < runtime.procyield < internal/sync.(*Mutex).lockSlow < internal/sync.(*Mutex).Lock < sync.(*Mutex).Lock < main.worker"
	if got := r.Yielded(strings.Split(spin, " < ")); got != Lock {
		t.Errorf("stopped while spinning for a mutex = %s, want lock", got)
	}
	wake := "runtime.futex < runtime.futexwakeup < runtime.notewakeup < runtime.startm < runtime.wakep < runtime.ready < runtime.goready < runtime.send < runtime.chansend < runtime.chansend1 < main.worker"
	if got := r.Yielded(strings.Split(wake, " < ")); got != Wait {
		t.Errorf("stopped while a send woke its receiver = %s, want wait", got)
	}
	if got := r.Yielded([]string{"runtime.Gosched", "main.worker"}); got != Sched {
		t.Errorf("runtime.Gosched = %s, want sched", got)
	}
}

func TestStateFrameClassifies(t *testing.T) {
	r := DefaultRules()
	for _, c := range Categories {
		if got := r.Classify([]string{StateFrame(c, "blocked (x)"), "main.worker"}); got != c {
			t.Errorf("state frame of %s classifies as %s", c, got)
		}
	}
}
