package web

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/profiles/flame"
	"golang.org/x/perf/benchmath"
)

type compareView struct {
	A, B     *compareSide
	AValue   string
	BValue   string
	Groups   []optionGroup
	Rows     []compareRow
	Warnings []string
	Kind     string
	Kinds    []string
	Base     string
	FlameURL string
}

type compareSide struct {
	Run  *store.Run
	Case *store.Case
	URL  string
}

type optionGroup struct {
	Label   string
	Options []caseOption
}

type compareRow struct {
	Label, A, B, Delta, P string
	// Verdict is "faster"/"slower"/"more"/"fewer"/"~"; Class colours it.
	Verdict, Class string
}

// parseCaseRef splits "RUNID/CASESLUG".
func parseCaseRef(ref string) (id, slug string, err error) {
	id, slug, ok := strings.Cut(ref, "/")
	if !ok || id == "" || slug == "" {
		return "", "", fmt.Errorf("%q does not name a case: use RUN/CASE, e.g. 20261130-104500-cipher-cache/variant=mutex,threads=4", ref)
	}
	return id, slug, nil
}

// side loads one side of a comparison, giving the status for failures.
func (s *Server) side(ref string) (*compareSide, int, error) {
	id, slug, err := parseCaseRef(ref)
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	if id == store.Latest {
		latest, err := s.runs.latest()
		if err != nil {
			return nil, http.StatusNotFound, err
		}
		id = latest.ID
	}
	run, status, err := s.run(id)
	if err != nil {
		return nil, status, err
	}
	c, ok := run.Case(slug)
	if !ok {
		return nil, http.StatusNotFound, fmt.Errorf("run %s has no case %q", run.ID, slug)
	}
	return &compareSide{Run: run, Case: c, URL: "/runs/" + run.ID + "/cases/" + store.Slug(c.Name)}, http.StatusOK, nil
}

func (s *Server) comparePage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := compareView{AValue: q.Get("a"), BValue: q.Get("b")}
	status := http.StatusOK
	var errs []string
	if v.AValue != "" || v.BValue != "" {
		for _, p := range []struct {
			ref  string
			side **compareSide
			name string
		}{{v.AValue, &v.A, "a"}, {v.BValue, &v.B, "b"}} {
			if p.ref == "" {
				errs = append(errs, "pick the "+map[string]string{"a": "base", "b": "new"}[p.name]+" case")
				status = max(status, http.StatusBadRequest)
				continue
			}
			side, st, err := s.side(p.ref)
			if err != nil {
				errs = append(errs, err.Error())
				status = max(status, st)
				continue
			}
			*p.side = side
		}
	}
	if status != http.StatusOK {
		s.fail(w, r, status, "Cannot compare: %s.", strings.Join(errs, "; "))
		return
	}
	v.Groups = s.caseGroups(v.A, v.B)
	if v.A != nil && v.B != nil {
		v.Rows, v.Warnings = compareStats(v.A.Case, v.B.Case)
		for _, k := range profileKinds(v.A.Case) {
			if v.B.Case.Profiles[k] != "" {
				v.Kinds = append(v.Kinds, k)
			}
		}
		v.Kind = q.Get("kind")
		if !slices.Contains(v.Kinds, v.Kind) {
			v.Kind = ""
			if len(v.Kinds) > 0 {
				v.Kind = v.Kinds[0]
			}
		}
		v.Base = "/compare?a=" + url.QueryEscape(v.AValue) + "&b=" + url.QueryEscape(v.BValue)
		if v.Kind != "" {
			v.FlameURL = "/compare/flame.json?a=" + url.QueryEscape(v.AValue) + "&b=" + url.QueryEscape(v.BValue) + "&kind=" + url.QueryEscape(v.Kind)
		}
	}
	s.render(w, r, http.StatusOK, "compare", v)
}

// caseGroups offers the cases of the newest runs, and of the runs being
// compared, for the two pickers.
func (s *Server) caseGroups(sides ...*compareSide) []optionGroup {
	runs, _, _ := s.runs.list()
	if len(runs) > 10 {
		runs = runs[:10]
	}
	for _, side := range sides {
		if side != nil && !slices.ContainsFunc(runs, func(r *store.Run) bool { return r.ID == side.Run.ID }) {
			runs = append(runs, side.Run)
		}
	}
	var groups []optionGroup
	for _, run := range runs {
		g := optionGroup{Label: run.ID}
		for _, c := range run.Cases {
			// The closed select shows only the option: name the run too.
			g.Options = append(g.Options, caseOption{Value: run.ID + "/" + store.Slug(c.Name), Label: c.Name + " · " + run.ID})
		}
		groups = append(groups, g)
	}
	return groups
}

// compareStats compares every metric the two cases share, on their
// per-repetition samples, with benchstat's test (Mann–Whitney U, no
// distributional assumption).
//
// A warning that holds for several metrics (too few samples, typically for
// all of them) is given once, naming the metrics it holds for.
func compareStats(a, b *store.Case) (rows []compareRow, warnings []string) {
	var msgs []string
	metricsOf := map[string][]string{}
	for _, unit := range units([]store.Case{*a, *b}) {
		if _, ok := a.Stats[unit]; !ok {
			continue
		}
		if _, ok := b.Stats[unit]; !ok {
			continue
		}
		row := compareRow{Label: unitLabel(unit)}
		sa, sb := samples(a, unit), samples(b, unit)
		if len(sa) == 0 || len(sb) == 0 {
			row.A = fmtValue(a.Stats[unit].Median, unit)
			row.B = fmtValue(b.Stats[unit].Median, unit)
			row.Delta, row.Verdict, row.P = "?", "no samples", "—"
			rows = append(rows, row)
			continue
		}
		thr := benchmath.DefaultThresholds
		smA, smB := benchmath.NewSample(sa, &thr), benchmath.NewSample(sb, &thr)
		sumA := benchmath.AssumeNothing.Summary(smA, 0.95)
		sumB := benchmath.AssumeNothing.Summary(smB, 0.95)
		cmp := benchmath.AssumeNothing.Compare(smA, smB)
		row.A = fmtValue(sumA.Center, unit) + " " + ciText(sumA, sa)
		row.B = fmtValue(sumB.Center, unit) + " " + ciText(sumB, sb)
		row.Delta = cmp.FormatDelta(sumA.Center, sumB.Center)
		row.P = fmt.Sprintf("p=%.3f n=%d+%d", cmp.P, cmp.N1, cmp.N2)
		row.Verdict, row.Class = verdict(unit, cmp, sumA.Center, sumB.Center)
		rows = append(rows, row)
		for _, w := range append(append(sumA.Warnings, sumB.Warnings...), cmp.Warnings...) {
			msg := w.Error()
			if _, ok := metricsOf[msg]; !ok {
				msgs = append(msgs, msg)
			}
			if m := metricsOf[msg]; len(m) == 0 || m[len(m)-1] != row.Label {
				metricsOf[msg] = append(m, row.Label)
			}
		}
	}
	for _, msg := range msgs {
		who := strings.Join(metricsOf[msg], ", ")
		if len(metricsOf[msg]) == len(rows) && len(rows) > 1 {
			who = "every metric"
		}
		warnings = append(warnings, who+": "+msg)
	}
	return rows, warnings
}

func ciText(s benchmath.Summary, xs []float64) string {
	if slices.Min(xs) == slices.Max(xs) {
		return "" // exact: every repetition measured the same
	}
	if math.IsInf(s.Lo, 0) || math.IsInf(s.Hi, 0) {
		return "±∞" // too few samples for an interval
	}
	if s.Center == 0 {
		return ""
	}
	return fmt.Sprintf("±%.0f%%", 100*math.Max(s.Hi-s.Center, s.Center-s.Lo)/math.Abs(s.Center))
}

// higherIsBetter lists units where a bigger number is an improvement.
var higherIsBetter = map[string]bool{"ops/s": true, "hits/op": true}

func verdict(unit string, cmp benchmath.Comparison, a, b float64) (string, string) {
	if cmp.P >= cmp.Alpha || a == b {
		if len(cmp.Warnings) > 0 && a != b {
			// benchmath warns when no difference could have been
			// significant (too few samples): "~" would read as "the
			// same", when the test cannot tell.
			return "~ cannot tell", "same"
		}
		return "~", "same"
	}
	better := b < a
	if higherIsBetter[unit] {
		better = b > a
	}
	word := "lower"
	if b > a {
		word = "higher"
	}
	if better {
		return word + ", better", "better"
	}
	return word + ", worse", "worse"
}

func samples(c *store.Case, unit string) []float64 {
	var out []float64
	for _, r := range c.Reps {
		if v, ok := r.Metrics[unit]; ok && !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

func (s *Server) compareFlameJSON(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a, st, err := s.side(q.Get("a"))
	if err != nil {
		s.failJSON(w, st, err)
		return
	}
	b, st, err := s.side(q.Get("b"))
	if err != nil {
		s.failJSON(w, st, err)
		return
	}
	kind := q.Get("kind")
	if a.Case.Profiles[kind] == "" || b.Case.Profiles[kind] == "" {
		s.failJSON(w, http.StatusNotFound, fmt.Errorf("both cases need a %q profile", kind))
		return
	}
	pa, ka, st, err := s.caseProfile(a.Run, a.Case, kind)
	if err != nil {
		s.failJSON(w, st, err)
		return
	}
	pb, kb, st, err := s.caseProfile(b.Run, b.Case, kind)
	if err != nil {
		s.failJSON(w, st, err)
		return
	}
	key := "diff\x00" + ka + "\x00" + kb + "\x00" + a.Case.Name + "\x00" + b.Case.Name
	s.writeFlameJSON(w, r, key, func() (*flame.Tree, error) {
		return flame.Diff(pa, pb, flame.Options{Title: kind + " · " + b.Case.Name + " against " + a.Case.Name, Rules: rulesFor(b.Run.Scenario)})
	})
}
