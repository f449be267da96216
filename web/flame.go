package web

import (
	"errors"
	"io"
	"net/http"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/profiles"
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

// profileBudget splits a profile's total by category.
func profileBudget(p *profile.Profile, idx int, rules *profiles.Rules) []budgetPart {
	by, total := profiles.Breakdown(p, idx, rules)
	if total == 0 {
		return nil
	}
	b := map[string]float64{}
	for c, v := range by {
		if v != 0 {
			b[string(c)] = float64(v)
		}
	}
	return budgetParts(b)
}

// writeFolded writes the profile as folded stacks, the format
// flamegraph.pl and speedscope read.
func writeFolded(w io.Writer, p *profile.Profile, idx int) error {
	return profiles.WriteFolded(w, p, idx)
}
