package lab

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	goio "io"
	"path/filepath"
	"regexp"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/wallclock"
	"github.com/perflab/perflab/profiles"
	"github.com/perflab/perflab/profiles/flame"
)

// maxTraceBytes is the most of an execution trace flame reads. The trace
// is read as a stream, one generation (about a second) at a time, and the
// wall-clock profile keeps at most 65536 distinct stacks, so memory does
// not grow with the file; the bound is on the time a hostile or mistaken
// input can take (a 1 s trace of a busy benchmark is 4–20 MB).
const maxTraceBytes = 1 << 30

// traceMagic begins every Go execution trace: "go 1.23 trace\x00\x00\x00".
var traceMagic = regexp.MustCompile(`^go 1\.[0-9]+ trace\x00`)

// isTrace reports whether the first bytes of a file are a Go execution
// trace's header.
func isTrace(head []byte) bool { return traceMagic.Match(head) }

// openTrace opens arg as a Go execution trace (go test -trace,
// runtime/trace, a flight recorder's snapshot), if it is one: a nil input,
// with nothing read from a file, for anything else. Its exact wall-clock
// profile is drawn: every goroutine's time, running (split by the CPU
// samples in the trace) and off the CPU at the stack it stopped at, with
// the category it stopped for; the runtime's and the profilers' own
// goroutines left out, and with goroutine set only goroutines whose root
// function (the one they were started with) it matches. For "-" the
// trace is read from *stdin, which is replaced by a reader that still
// holds what was peeked at.
func openTrace(stdin *goio.Reader, arg string, goroutine *regexp.Regexp, rules *profiles.Rules) (*FlameInput, *TraceInput, error) {
	var r goio.Reader
	name := arg
	if arg == "-" {
		br := bufio.NewReader(*stdin)
		*stdin = br // what was peeked stays readable by the pprof reader
		head, _ := br.Peek(16)
		if !isTrace(head) {
			return nil, nil, nil
		}
		r, name = br, "stdin"
	} else {
		f, _, err := store.OpenUserFile(arg)
		if err != nil {
			return nil, nil, nil // not for this reader to report
		}
		defer f.Close()
		head := make([]byte, 16)
		n, _ := goio.ReadFull(f, head)
		if !isTrace(head[:n]) {
			return nil, nil, nil
		}
		r = goio.MultiReader(bytes.NewReader(head[:n]), f)
		name = filepath.Base(arg)
	}
	lr := &limitReader{r: bufio.NewReaderSize(r, 1<<16), left: maxTraceBytes}
	res, err := wallclock.FromTrace(lr, wallclock.Options{AllGoroutines: true, Rules: rules})
	if lr.over {
		return nil, nil, fmt.Errorf("%s: an execution trace over %d MiB: trace a shorter window", name, maxTraceBytes>>20)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	which := "all goroutines"
	if goroutine != nil {
		which = "goroutines started in functions matching " + goroutine.String()
		kept := keepGoroutines(res.Profile, goroutine)
		if kept == 0 {
			return nil, nil, planErr(fmt.Errorf("%s: no goroutine of the trace was started in a function matching --goroutine %s", name, goroutine))
		}
	}
	res.Profile.DurationNanos = res.Span.Nanoseconds()
	info := &TraceInput{Name: name, Span: res.Span, Goroutines: res.Goroutines, Drawn: which, CPUSamples: res.CPUSamples}
	return &FlameInput{Source: flame.NewSource(res.Profile), Title: name + " — wall clock, " + which + " (execution trace)"}, info, nil
}

// keepGoroutines keeps the samples of goroutines whose root function
// matches re, and returns how many it kept. Every sample's stack runs to
// its goroutine's root (runtime.goexit below it is skipped); one the CPU
// profiler could not unwind says nothing of it and is left out.
func keepGoroutines(p *profile.Profile, re *regexp.Regexp) int {
	kept := p.Sample[:0]
	for _, s := range p.Sample {
		root := ""
		for _, loc := range s.Location {
			for _, ln := range loc.Line {
				if ln.Function != nil && ln.Function.Name != "runtime.goexit" {
					root = ln.Function.Name
				}
			}
		}
		if root != "" && re.MatchString(root) {
			kept = append(kept, s)
		}
	}
	p.Sample = kept
	return len(kept)
}

// limitReader reads at most left bytes and then fails, saying so.
type limitReader struct {
	r    goio.Reader
	left int64
	over bool
}

var errTraceTooLarge = errors.New("trace too large")

func (l *limitReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		l.over = true
		return 0, errTraceTooLarge
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}
