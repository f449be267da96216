package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/lab"
)

// TestPrintErrorWrapped: on a terminal an error's long lines are broken at
// spaces within the width, later parts indented under their line; short
// lines, the gate's indented list included, are kept as they are; a word
// longer than the width (a URL, a pattern) is not cut.
func TestPrintErrorWrapped(t *testing.T) {
	long := `scenario uuid-hash has no variant "summ": did you mean sum? (variants: new, sum, pool, mutex, worker, clone, google-uuid)`
	words := func(n int) string { return strings.TrimSpace(strings.Repeat("word ", n)) }
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"short", errors.New("no runs"), "perflab: no runs\n"},
		{"long", errors.New(long),
			"perflab: scenario uuid-hash has no variant \"summ\": did you mean sum? (variants:\n" +
				"  new, sum, pool, mutex, worker, clone, google-uuid)\n"},
		{"a list under it", errors.New("a compared metric regressed beyond the threshold:\n  variant=mutex/threads=4 sec/op +12.0% [+8.0%, +16.0%]\n  x    y"),
			"perflab: a compared metric regressed beyond the threshold:\n  variant=mutex/threads=4 sec/op +12.0% [+8.0%, +16.0%]\n  x    y\n"},
		{"a long line in the list", errors.New("cannot judge:\n  " + long),
			"perflab: cannot judge:\n  scenario uuid-hash has no variant \"summ\": did you mean sum? (variants: new,\n    sum, pool, mutex, worker, clone, google-uuid)\n"},
		// Indented two more, the later parts are two narrower: wrapped
		// as the first, the second line here ran to 81 columns.
		{"continued lines fit too", errors.New(words(40)),
			"perflab: " + words(14) + "\n  " + words(15) + "\n  " + words(11) + "\n"},
		{"a word wider than the line", errors.New("fetch http://example.com/" + strings.Repeat("a", 90) + " failed"),
			"perflab: fetch\n  http://example.com/" + strings.Repeat("a", 90) + "\n  failed\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			printErrorWrapped(&b, nil, tt.err, 80)
			if b.String() != tt.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tt.want)
			}
			for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
				if utf8.RuneCountInString(l) > 80 && !strings.Contains(l, strings.Repeat("a", 90)) {
					t.Errorf("line of %d columns: %q", utf8.RuneCountInString(l), l)
				}
			}
		})
	}
}

// TestWriteErrorWraps: Main's errors fit 80 columns in a log or a pipe as
// on a terminal, as stderr's notes do: the gate's reasons in a CI log ran
// to 100-190 columns, bench's failed benchmarks to 87, a run that could
// not be saved to 122. Every word is kept, in order.
func TestWriteErrorWraps(t *testing.T) {
	gate := gateError(&lab.Gate{Verdict: lab.GateCannotJudge, Problems: []compare.Problem{
		{Kind: compare.ProblemMissing, What: "case variant=mutex/keys=1024/key=ssk/threads=4", Detail: "is in the base run 20261130-111905-cipher-cache but not in the new run"},
		{Kind: compare.ProblemFailed, What: "case variant=sharded/keys=1024/key=ssk/threads=4 of run 20261203-101500-cipher-cache", Detail: "failed: panic: sharded: index out of range [7] with length 4"},
	}})
	for _, tt := range []struct {
		name string
		err  error
	}{
		{"gate reasons", gate},
		{"failed benchmarks", lab.FailedError([]string{"BenchmarkHash/size=1024/loop-2", "BenchmarkMutex-2"}, 11, "benchmark")},
		// As store.Writer.Commit says it.
		{"saving run", fmt.Errorf("saving run (what was measured is in %s): %w", "/home/ci/work/perflab-runs/.20261203-221500-cipher-cache.partial",
			errors.New("write results.txt: no space left on device"))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			writeError(&IO{Err: &b}, tt.err) // not a terminal: a log
			for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
				if n := utf8.RuneCountInString(l); n > 80 {
					t.Errorf("line of %d columns: %q", n, l)
				}
			}
			if !containsWords(b.String(), "perflab: "+tt.err.Error()) {
				t.Errorf("words lost:\n%s\nwant those of %q", b.String(), tt.err)
			}
		})
	}
}
