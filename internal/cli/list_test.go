package cli

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/perflab/perflab"
)

// TestListGolden: `perflab list` and `perflab list -l` of a built-in
// scenario, and of one without work patterns; -l says each one's work
// patterns and where frame names come from.
func TestListGolden(t *testing.T) {
	cc, err := perflab.Lookup("cipher-cache")
	if err != nil {
		t.Fatal(err)
	}
	broken, err := perflab.Lookup("test-broken")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		file string
		long bool
	}{{"list.golden", false}, {"list-l.golden", true}} {
		t.Run(tt.file, func(t *testing.T) {
			var b strings.Builder
			writeList(&b, []*perflab.Scenario{cc, broken}, tt.long, "perflab flame")
			for i, line := range strings.Split(b.String(), "\n") {
				if n := utf8.RuneCountInString(line); n > listWidth {
					t.Errorf("line %d is %d columns: %q", i+1, n, line)
				}
			}
			golden(t, tt.file, b.String())
		})
	}
	// Naming a scenario lists it long, as list -l does.
	out, errs, code := execute(t, "list", "cipher-cache")
	if code != 0 || !strings.Contains(out, "work (frames the time budget counts as work):\n    ^crypto/internal/fips140/sha256\\.") || !strings.Contains(out, "go tool pprof -top") {
		t.Errorf("list cipher-cache: exit %d %s\n%s", code, errs, out)
	}
}
