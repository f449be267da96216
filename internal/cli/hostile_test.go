package cli

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/perflab/perflab"
)

func init() {
	// A scenario whose texts hold terminal escapes: a scenario package
	// may be anyone's.
	perflab.Register(&perflab.Scenario{Name: "test-hostile-list", Doc: "retitles \x1b]0;pwned\x07 the terminal",
		Long:   "clears \x1b[2J it \u202e",
		Work:   []string{"^evil\x1b\\[2J\\."},
		Params: []perflab.Param{{Name: "mode", Doc: "red \x1b[31m", Values: []string{"a", "b\x1b[0m"}, Default: []string{"a"}}},
		Variants: []perflab.Variant{
			{Name: "ok", Doc: "bell \x07", New: func(perflab.Params) (perflab.Case, error) {
				return perflab.CaseFunc(func(int) perflab.Worker { return perflab.WorkerFunc(func(int) {}) }), nil
			}},
		}})
}

// TestListEscapes: `perflab list` escapes a scenario's texts, as every
// other command escapes a run's (issue 26).
func TestListEscapes(t *testing.T) {
	for _, args := range [][]string{{"list"}, {"list", "test-hostile-list"}} {
		out, errs, code := execute(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, errs)
		}
		for _, raw := range []string{"\x1b", "\x07", "\u202e"} {
			if strings.Contains(out, raw) {
				t.Errorf("%v prints %q raw:\n%s", args, raw, out)
			}
		}
		want := []string{`\x1b]0;pwned\x07`, `\x1b[31m`, `b\x1b[0m`, `bell \x07`}
		if len(args) > 1 { // long: with the work patterns
			want = append(want, `^evil\x1b\[2J\.`)
		}
		for _, want := range want {
			if !strings.Contains(out, want) {
				t.Errorf("%v lacks %q:\n%s", args, want, out)
			}
		}
		for i, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); n > listWidth {
				t.Errorf("%v line %d is %d columns: %q", args, i+1, n, line)
			}
		}
	}
}

// TestUntilNaN: --until NaN% is a usage error, not a target no interval
// can reach or every interval passes (issue 26).
func TestUntilNaN(t *testing.T) {
	for _, v := range []string{"NaN%", "nan", "-1%", "0", "Inf"} {
		_, errs, code := execute(t, "run", "test-hostile-list", "--until", v, "-o", t.TempDir())
		if code != 2 || !strings.Contains(errs, "--until") {
			t.Errorf("--until %s: exit %d\n%s", v, code, errs)
		}
	}
}
