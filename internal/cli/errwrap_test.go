package cli

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestPrintErrorWrapped: on a terminal an error's long lines are broken at
// spaces within the width, later parts indented under their line; short
// lines, the gate's indented list included, are kept as they are; a word
// longer than the width (a URL, a pattern) is not cut.
func TestPrintErrorWrapped(t *testing.T) {
	long := `scenario uuid-hash has no variant "summ": did you mean sum? (variants: new, sum, pool, mutex, worker, clone, google-uuid)`
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
