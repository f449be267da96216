package lab

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSplitBenchName(t *testing.T) {
	for _, tt := range []struct {
		name, full, variant, caseName string
		params                        map[string]string
		order                         []string
	}{
		{"top level", "BenchmarkCache", "Cache", "variant=Cache/threads=4", map[string]string{}, nil},
		{"key=value", "BenchmarkCache/keys=128/mode=a", "Cache", "variant=Cache/keys=128/mode=a/threads=4",
			map[string]string{"keys": "128", "mode": "a"}, []string{"keys", "mode"}},
		{"bare part by position", "BenchmarkHash/size=64/loop", "Hash", "variant=Hash/size=64/sub2=loop/threads=4",
			map[string]string{"size": "64", "sub2": "loop"}, []string{"size", "sub2"}},
		{"repeated key", "BenchmarkX/k=1/k=2", "X", "variant=X/k=1/sub2=2/threads=4",
			map[string]string{"k": "1", "sub2": "2"}, []string{"k", "sub2"}},
		{"reserved key", "BenchmarkX/threads=8", "X", "variant=X/sub1=threads=8/threads=4",
			map[string]string{"sub1": "threads=8"}, []string{"sub1"}},
		{"value with =", "BenchmarkX/expr=a=b", "X", "variant=X/expr=a=b/threads=4",
			map[string]string{"expr": "a=b"}, []string{"expr"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, p, o := splitBenchName(tt.full)
			if v != tt.variant || !maps.Equal(p, tt.params) || !slices.Equal(o, tt.order) {
				t.Errorf("splitBenchName(%q) = %q, %v, %v; want %q, %v, %v", tt.full, v, p, o, tt.variant, tt.params, tt.order)
			}
			c := &benchCase{full: tt.full, cpu: 4, variant: v, params: p, order: o}
			if got := c.caseName(); got != tt.caseName {
				t.Errorf("caseName = %q, want %q", got, tt.caseName)
			}
		})
	}
}

func TestGoName(t *testing.T) {
	for _, tt := range []struct {
		full string
		cpu  int
		want string
	}{
		{"BenchmarkX/a=1", 1, "BenchmarkX/a=1"}, // go test writes no -1
		{"BenchmarkX/a=1", 4, "BenchmarkX/a=1-4"},
	} {
		c := &benchCase{full: tt.full, cpu: tt.cpu}
		if got := c.goName(); got != tt.want {
			t.Errorf("goName(%q, cpu %d) = %q, want %q", tt.full, tt.cpu, got, tt.want)
		}
		if got := stripCPU(tt.want, tt.cpu); got != tt.full {
			t.Errorf("stripCPU(%q, %d) = %q, want %q", tt.want, tt.cpu, got, tt.full)
		}
	}
}

// TestExactPattern: the pattern of a case matches its name at every level
// and nothing that only starts like it, metacharacters included.
func TestExactPattern(t *testing.T) {
	for _, tt := range []struct {
		full  string
		match []string // other names at each level that must not match
	}{
		{"BenchmarkX", []string{"BenchmarkXY"}},
		{"BenchmarkX/size=1.5", []string{"BenchmarkX", "size=105"}},
		{"BenchmarkX/a+b(c)[d]|e", []string{"BenchmarkX", "aab(c)[d]|e"}},
	} {
		pat := splitBenchRegexp(exactPattern(tt.full))[0]
		parts := strings.Split(tt.full, "/")
		if len(pat) != len(parts) {
			t.Fatalf("exactPattern(%q) = %q: %d levels, want %d", tt.full, exactPattern(tt.full), len(pat), len(parts))
		}
		for i := range parts {
			re := regexp.MustCompile(pat[i])
			if !re.MatchString(parts[i]) {
				t.Errorf("level %d of %q: %q does not match %q", i, tt.full, pat[i], parts[i])
			}
			if i < len(tt.match) && tt.match[i] != parts[i] && re.MatchString(tt.match[i]) {
				t.Errorf("level %d of %q: %q matches %q too", i, tt.full, pat[i], tt.match[i])
			}
		}
	}
}

func TestSplitBenchRegexp(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want [][]string
	}{
		{".", [][]string{{"."}}},
		{"Cache/keys=128", [][]string{{"Cache", "keys=128"}}},
		{"X/[/]/(a/b)", [][]string{{"X", "[/]", "(a/b)"}}},
		{`X\/Y/z`, [][]string{{`X\/Y`, "z"}}},
		{"A|B/x|C", [][]string{{"A"}, {"B", "x"}, {"C"}}},
		{"(A|B)/x", [][]string{{"(A|B)", "x"}}},
	} {
		if got := splitBenchRegexp(tt.in); !slices.EqualFunc(got, tt.want, slices.Equal) {
			t.Errorf("splitBenchRegexp(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestBenchPatternForTop(t *testing.T) {
	p, err := compileBenchPattern("Mutex|Hash/size=1024|Fail")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ top, want string }{
		{"BenchmarkMutex", "^BenchmarkMutex$"},
		{"BenchmarkHash", "^BenchmarkHash$/size=1024"},
		{"BenchmarkFail", "^BenchmarkFail$"},
		{"BenchmarkAlloc", ""},
	} {
		if got := p.forTop(tt.top); got != tt.want {
			t.Errorf("forTop(%q) = %q, want %q", tt.top, got, tt.want)
		}
		if got := p.matchTop(tt.top); got != (tt.want != "") {
			t.Errorf("matchTop(%q) = %v", tt.top, got)
		}
	}
}

// TestInBenchmark: a benchmark goroutine's time counts only inside the
// benchmark's own code.
func TestInBenchmark(t *testing.T) {
	for _, tt := range []struct {
		name  string
		stack []string // leaf first
		want  bool
	}{
		{"b.N loop", []string{"crypto/sha256.Sum256", "pkg.BenchmarkX", "testing.(*B).runN", "testing.(*B).launch"}, true},
		{"lock wait", []string{"[lock] blocked (sync)", "internal/sync.(*Mutex).lockSlow", "pkg.BenchmarkX.func1", "testing.(*B).RunParallel.func1"}, true},
		{"runN's GC before the timer", []string{"[gc] blocked", "runtime.GC", "testing.(*B).runN", "testing.(*B).launch"}, false},
		{"runN itself", []string{"[sched] runnable", "testing.(*B).runN", "testing.(*B).launch"}, false},
		{"parent waits for its sub-benchmark", []string{"[wait] blocked (chan receive)", "runtime.chanrecv1", "testing.(*B).run1", "testing.(*B).Run", "pkg.BenchmarkX", "testing.(*B).runN", "testing.(*B).run1.func1"}, false},
		{"RunParallel's caller waits", []string{"[wait] blocked", "sync.(*WaitGroup).Wait", "testing.(*B).RunParallel", "pkg.BenchmarkX", "testing.(*B).runN", "testing.(*B).launch"}, false},
		{"RunParallel body ends", []string{"sync.(*WaitGroup).Done", "testing.(*B).RunParallel.func1"}, false},
		{"launch hands back", []string{"[wait] blocked (chan send)", "testing.(*B).launch.func1", "testing.(*B).launch"}, false},
		{"no testing frame", []string{"pkg.helper"}, false},
	} {
		if got := inBenchmark(tt.stack); got != tt.want {
			t.Errorf("%s: inBenchmark = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestErrText: what a failed run says starts at its panic or FAIL line,
// even when the panic's message follows the benchmark's name on its line.
func TestErrText(t *testing.T) {
	for _, tt := range []struct{ name, out, want string }{
		{"panic after the name", "goos: linux\nBenchmarkPanic-2 \tpanic: boom\n\ngoroutine 6 [running]:\nmain.f()", "panic: boom\n\ngoroutine 6 [running]:\nmain.f()"},
		{"fail", "--- FAIL: BenchmarkFail\n    x_test.go:9: no\nFAIL", "--- FAIL: BenchmarkFail\n    x_test.go:9: no\nFAIL"},
	} {
		r := &binaryRun{output: []byte(tt.out)}
		if got := r.errText(); got != tt.want {
			t.Errorf("%s: errText = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestAddCases: each benchmark a probe named is a case at every -cpu
// value; a parent of sub-benchmarks is not a case of its own, even when
// it failed with its sub-benchmark; a benchmark that failed when probed
// is a failed case.
func TestAddCases(t *testing.T) {
	pkg := &benchPackage{bin: &testBinary{ImportPath: "x"}}
	pkg.add(probed{
		names:  []string{"BenchmarkX/a=1", "BenchmarkX/a=2"},
		failed: map[string]string{"BenchmarkX/a=3": "boom", "BenchmarkX": ""},
	}, []int{1, 4})
	var got []string
	for _, c := range pkg.cases {
		got = append(got, c.goName()+":"+c.failed)
	}
	want := []string{"BenchmarkX/a=1:", "BenchmarkX/a=1-4:", "BenchmarkX/a=2:", "BenchmarkX/a=2-4:", "BenchmarkX/a=3:boom", "BenchmarkX/a=3-4:boom"}
	if !slices.Equal(got, want) {
		t.Errorf("cases %q, want %q", got, want)
	}
}

// TestRunBinaryStopped: a result line of 0 iterations (a benchmark that
// panicked past b.N=1) is no result but a stopped benchmark, and an
// output without the panic (the testing package exited 0 before printing
// it) does not say why, so the case gets stoppedText.
func TestRunBinaryStopped(t *testing.T) {
	for _, tt := range []struct {
		name, out string
		why       bool
	}{
		{"panic lost", "goos: linux\nBenchmarkBoom-2 \t 0\t NaN ns/op\t 0 B/op\nPASS\n", false},
		{"panic printed", "BenchmarkBoom-2 \t 0\t NaN ns/op\npanic: boom\n\ngoroutine 7 [running]:\n", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bin := filepath.Join(t.TempDir(), "x.test")
			script := "#!/bin/sh\ncat <<'OUT'\n" + tt.out + "OUT\n"
			if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			r := runBinary(context.Background(), &testBinary{ImportPath: "x", Path: bin}, "^BenchmarkBoom$", "10x", 2, time.Minute)
			if len(r.results) != 0 || !r.stopped["BenchmarkBoom"] {
				t.Errorf("results %v, stopped %v: want no result, BenchmarkBoom stopped", r.results, r.stopped)
			}
			if r.saysWhy() != tt.why {
				t.Errorf("saysWhy = %v, want %v", r.saysWhy(), tt.why)
			}
		})
	}
}
