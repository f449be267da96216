package perflab

import (
	"fmt"
	"strconv"
	"strings"
)

// CaseSpec names one case of a scenario: a variant, a value for every
// parameter and a goroutine count.
type CaseSpec struct {
	Variant string // the variant's name
	Params  Params // a value for every parameter
	Threads int    // worker goroutines
}

// CaseName returns the case's name in the benchfmt form that benchstat
// understands: "variant=mutex/keys=1024/key=ssk/threads=4", parameters in
// the scenario's declared order.
func (s *Scenario) CaseName(c CaseSpec) string {
	var b strings.Builder
	b.WriteString("variant=")
	b.WriteString(c.Variant)
	for _, p := range s.Params {
		b.WriteString("/")
		b.WriteString(p.Name)
		b.WriteString("=")
		b.WriteString(c.Params[p.Name])
	}
	b.WriteString("/threads=")
	b.WriteString(strconv.Itoa(c.Threads))
	return b.String()
}

// BenchName returns the benchmark name for the scenario: s.Benchmark if
// set, else derived from the name, e.g. "BenchmarkCipherCache" for
// "cipher-cache".
func (s *Scenario) BenchName() string {
	if s.Benchmark != "" {
		return s.Benchmark
	}
	var b strings.Builder
	b.WriteString("Benchmark")
	for _, part := range strings.Split(s.Name, "-") {
		if part == "" {
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]))
		b.WriteString(part[1:])
	}
	return b.String()
}

// Selection narrows a scenario's matrix. Empty fields mean the defaults.
type Selection struct {
	Variants []string            // variant names; empty means all
	Params   map[string][]string // values per parameter; a missing parameter takes its defaults
	Threads  []int               // goroutine counts; empty means the scenario's defaults
}

// dedup returns xs without repeats, first occurrences kept in order: the
// same case twice would share one case directory.
func dedup[T comparable](xs []T) []T {
	seen := make(map[T]bool, len(xs))
	out := xs[:0:0]
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// Matrix expands a selection into the cases to run, in a stable order:
// variants in declared order, then parameters, then threads. Unknown
// variants, parameters or values are errors that name the alternatives.
func (s *Scenario) Matrix(sel Selection) ([]CaseSpec, error) {
	variants := sel.Variants
	if len(variants) == 0 {
		for _, v := range s.Variants {
			variants = append(variants, v.Name)
		}
	}
	variants = dedup(variants)
	for _, v := range variants {
		if _, err := s.Variant(v); err != nil {
			return nil, err
		}
	}
	for name := range sel.Params {
		if _, err := s.Param(name); err != nil {
			return nil, err
		}
	}
	threads := dedup(sel.Threads)
	if len(threads) == 0 {
		threads = s.DefaultThreads()
	}
	for _, t := range threads {
		if t < 1 || t > 1<<16 {
			return nil, fmt.Errorf("threads=%d: want a goroutine count between 1 and 65536", t)
		}
	}
	points := []Params{{}}
	for _, p := range s.Params {
		values := dedup(sel.Params[p.Name])
		if len(values) == 0 {
			values = p.Default
		}
		var next []Params
		for _, pt := range points {
			for _, v := range values {
				if err := p.Validate(v); err != nil {
					return nil, err
				}
				q := make(Params, len(pt)+1)
				for k, x := range pt {
					q[k] = x
				}
				q[p.Name] = v
				next = append(next, q)
			}
		}
		points = next
	}
	var out []CaseSpec
	for _, v := range variants {
		for _, pt := range points {
			for _, t := range threads {
				out = append(out, CaseSpec{Variant: v, Params: pt, Threads: t})
			}
		}
	}
	return out, nil
}
