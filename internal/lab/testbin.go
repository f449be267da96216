package lab

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"
)

// PlanError is an error in what the user asked for: for perflab bench a
// package that does not build, one without benchmarks, a -bench pattern
// that matches none; for perflab run an unknown scenario, variant or
// parameter, or a bad flag value. The command exits 2 for it.
type PlanError struct{ Err error }

func (e *PlanError) Error() string { return e.Err.Error() }
func (e *PlanError) Unwrap() error { return e.Err }

func planErrorf(format string, args ...any) error {
	return &PlanError{Err: fmt.Errorf(format, args...)}
}

// testBinary is one package's test binary, built once for the whole run.
type testBinary struct {
	ImportPath string
	Dir        string // the package's directory: binaries run there, as go test runs them
	Path       string // the binary
	name       string // its package's name (go list's Name)
	// cpuHz is the CPU profile's rate in a run with -test.cpuprofile:
	// cpuProfileHz where the rate file built (see cpurate.go), else the
	// testing package's 100; rateErr says why not, where it was wanted.
	cpuHz   int
	rateErr error
	// ignoredTests are its _test.go files that build constraints
	// leave out of this build (go list's IgnoredGoFiles).
	ignoredTests []string
}

// noTestsText says that b has no test files, and, where its _test.go
// files are all left out by build constraints, which and what to do.
func (b *testBinary) noTestsText() string {
	if len(b.ignoredTests) == 0 {
		return b.ImportPath + ": no test files"
	}
	return fmt.Sprintf("%s: no test files in this build: build constraints exclude %s (build with the tags they need, --tags, or --race)", b.ImportPath, strings.Join(b.ignoredTests, ", "))
}

// goCmd runs the go command in dir and returns its standard output; the
// error carries its standard error, which says what went wrong.
func goCmd(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return out, errors.New(msg)
	}
	return out, nil
}

// listPackages resolves package patterns (./..., an import path) to the
// packages that have test files, and says which have none.
func listPackages(ctx context.Context, dir string, patterns, flags []string) (withTests, without []*testBinary, err error) {
	args := append([]string{"list"}, flags...)
	args = append(args, "-f", "{{.ImportPath}}\t{{.Dir}}\t{{len .TestGoFiles}}\t{{len .XTestGoFiles}}\t{{.Name}}\t{{join .IgnoredGoFiles \"\\x00\"}}", "--")
	args = append(args, patterns...)
	out, err := goCmd(ctx, dir, args...)
	if err != nil {
		return nil, nil, planErrorf("go list %s: %v", strings.Join(patterns, " "), err)
	}
	for line := range strings.Lines(string(out)) {
		f := strings.Split(strings.TrimRight(line, "\n"), "\t")
		if len(f) != 6 {
			continue
		}
		b := &testBinary{ImportPath: f[0], Dir: f[1], name: f[4]}
		for name := range strings.SplitSeq(f[5], "\x00") {
			if strings.HasSuffix(name, "_test.go") {
				b.ignoredTests = append(b.ignoredTests, name)
			}
		}
		if f[2] == "0" && f[3] == "0" {
			without = append(without, b)
			continue
		}
		withTests = append(withTests, b)
	}
	return withTests, without, nil
}

// build compiles b's test binary into tmp with go test -c and the build
// flags (-tags, -race, -gcflags), with the rate file at target if not nil
// (see cpurate.go), for a traced run at cpuProfileHz. Where that does not
// build, rateErr says why, and the binary is built as the user's package
// is, its traced run at 100 Hz: a package that does not build then says
// so with the go command's words about its own code.
func (b *testBinary) build(ctx context.Context, dir, tmp string, n int, flags []string, target *rateTarget) error {
	b.Path = filepath.Join(tmp, fmt.Sprintf("pkg%d.test", n))
	args := append([]string{"test", "-c", "-o", b.Path}, flags...)
	b.cpuHz = 100
	if target != nil {
		overlay, err := writeRateOverlay(tmp, n, *target, cpuProfileHz)
		if err == nil {
			_, err = goCmd(ctx, dir, append(args, "-overlay="+overlay, b.ImportPath)...)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err == nil {
			b.cpuHz = cpuProfileHz
		} else {
			b.rateErr = err
		}
	}
	if b.cpuHz != cpuProfileHz {
		if _, err := goCmd(ctx, dir, append(args, b.ImportPath)...); err != nil {
			return planErrorf("%s does not build:\n%v", b.ImportPath, err)
		}
	}
	if _, err := os.Stat(b.Path); err != nil {
		// go test -c writes nothing for a package without tests.
		return planErrorf("%s: go test -c wrote no test binary (%v)", b.ImportPath, err)
	}
	return nil
}

// topLevel lists the binary's top-level benchmarks (-test.list).
func (b *testBinary) topLevel(ctx context.Context) ([]string, error) {
	cmd := exec.CommandContext(ctx, b.Path, "-test.list=^Benchmark")
	cmd.Dir = b.Dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: listing benchmarks: %v", b.ImportPath, err)
	}
	var names []string
	for line := range strings.Lines(string(out)) {
		if name := strings.TrimSpace(line); strings.HasPrefix(name, "Benchmark") && !strings.ContainsAny(name, " \t") {
			names = append(names, name)
		}
	}
	return names, nil
}

// probed is what one run of a top-level benchmark at 1x found in it.
type probed struct {
	names  []string          // benchmarks that gave a result, without -cpu suffix
	failed map[string]string // benchmarks that failed, with their output
	wall   time.Duration     // how long the process took
}

// failRE matches the testing package's line for a failed benchmark.
var failRE = regexp.MustCompile(`^--- FAIL: (Benchmark\S*)`)

// probe runs top (pattern: restricted to the sub-benchmarks the user's
// pattern selects in it) once at -benchtime=1x: its results name every
// sub-benchmark, which -test.list does not. A panic ends the process;
// then top is one failed case.
func (b *testBinary) probe(ctx context.Context, top, pattern string, cpu int, timeout time.Duration) probed {
	res := runBinary(ctx, b, pattern, "1x", cpu, timeout)
	p := probed{failed: map[string]string{}, wall: res.wall}
	for _, r := range res.results {
		p.names = append(p.names, stripCPU(r.Name.String(), cpu))
	}
	for name, out := range res.failed {
		p.failed[name] = out
	}
	if len(p.names) == 0 && len(p.failed) == 0 && res.err != nil {
		p.failed[top] = res.errText()
	}
	if res.timedOut != 0 {
		// Whatever had not finished is the one that hangs: a sub-benchmark
		// that gave a result does not, but it cannot be run without its
		// parent's code either, so all of top is failed.
		p.names = nil
		p.failed = map[string]string{top: res.timeoutText()}
	}
	return p
}

// stripCPU removes the -cpu suffix go test adds to a name when the -cpu
// value is not 1.
func stripCPU(name string, cpu int) string {
	if !strings.HasPrefix(name, "Benchmark") {
		name = "Benchmark" + name
	}
	if cpu != 1 {
		name = strings.TrimSuffix(name, fmt.Sprintf("-%d", cpu))
	}
	return name
}

// binaryRun is the outcome of one run of a test binary.
type binaryRun struct {
	results []*benchfmt.Result
	// failed maps each benchmark the testing package reported failed to
	// the output that came with it.
	failed map[string]string
	err    error         // the process's exit error
	output []byte        // all of it, stdout and stderr interleaved
	cpu    time.Duration // the process's CPU time, user and system
	wall   time.Duration // how long it ran
	// timedOut is the timeout that ended the process, 0 if none did.
	timedOut time.Duration
	// stopped are the benchmarks whose result line says 0 iterations:
	// they ended before b.N, by a panic or runtime.Goexit past b.N=1.
	stopped map[string]bool
}

// stoppedText says why a benchmark with a result of 0 iterations failed
// when its output does not: a panic past b.N=1 is not always printed, as
// the testing package can print the result line and exit 0 while the
// benchmark's goroutine is still panicking (1 run in 3 here, Go 1.26).
// Its first line, which the table shows, is short.
const stoppedText = "ended at 0 iterations: a panic or Goexit past b.N=1?\n" +
	"Its result line said 0 iterations and NaN ns/op, and the testing package exited before printing why; run it with go test -bench to see."

// saysWhy reports whether the output holds a panic, a fatal error or a
// FAIL line, which errText shows.
func (r *binaryRun) saysWhy() bool {
	for _, s := range []string{"panic: ", "--- FAIL", "fatal error: "} {
		if bytes.Contains(r.output, []byte(s)) {
			return true
		}
	}
	return false
}

// timeoutSlack is what a process may take beyond three times what it is
// expected to (see processTimeout); tests shorten it.
var timeoutSlack = 30 * time.Second

// processTimeout is the -test.timeout of a test binary's process that
// should take about expect: three times that, for a loaded machine's
// swings (wall time ±30% between rounds here, more when a GC regime
// changes), and timeoutSlack. Without one a benchmark that hangs stalls
// perflab bench for ever; with it, it is a failed case and the others
// run.
func processTimeout(expect time.Duration) time.Duration {
	return 3*expect + timeoutSlack
}

// timedOutRE matches the testing package's panic at -test.timeout.
var timedOutRE = regexp.MustCompile(`(?m)^panic: test timed out after `)

// timeoutText says that the process ran out of time, and where it was.
func (r *binaryRun) timeoutText() string {
	return fmt.Sprintf("timed out after %v: the benchmark hangs, or takes far longer than its calibration (a first run, at --time) said it would", r.timedOut)
}

// errText is the part of the output that says what went wrong: from a
// panic or a FAIL line on, at most 20 lines.
func (r *binaryRun) errText() string {
	lines := strings.Split(strings.TrimSpace(string(r.output)), "\n")
	from := -1
	for i, l := range lines {
		// A benchmark's name is printed before it runs, so a panic's
		// message can follow it on the same line.
		for _, start := range []string{"panic: ", "--- FAIL", "fatal error: "} {
			if j := strings.Index(l, start); j >= 0 && from < 0 {
				from, lines[i] = i, l[j:]
			}
		}
		if from >= 0 {
			break
		}
	}
	if from < 0 {
		from = max(0, len(lines)-10)
	}
	lines = lines[from:]
	if len(lines) > 20 {
		lines = lines[:20]
	}
	text := strings.TrimSpace(strings.Join(lines, "\n"))
	if text == "" && r.err != nil {
		text = r.err.Error()
	}
	return text
}

// runBinary runs the benchmarks pattern selects once each
// (-test.count=1) for benchtime, with allocation figures on as go test
// -benchmem gives them, and reads the results with benchfmt.
//
// The process has timeout (see processTimeout) as its -test.timeout, at
// which the testing package panics with every goroutine's stack; should
// that not end it, it is killed timeoutSlack later.
func runBinary(ctx context.Context, b *testBinary, pattern, benchtime string, cpu int, timeout time.Duration, extra ...string) *binaryRun {
	return runBinaryWith(ctx, b, pattern, benchtime, cpu, timeout, nil, extra...)
}

// runBinaryWith is runBinary, calling started, if not nil, with the
// process's id as soon as it has one (to record its threads' context
// switches from then on).
func runBinaryWith(ctx context.Context, b *testBinary, pattern, benchtime string, cpu int, timeout time.Duration, started func(pid int), extra ...string) *binaryRun {
	args := []string{
		"-test.run=^$", "-test.bench=" + pattern, "-test.count=1",
		"-test.benchtime=" + benchtime, "-test.benchmem",
		"-test.cpu=" + fmt.Sprint(cpu), "-test.timeout=" + timeout.String(),
	}
	kill, cancel := context.WithTimeout(ctx, timeout+timeoutSlack)
	defer cancel()
	cmd := exec.CommandContext(kill, b.Path, append(args, extra...)...)
	cmd.Dir = b.Dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Start()
	if err == nil {
		if started != nil {
			started(cmd.Process.Pid)
		}
		err = cmd.Wait()
	}
	output := out.Bytes()
	if b.cpuHz == cpuProfileHz && profiledArgs(extra) {
		output = dropRateComplaint(output)
	}
	r := &binaryRun{err: err, output: output, failed: map[string]string{}, stopped: map[string]bool{}, wall: time.Since(start)}
	if cmd.ProcessState != nil {
		r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if ctx.Err() == nil && (kill.Err() != nil || timedOutRE.Match(r.output)) {
		r.timedOut = timeout
	}
	rd := benchfmt.NewReader(bytes.NewReader(r.output), b.ImportPath)
	for rd.Scan() {
		res, ok := rd.Result().(*benchfmt.Result)
		switch {
		case !ok:
		case res.Iters <= 0:
			// A benchmark that panics past b.N=1 gets a line of 0
			// iterations and NaN ns/op before its panic: no result.
			r.stopped[stripCPU(res.Name.String(), cpu)] = true
		default:
			r.results = append(r.results, res.Clone())
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(r.output))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var cur string
	var body []string
	flush := func() {
		if cur != "" {
			r.failed[stripCPU(cur, cpu)] = strings.TrimSpace(strings.Join(body, "\n"))
		}
		cur, body = "", nil
	}
	for sc.Scan() {
		line := sc.Text()
		if m := failRE.FindStringSubmatch(line); m != nil {
			flush()
			cur = m[1]
			continue
		}
		if cur != "" && (strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t")) {
			body = append(body, strings.TrimSpace(line))
			continue
		}
		flush()
	}
	flush()
	return r
}
