package web

import (
	"fmt"
	"net/http"
	"sort"

	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/lab"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/units"
)

// runCompareView is a comparison of a whole run: each variant against a
// base variant (?base=VARIANT), or every case against the same case of
// another run (?with=RUN). It is internal/lab's comparison, the one
// `perflab compare RUN --base VARIANT` and `perflab compare RUN RUN`
// print, laid out as a page.
type runCompareView struct {
	Run *model.Run
	// Base is the base variant, With the other run ("" for the other).
	Base, With string
	// A and B name the sides as the comparison does.
	A, B string
	// Variants and Runs are the forms' choices.
	Variants []string
	Runs     []caseOption
	Blocks   []report.CompareBlock
	OnlyA    []string
	OnlyB    []string
	Warnings []report.Warning
	// Reason says why nothing could be compared; Incomplete names an
	// incomplete run the comparison rests on.
	Reason, Incomplete string
}

// compareMetrics are the metrics the page compares: the CLI's defaults.
var compareMetrics = units.Compared()

func (s *Server) runComparePage(w http.ResponseWriter, r *http.Request) {
	run, ok := s.loadRun(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	v := runCompareView{Run: run, Base: q.Get("base"), With: q.Get("with")}
	seen := map[string]bool{}
	for _, c := range run.Cases {
		if !seen[c.Variant] {
			seen[c.Variant] = true
			v.Variants = append(v.Variants, c.Variant)
		}
	}
	sort.Strings(v.Variants)
	if runs, _, err := s.runs.list(); err == nil {
		for _, o := range runs {
			if o.ID != run.ID && o.Scenario == run.Scenario {
				v.Runs = append(v.Runs, caseOption{Value: o.ID, Label: o.ID})
			}
		}
	}
	if v.Base == "" && v.With == "" {
		if len(v.Variants) > 0 {
			v.Base = v.Variants[0]
		}
	}
	var c *report.Comparison
	var pr compare.Pairing
	var err error
	switch {
	case v.Base != "" && v.With != "":
		s.fail(w, r, http.StatusBadRequest, "Compare each variant against a base (base=) or the run with another (with=), not both.")
		return
	case v.Base != "":
		c, pr, err = lab.CompareVariants(run, v.Base, "")
		if err != nil {
			s.fail(w, r, http.StatusNotFound, "%v", err)
			return
		}
	case v.With != "":
		other, status, err := s.run(v.With)
		if err != nil {
			s.fail(w, r, status, "%v", err)
			return
		}
		c, pr, err = lab.CompareRefs(&store.Ref{Store: s.store, Run: other}, &store.Ref{Store: s.store, Run: run}, [2]string{other.ID, run.ID})
		if err != nil {
			s.fail(w, r, http.StatusBadRequest, "%v", err)
			return
		}
	default:
		s.fail(w, r, http.StatusNotFound, "Run %s has no cases to compare.", run.ID)
		return
	}
	var us []string
	for _, m := range compareMetrics {
		us = append(us, units.Parse(m))
	}
	lab.Measure(c, pr, us, 0)
	v.A, v.B = c.A, c.B
	v.Blocks, v.OnlyA, v.OnlyB, v.Warnings, v.Incomplete = c.Blocks(), c.OnlyA, c.OnlyB, c.Warnings, c.Incomplete
	if c.Unusable {
		v.Reason = c.Reason
	}
	s.render(w, r, http.StatusOK, "runcompare", v)
}

// String names a comparison's sides for the page's title.
func (v runCompareView) String() string {
	if v.Base != "" {
		return fmt.Sprintf("each variant against %s", v.Base)
	}
	return fmt.Sprintf("%s against %s", v.B, v.A)
}
