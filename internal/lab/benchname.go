package lab

import (
	"fmt"
	"strconv"
	"strings"
)

// benchCase is one benchmark of a test binary at one -cpu value: a case of
// a perflab bench run.
type benchCase struct {
	pkg *testBinary
	// full is the go test name without the -cpu suffix:
	// "BenchmarkCache/keys=128/mode=a".
	full    string
	cpu     int
	variant string
	params  map[string]string
	order   []string // param names in the name's order
	// failed is why the case could not be measured at all (it failed or
	// panicked when listed); "" if it can be.
	failed string
}

// splitBenchName turns a go test benchmark name (without its -cpu suffix)
// into the matrix: the top-level name less "Benchmark" is the variant;
// each sub-benchmark part key=value is a parameter, and a bare part a
// parameter named by its position ("sub2" for the second part), as
// benchstat's -col and -row name them (/name and .name). A key that
// repeats keeps the first; later ones get their position too.
func splitBenchName(full string) (variant string, params map[string]string, order []string) {
	parts := strings.Split(full, "/")
	variant = strings.TrimPrefix(parts[0], "Benchmark")
	params = map[string]string{}
	for i, p := range parts[1:] {
		key, value, ok := strings.Cut(p, "=")
		if !ok || key == "" || key == "threads" || key == "variant" {
			key, value = "sub"+strconv.Itoa(i+1), p
		}
		if _, dup := params[key]; dup {
			key = "sub" + strconv.Itoa(i+1)
		}
		params[key] = value
		order = append(order, key)
	}
	return variant, params, order
}

// caseName is the stored case name, in the form scenario runs use
// (variant=…/param=…/threads=…), so that every renderer and comparison
// treats a bench run as a scenario run.
func (c *benchCase) caseName() string {
	var b strings.Builder
	b.WriteString("variant=")
	b.WriteString(c.variant)
	for _, k := range c.order {
		fmt.Fprintf(&b, "/%s=%s", k, c.params[k])
	}
	fmt.Fprintf(&b, "/threads=%d", c.cpu)
	return b.String()
}

// goName is the name go test prints for the case, -cpu suffix included
// (none at 1, as the testing package writes it).
func (c *benchCase) goName() string {
	if c.cpu == 1 {
		return c.full
	}
	return fmt.Sprintf("%s-%d", c.full, c.cpu)
}

// exactPattern is the -test.bench argument that runs only this case:
// each level anchored and quoted, since the testing package matches
// each slash-separated part at its own level.
func exactPattern(full string) string {
	parts := strings.Split(full, "/")
	for i, p := range parts {
		parts[i] = "^" + quoteBench(p) + "$"
	}
	return strings.Join(parts, "/")
}

// quoteBench quotes a name part for a -test.bench level. regexp.QuoteMeta
// is not enough: the testing package splits the pattern at slashes
// outside brackets first, so a part cannot contain one (names never do:
// a slash in b.Run's name makes another level).
func quoteBench(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// splitBenchRegexp splits a -bench pattern at the slashes the testing
// package splits it at: not inside brackets or parentheses.
func splitBenchRegexp(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '[', '(':
			depth++
		case ']', ')':
			if depth > 0 {
				depth--
			}
		case '/':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}
