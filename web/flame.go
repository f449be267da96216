package web

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/google/pprof/profile"
)

// This file is where the web UI meets the flame graph package (issue 3).
// Until profiles/flame lands, flame JSON answers 501 and the case page
// falls back to the stored SVG.

func (s *Server) writeFlameJSON(w http.ResponseWriter, r *http.Request, p *profile.Profile) {
	s.failJSON(w, http.StatusNotImplemented, errors.New("the interactive flame graph is not built into this perflab yet"))
}

func (s *Server) writeDiffJSON(w http.ResponseWriter, r *http.Request, a, b *profile.Profile) {
	s.failJSON(w, http.StatusNotImplemented, errors.New("the differential flame graph is not built into this perflab yet"))
}

// classifier returns the function that puts a stack (leaf first) in a
// category, or nil while classification is unavailable.
func classifier() func([]string) string { return nil }

// profileBudget splits a profile's total by category.
func profileBudget(p *profile.Profile, idx int) []budgetPart {
	classify := classifier()
	if classify == nil {
		return nil
	}
	b := map[string]float64{}
	for _, s := range p.Sample {
		b[classify(stackNames(s))] += float64(s.Value[idx])
	}
	return budgetParts(b)
}

// stackNames lists a sample's function names, leaf first, inlined frames
// included.
func stackNames(s *profile.Sample) []string {
	var names []string
	for _, loc := range s.Location {
		for _, l := range loc.Line {
			if l.Function != nil {
				names = append(names, l.Function.Name)
			} else {
				names = append(names, "?")
			}
		}
		if len(loc.Line) == 0 {
			names = append(names, fmt.Sprintf("0x%x", loc.Address))
		}
	}
	return names
}

// writeFolded writes the profile as folded stacks (root first, frames
// joined by ';', then a space and the value), the format flamegraph.pl and
// speedscope read.
func writeFolded(w io.Writer, p *profile.Profile, idx int) error {
	counts := map[string]int64{}
	for _, s := range p.Sample {
		names := stackNames(s)
		for i, j := 0, len(names)-1; i < j; i, j = i+1, j-1 {
			names[i], names[j] = names[j], names[i]
		}
		for i, n := range names {
			// ';' separates frames and a newline ends a record: neither
			// may appear inside a name.
			names[i] = strings.NewReplacer(";", ":", "\n", " ", "\r", " ").Replace(n)
		}
		counts[strings.Join(names, ";")] += s.Value[idx]
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	bw := bufio.NewWriter(w)
	for _, k := range keys {
		if counts[k] != 0 {
			fmt.Fprintf(bw, "%s %d\n", k, counts[k])
		}
	}
	return bw.Flush()
}
