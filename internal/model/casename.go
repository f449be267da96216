package model

import (
	"fmt"
	"strings"

	"github.com/perflab/perflab/internal/suggest"
)

// maxListedCases is how many of a run's cases an error about a case name
// lists.
const maxListedCases = 12

// FindCase is Case for a name a person typed: a case's full name or
// slug, and, in a perflab bench run, go test's name of its benchmark as
// go test prints it ("BenchmarkMutex-2"), without "Benchmark" ("Mutex-2",
// benchstat's spelling) or without the -cpu suffix where one -cpu value
// has it ("Mutex"). A name that matches none is an ErrNoCase error
// that says the closest names and lists the run's cases.
func (r *Run) FindCase(name string) (*Case, error) {
	if c, ok := r.Case(name); ok {
		return c, nil
	}
	// go test's names as it prints them first: at -cpu 1,2 "X" is the
	// -cpu 1 case's name, and only without a case of that name is it the
	// -cpu 2 case's "X-2" less its suffix.
	var matches []*Case
	for _, exact := range []bool{true, false} {
		for i := range r.Cases {
			c := &r.Cases[i]
			if c.Bench == "" {
				continue
			}
			names := benchNames(c)
			if exact {
				names = names[:2]
			}
			for _, n := range names {
				if n == name {
					matches = append(matches, c)
					break
				}
			}
		}
		if len(matches) > 0 {
			break
		}
	}
	var names []string
	for _, c := range matches {
		names = append(names, c.Bench)
	}
	switch {
	case len(matches) == 1:
		return matches[0], nil
	case len(matches) > 1:
		return nil, fmt.Errorf("run %s has several cases %q may be (%w of that name alone): %s; name one", r.ID, name, ErrNoCase, suggest.Or(names))
	}
	var all []string
	for i := range r.Cases {
		c := &r.Cases[i]
		all = append(all, c.Name)
		if c.Bench != "" {
			all = append(all, benchNames(c)...)
		}
	}
	msg := fmt.Sprintf("run %s has %v %q", r.ID, ErrNoCase, name)
	if dym := suggest.DidYouMean(name, all); dym != "" {
		msg += "; " + dym
	}
	var listed []string
	for i := range r.Cases {
		if i == maxListedCases {
			listed = append(listed, fmt.Sprintf("and %d more", len(r.Cases)-maxListedCases))
			break
		}
		n := r.Cases[i].Name
		if b := r.Cases[i].Bench; b != "" {
			n = b
		}
		listed = append(listed, n)
	}
	if len(listed) > 0 {
		msg += " (its cases: " + strings.Join(listed, ", ") + ")"
	}
	return nil, &caseError{msg: msg}
}

// caseError is FindCase's error: ErrNoCase, with what it says.
type caseError struct{ msg string }

func (e *caseError) Error() string { return e.msg }
func (e *caseError) Unwrap() error { return ErrNoCase }

// benchNames are the names a bench case answers to besides its own:
// go test's (BenchmarkX/a=1-2), without "Benchmark", and both without
// the -cpu suffix.
func benchNames(c *Case) []string {
	full := c.Bench
	short := strings.TrimPrefix(full, "Benchmark")
	out := []string{full, short}
	if suffix := fmt.Sprintf("-%d", c.Threads); c.Threads > 0 && strings.HasSuffix(full, suffix) {
		out = append(out, strings.TrimSuffix(full, suffix), strings.TrimSuffix(short, suffix))
	}
	return out
}
