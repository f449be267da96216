package web

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/perflab/perflab/internal/lab"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/profiles/flame"
)

type compareView struct {
	A, B   *compareSide
	AValue string
	BValue string
	Groups []optionGroup
	// Rows are the report's comparison of the two cases, a row per metric
	// (report.Comparison.MetricRows): what `perflab compare RUN/CASE
	// RUN/CASE` says, laid out here.
	Rows []report.CompareRow
	// Unmeasured says, one sentence a side, that a case picked has no
	// results (skipped, failed, n/a): then there is no table to show.
	Unmeasured []string
	// Reason says why the two cases could not be compared (no metric in
	// common, a case against itself): the report's words.
	Reason string
	// Capped says which runs offer only some of their cases in the
	// pickers (maxPickerCases), and how to name the others.
	Capped   []string
	Warnings []report.Warning
	Kind     string
	Kinds    []string
	Base     string
	FlameURL string
	// Layout is the differential graph's shape, "new" or "base"; Layouts
	// link to both.
	Layout  string
	Layouts []layoutLink
}

type layoutLink struct {
	Label, URL string
	Current    bool
}

type compareSide struct {
	Run  *model.Run
	Case *model.Case
	URL  string
}

type optionGroup struct {
	Label   string
	Options []caseOption
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
	// Any name the CLI takes: the slug, the full name, a bench case's go
	// test name (BenchmarkMutex-2); an unknown one is told the closest.
	c, err := run.FindCase(slug)
	if err != nil {
		return nil, http.StatusNotFound, err
	}
	return &compareSide{Run: run, Case: c, URL: "/runs/" + run.ID + "/cases/" + model.Slug(c.Name)}, http.StatusOK, nil
}

func (s *Server) comparePage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := compareView{AValue: q.Get("a"), BValue: q.Get("b")}
	// Two runs, as perflab compare A B takes them: that is the run's
	// compare page, not a 400 that says each "does not name a case". A
	// is the base: the page of the new run, B, against it (with=A), so
	// the verdicts read as the CLI's do (the first redirect went to A's
	// page with B, every verdict reversed).
	if a, b := v.AValue, v.BValue; store.ValidID(a) && store.ValidID(b) {
		http.Redirect(w, r, "/runs/"+url.PathEscape(b)+"/compare?with="+url.QueryEscape(a), http.StatusFound)
		return
	}
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
	v.Groups, v.Capped = s.caseGroups(v.A, v.B)
	if v.AValue == "" && v.BValue == "" {
		runs, _, _ := s.runs.list()
		v.AValue, v.BValue = defaultPair(runs)
	}
	if v.A != nil && v.B != nil {
		for _, p := range []struct {
			name string
			side *compareSide
		}{{"base", v.A}, {"new", v.B}} {
			if note := statusNote(p.side.Case); note != "" {
				v.Unmeasured = append(v.Unmeasured, fmt.Sprintf("Nothing to compare: the %s case, %s in run %s, has no results — %s.", p.name, p.side.Case.Name, p.side.Run.ID, note))
			}
		}
		if len(v.Unmeasured) == 0 {
			v.Rows, v.Warnings, v.Reason = s.compareCases(v.A, v.B)
		}
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
		layout, err := flame.ParseLayout(q.Get("layout"))
		if err != nil {
			s.fail(w, r, http.StatusBadRequest, "Cannot compare: %v.", err)
			return
		}
		v.Layout = layout.String()
		v.Base = "/compare?a=" + url.QueryEscape(v.AValue) + "&b=" + url.QueryEscape(v.BValue)
		if layout != flame.LayoutNew {
			v.Base += "&layout=" + v.Layout
		}
		if v.Kind != "" {
			v.FlameURL = "/compare/flame.json?a=" + url.QueryEscape(v.AValue) + "&b=" + url.QueryEscape(v.BValue) + "&kind=" + url.QueryEscape(v.Kind) + "&layout=" + v.Layout
			for _, l := range []flame.Layout{flame.LayoutNew, flame.LayoutBase} {
				u := "/compare?a=" + url.QueryEscape(v.AValue) + "&b=" + url.QueryEscape(v.BValue) + "&kind=" + url.QueryEscape(v.Kind)
				if l != flame.LayoutNew {
					u += "&layout=" + l.String()
				}
				v.Layouts = append(v.Layouts, layoutLink{Label: l.String() + " profile's shape", URL: u, Current: l == layout})
			}
		}
	}
	s.render(w, r, http.StatusOK, "compare", v)
}

// defaultPair is what the compare page offers before anything is picked,
// as "RUN/CASE" values. Only measured cases of complete runs qualify while
// there are any: the newest run may be an interrupted one whose cases have
// nothing to compare. Then, in this order:
//
//   - the same case in the newest complete run and the complete run of the
//     same scenario before it: before and after a change, what perflab is
//     for (`perflab compare OLD NEW`);
//   - with a single such run, its first two variants at the same
//     parameters and goroutine count (`compare RUN --base VARIANT`): a
//     comparison of implementations, not of one variant against itself
//     at another goroutine count;
//   - any two measured cases.
//
// It returns "", "" when there are not two measured cases.
func defaultPair(runs []*model.Run) (a, b string) {
	var pool []*model.Run
	for _, complete := range []bool{true, false} {
		for _, r := range runs {
			if r.Complete == complete && slices.ContainsFunc(r.Cases, measured) {
				pool = append(pool, r)
			}
		}
		if len(pool) > 0 {
			break
		}
	}
	if len(pool) == 0 {
		return "", ""
	}
	ref := func(r *model.Run, c *model.Case) string { return r.ID + "/" + model.Slug(c.Name) }
	newest := pool[0]
	for _, older := range pool[1:] {
		if older.Scenario != newest.Scenario {
			continue
		}
		for i := range newest.Cases {
			c := &newest.Cases[i]
			if o, ok := older.Case(c.Name); ok && measured(*c) && measured(*o) {
				return ref(older, o), ref(newest, c)
			}
		}
	}
	if x, y := variantPair(newest); x != nil {
		return ref(newest, x), ref(newest, y)
	}
	var all []string
	for _, r := range pool {
		for i := range r.Cases {
			if measured(r.Cases[i]) {
				all = append(all, ref(r, &r.Cases[i]))
			}
		}
	}
	if len(all) < 2 {
		return "", ""
	}
	return all[0], all[1]
}

// variantPair returns the run's first two measured cases of different
// variants at the same parameters and goroutine count, in the run's
// order, or nil, nil. It is linear in the cases (a run of 200,000 cases of
// one variant took the quadratic search minutes): the first such pair's
// base is the first case of its group, so one pass finds, per group, its
// first case and that case's first partner.
func variantPair(run *model.Run) (a, b *model.Case) {
	type pair struct{ x, y int }
	groups := map[string]*pair{}
	best := -1
	for j := range run.Cases {
		y := &run.Cases[j]
		if !measured(*y) {
			continue
		}
		k := report.GroupKey(run, y)
		p, ok := groups[k]
		switch {
		case !ok:
			groups[k] = &pair{x: j, y: -1}
		case p.y < 0 && run.Cases[p.x].Variant != y.Variant:
			p.y = j
			if best < 0 || p.x < best {
				best = p.x // the base of the first pair so far
			}
		}
	}
	if best < 0 {
		return nil, nil
	}
	p := groups[report.GroupKey(run, &run.Cases[best])]
	return &run.Cases[p.x], &run.Cases[p.y]
}

// measured reports whether a case has results to compare.
func measured(c model.Case) bool { return c.Status == model.StatusOK }

// caseGroups offers the cases of the newest runs, and of the runs being
// compared, for the two pickers: at most maxPickerCases of each run (the
// ones picked always among them), with a sentence per run cut short.
func (s *Server) caseGroups(sides ...*compareSide) (groups []optionGroup, capped []string) {
	runs, _, _ := s.runs.list()
	if len(runs) > 10 {
		runs = runs[:10]
	}
	for _, side := range sides {
		if side != nil && !slices.ContainsFunc(runs, func(r *model.Run) bool { return r.ID == side.Run.ID }) {
			runs = append(runs, side.Run)
		}
	}
	for _, run := range runs {
		g := optionGroup{Label: run.ID}
		if !run.Complete {
			g.Label += " (incomplete)"
		}
		for i, c := range run.Cases {
			picked := slices.ContainsFunc(sides, func(side *compareSide) bool { return side != nil && side.Run.ID == run.ID && side.Case.Name == c.Name })
			if i >= maxPickerCases && !picked {
				continue
			}
			// The closed select shows only the option: name the run too,
			// and say when a case has nothing to compare.
			label := c.Name + " · " + run.ID
			if !measured(c) {
				label += " · " + string(c.Status)
			}
			g.Options = append(g.Options, caseOption{Value: run.ID + "/" + model.Slug(c.Name), Label: label})
		}
		if n := len(run.Cases); n > maxPickerCases {
			g.Label += fmt.Sprintf(" (first %d of %d cases)", maxPickerCases, n)
			capped = append(capped, fmt.Sprintf("Run %s has %d cases; the pickers offer its first %d. Name another in the address: /compare?a=%s/CASE&b=…", run.ID, n, maxPickerCases, run.ID))
		}
		groups = append(groups, g)
	}
	return groups, capped
}

// maxPickerCases bounds the cases a picker offers per run: a run of
// 200,000 cases made /compare a 60 MB page (issue 26).
const maxPickerCases = 200

// compareCases compares every metric the two cases share as `perflab
// compare RUN/CASE RUN/CASE` does (internal/lab builds it, the report lays
// it out a row per metric): paired by round when both cases are of one
// run, Mann–Whitney U across runs; the change with its interval; better or
// worse only beyond the 5% threshold.
// reason says why there is nothing to compare, in the report's words.
func (s *Server) compareCases(a, b *compareSide) (rows []report.CompareRow, warnings []report.Warning, reason string) {
	c, pr, err := lab.CompareRefs(&store.Ref{Store: s.store, Run: a.Run, Case: a.Case}, &store.Ref{Store: s.store, Run: b.Run, Case: b.Case}, [2]string{})
	if err != nil {
		return nil, nil, err.Error()
	}
	shared := report.SharedUnits(a.Case, b.Case)
	if len(shared) == 0 {
		return nil, nil, "the two cases measured no metric in common"
	}
	lab.Measure(c, pr, shared, 0)
	rows, warnings = c.MetricRows()
	if c.Unusable {
		reason = c.Reason
	}
	return rows, warnings, reason
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
	layout, err := flame.ParseLayout(q.Get("layout"))
	if err != nil {
		s.failJSON(w, http.StatusBadRequest, err)
		return
	}
	if a.Case.Profiles[kind] == "" || b.Case.Profiles[kind] == "" {
		s.failJSON(w, http.StatusNotFound, fmt.Errorf("both cases need a %q profile", kind))
		return
	}
	fa, sa, ka, err := s.openProfile(a.Run.ID, a.Case.Profiles[kind])
	if err != nil {
		s.failJSON(w, profileStatus(err), s.profileErr(a.Case, kind, a.Run, err))
		return
	}
	defer fa.Close()
	fb, sb, kb, err := s.openProfile(b.Run.ID, b.Case.Profiles[kind])
	if err != nil {
		s.failJSON(w, profileStatus(err), s.profileErr(b.Case, kind, b.Run, err))
		return
	}
	defer fb.Close()
	rules, rulesDone, err := s.rulesOfRun(r.Context(), b.Run)
	if err != nil {
		s.failJSON(w, profileStatus(err), err)
		return
	}
	defer rulesDone()
	key := "diff\x00" + ka + "\x00" + kb + "\x00" + a.Case.Name + "\x00" + b.Case.Name + "\x00" + layout.String() + "\x00" + rules.key
	// The two profiles are decoded one after the other, each lease shrunk
	// to its Source, and the diff keeps only its JSON.
	d, done, err := s.trees.get(r.Context(), key, func(ctx context.Context) (*built, *lease, error) {
		srcA, la, err := s.parseFile(ctx, fa, sa)
		if err != nil {
			return nil, nil, fmt.Errorf("the %s profile of %s: %w", kind, a.Case.Name, err)
		}
		defer la.release()
		la.shrink(srcA.Bytes())
		srcB, lb, err := s.parseFile(ctx, fb, sb)
		if err != nil {
			return nil, nil, fmt.Errorf("the %s profile of %s: %w", kind, b.Case.Name, err)
		}
		t, err := flame.DiffSource(srcA, srcB, flame.Options{Title: kind + " · " + b.Case.Name + " against " + a.Case.Name, Rules: rules.rules, Layout: layout})
		if err != nil {
			lb.release()
			return nil, nil, err
		}
		var buf bytes.Buffer
		d := &built{jsonErr: t.WriteJSON(&buf), json: safePage(buf.Bytes())}
		lb.shrink(int64(cap(d.json)))
		return d, lb, nil
	})
	if err != nil {
		s.failJSON(w, profileStatus(err), err)
		return
	}
	defer done()
	if d.jsonErr != nil {
		s.failJSON(w, http.StatusUnprocessableEntity, d.jsonErr)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(d.json)
}
