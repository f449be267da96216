package lab

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
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
	// probeWall is how long the probe of its top-level benchmark took:
	// its setup, for the calibration's timeout.
	probeWall time.Duration
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

// splitBenchRegexp splits a -bench pattern as the testing package does
// (testing/match.go's splitRegexp): into alternatives at each top-level
// "|", each into its levels at each top-level "/" (not inside brackets or
// parentheses). "A|B/x" is A, or B's sub-benchmarks matching x.
func splitBenchRegexp(s string) [][]string {
	var alts [][]string
	var levels []string
	brackets, parens := 0, 0
	for i := 0; i < len(s); {
		switch s[i] {
		case '[':
			brackets++
		case ']':
			if brackets--; brackets < 0 {
				brackets = 0
			}
		case '(':
			if brackets == 0 {
				parens++
			}
		case ')':
			if brackets == 0 {
				parens--
			}
		case '\\':
			i++
		case '/', '|':
			if brackets == 0 && parens == 0 {
				levels = append(levels, s[:i])
				if s[i] == '|' {
					alts = append(alts, levels)
					levels = nil
				}
				s = s[i+1:]
				i = 0
				continue
			}
		}
		i++
	}
	return append(alts, append(levels, s))
}

// benchPattern is a compiled -bench pattern: alternatives of levels.
type benchPattern struct {
	alts [][]string
	top  []*regexp.Regexp // each alternative's first level
}

func compileBenchPattern(s string) (*benchPattern, error) {
	p := &benchPattern{alts: splitBenchRegexp(s)}
	for _, alt := range p.alts {
		for i, l := range alt {
			re, err := regexp.Compile(l)
			if err != nil {
				return nil, err
			}
			if i == 0 {
				p.top = append(p.top, re)
			}
		}
	}
	return p, nil
}

// matchTop reports whether a top-level benchmark is selected.
func (p *benchPattern) matchTop(name string) bool {
	for _, re := range p.top {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}

// forTop is the pattern that runs only top, with the sub-benchmarks the
// user's pattern selects in it.
func (p *benchPattern) forTop(top string) string {
	var alts []string
	for i, alt := range p.alts {
		if p.top[i].MatchString(top) {
			alts = append(alts, strings.Join(append([]string{exactPattern(top)}, alt[1:]...), "/"))
		}
	}
	return strings.Join(alts, "|")
}
