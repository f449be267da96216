package cli

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// traceLocker hashes, half of it holding mu: its goroutines contend.
//
//go:noinline
func traceLocker(mu *sync.Mutex, until time.Time, wg *sync.WaitGroup) {
	defer wg.Done()
	buf := make([]byte, 4096)
	for time.Now().Before(until) {
		sha256.Sum256(buf)
		mu.Lock()
		sha256.Sum256(buf)
		mu.Unlock()
	}
}

// traceSleeper only sleeps, and says how long it slept.
//
//go:noinline
func traceSleeper(d time.Duration, slept *time.Duration, wg *sync.WaitGroup) {
	defer wg.Done()
	start := time.Now()
	time.Sleep(d)
	*slept = time.Since(start)
}

// writeTestTrace traces two lockers and a sleeper for d, with the CPU
// profiler on, into a file, and returns it and how long the sleeper slept.
func writeTestTrace(t *testing.T, d time.Duration) (string, time.Duration) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.trace")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cpu bytes.Buffer
	if err := pprof.StartCPUProfile(&cpu); err != nil {
		t.Fatal(err)
	}
	if err := trace.Start(f); err != nil {
		pprof.StopCPUProfile()
		t.Fatal(err)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Add(3)
	until := time.Now().Add(d)
	go traceLocker(&mu, until, &wg)
	go traceLocker(&mu, until, &wg)
	var slept time.Duration
	go traceSleeper(d, &slept, &wg)
	wg.Wait()
	trace.Stop()
	pprof.StopCPUProfile()
	return path, slept
}

// foldedTotals reads folded stacks and sums their values by whether the
// stack's root is root and by whether it has a frame containing frame.
func foldedTotal(t *testing.T, folded, root, frame string) int64 {
	t.Helper()
	var total int64
	for line := range strings.Lines(folded) {
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseInt(strings.TrimSpace(line[i+1:]), 10, 64)
		if err != nil {
			t.Fatalf("folded line %q: %v", line, err)
		}
		stack := line[:i]
		if (root == "" || strings.HasPrefix(stack, root+";") || stack == root) && strings.Contains(stack, frame) {
			total += v
		}
	}
	return total
}

// TestFlameTrace: flame draws an execution trace's exact wall-clock
// profile: the sleeper's time as a wait, the lockers' as hashing and lock,
// and with --goroutine only the goroutines started in matching functions.
func TestFlameTrace(t *testing.T) {
	const d = 200 * time.Millisecond
	path, slept := writeTestTrace(t, d)
	const pkg = "github.com/perflab/perflab/internal/cli."

	dir := t.TempDir()
	all := filepath.Join(dir, "all.folded")
	_, errs, code := execute(t, "flame", path, "-o", all)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// The note is wrapped at 80 columns: read it as words.
	if !containsWords(errs, "test.trace: execution trace of") || !containsWords(errs, "drawn: all goroutines") {
		t.Errorf("stderr does not say what was drawn:\n%s", errs)
	}
	for _, l := range strings.Split(errs, "\n") {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("a line of %d columns, over 80: %q", n, l)
		}
	}
	data, _ := os.ReadFile(all)
	folded := string(data)
	// The sleeper's sleep, by its own clock, is a wait (a state frame
	// [wait]…): within the time from its time.Now to its park and back,
	// a millisecond, or 2% of the sleep under -race, whose instrumentation
	// ran 1.3 ms there in make test. Drawn as anything else, the wait
	// would be off by the whole sleep.
	tol := max(time.Millisecond, slept/50)
	if got := time.Duration(foldedTotal(t, folded, pkg+"traceSleeper", "[wait]")); got < slept-tol || got > slept+time.Millisecond {
		t.Errorf("traceSleeper waited %v, it slept %v:\n%s", got, slept, folded)
	}
	lockers := time.Duration(foldedTotal(t, folded, pkg+"traceLocker", ""))
	if lockers < d {
		t.Errorf("the two lockers' time is %v, want most of 2×%v", lockers, d)
	}
	if foldedTotal(t, folded, pkg+"traceLocker", "sha256") == 0 {
		t.Errorf("no hashing under the lockers:\n%s", folded)
	}

	only := filepath.Join(dir, "lockers.folded")
	_, errs, code = execute(t, "flame", path, "--goroutine", `traceLocker$`, "-o", only)
	if code != 0 {
		t.Fatalf("--goroutine: exit %d: %s", code, errs)
	}
	data, _ = os.ReadFile(only)
	if got := foldedTotal(t, string(data), pkg+"traceSleeper", ""); got != 0 {
		t.Errorf("--goroutine traceLocker$ drew the sleeper's %v", time.Duration(got))
	}
	// The same up to rounding: running time is split over the CPU
	// samples' stacks in whole nanoseconds, and the two draws can round
	// a stack differently (seen under -race, 1 run in 4: one SHA-256
	// stack 234389567 ns drawn whole, 234389562 filtered).
	if got := time.Duration(foldedTotal(t, string(data), pkg+"traceLocker", "")); got < lockers-time.Microsecond || got > lockers+time.Microsecond {
		t.Errorf("--goroutine traceLocker$: lockers %v, want %v as without it", got, lockers)
	}
}

func TestFlameTraceErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.trace")
	os.WriteFile(bad, []byte("go 1.26 trace\x00\x00\x00garbage"), 0o644)
	notTrace := filepath.Join(dir, "cpu.folded")
	os.WriteFile(notTrace, []byte("main;f 1\n"), 0o644)
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"corrupt trace", []string{"flame", bad, "-o", filepath.Join(dir, "x.svg")}, 1, "bad.trace: reading trace"},
		{"--goroutine on a profile", []string{"flame", notTrace, "--goroutine", "x", "-o", filepath.Join(dir, "x.svg")}, 2, "is not one"},
		{"bad --goroutine", []string{"flame", bad, "--goroutine", "(", "-o", filepath.Join(dir, "x.svg")}, 2, "--goroutine: error parsing regexp"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, errs, code := execute(t, tt.args...)
			if code != tt.code || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, want %d saying %q:\n%s", code, tt.code, tt.want, errs)
			}
		})
	}
}
