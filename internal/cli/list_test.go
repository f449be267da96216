package cli

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/perflab/perflab"
)

func init() {
	// Work patterns as long as suite-lookup's: 98 and 132 columns.
	perflab.Register(&perflab.Scenario{Name: "test-long-work", Doc: "work patterns wider than a terminal",
		Work: []string{
			`^github\.com/perflab/perflab/scenarios/suitelookup\.(scanName|scanID|switchByName|switchByID)$`,
			`^internal/runtime/maps\.(runtime_mapaccess|\(\*Map\)\.get|\(\*table\)\.get|ctrlGroup\.|\(\*groupsReference\)\.|bitset\.|h1$|h2$)`,
			`^example\.com/a/very/long/module/path/without/any/alternatives/at/all/in/it/whatsoever\.`,
		},
		Variants: []perflab.Variant{{Name: "only", New: func(perflab.Params) (perflab.Case, error) {
			return perflab.CaseFunc(func(int) perflab.Worker { return perflab.WorkerFunc(func(int) {}) }), nil
		}}}})
}

// TestBreakPattern: a pattern is broken after a '|', else a '/', else
// anywhere but after a backslash, and its lines join into it.
func TestBreakPattern(t *testing.T) {
	for _, tt := range []struct {
		name        string
		p           string
		first, rest int
		want        []string
	}{
		{"fits", `^crypto/sha256\.`, 20, 18, []string{`^crypto/sha256\.`}},
		{"after a bar", `^a\.(bb|cc|dd)`, 10, 8, []string{`^a\.(bb|`, `cc|dd)`}},
		{"the last bar that fits", `^a\.(b|c|dd|e)`, 10, 8, []string{`^a\.(b|c|`, `dd|e)`}},
		{"after a slash without a bar", `^example.com/aaa/bbb\.`, 14, 12, []string{`^example.com/`, `aaa/bbb\.`}},
		{"anywhere, not after a backslash", `^abcdefgh\.ijk`, 10, 10, []string{`^abcdefgh`, `\.ijk`}},
		{"runes, not bytes", `^é/é/é/é/`, 4, 4, []string{`^é/`, `é/é/`, `é/`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := breakPattern(tt.p, tt.first, tt.rest)
			if !slices.Equal(got, tt.want) {
				t.Errorf("breakPattern(%q, %d, %d) = %q, want %q", tt.p, tt.first, tt.rest, got, tt.want)
			}
			if strings.Join(got, "") != tt.p {
				t.Errorf("lines %q do not join into %q", got, tt.p)
			}
			for i, l := range got {
				limit := tt.rest
				if i == 0 {
					limit = tt.first
				}
				if utf8.RuneCountInString(l) > limit {
					t.Errorf("line %d %q is wider than %d", i, l, limit)
				}
			}
		})
	}
}

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
	long, err := perflab.Lookup("test-long-work")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		file      string
		scenarios []*perflab.Scenario
		long      bool
	}{
		{"list.golden", []*perflab.Scenario{cc, broken}, false},
		{"list-l.golden", []*perflab.Scenario{cc, broken}, true},
		// Patterns wider than 80 columns, broken into lines that fit.
		{"list-l-long-work.golden", []*perflab.Scenario{long}, true},
	} {
		t.Run(tt.file, func(t *testing.T) {
			var b strings.Builder
			writeList(&b, tt.scenarios, tt.long, "perflab flame")
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
