package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/profiles/flame"
)

type caseView struct {
	Run  *model.Run
	Case *model.Case
	// Report is the case as the report lays it out (perflab show's
	// case view): its metrics, budget and the budget's trust.
	Report *report.Case
	// Warnings are the report's (those the budget's trust mark says
	// left out) and the run's rules' own.
	Warnings   []model.Warning
	Slug       string
	Base       string // URL of the case page, without query
	Params     string
	Kind       string
	Kinds      []string
	Stats      []statRow
	Budget     []budgetPart
	Legend     []legendItem
	Profile    *profileView
	ProfileErr string
	FlameSVG   string
	Downloads  []link
	CompareTo  []caseOption
}

type statRow struct {
	Label string
	Cell  report.Cell
}

type link struct {
	Label, URL string
}

// profileView is what the case and upload pages show of one profile.
type profileView struct {
	SampleType string
	Total      string
	Samples    int
	TopSelf    []fnRow
	TopTotal   []fnRow
	FlameURL   string // the interactive flame graph's JSON
	// Types switches between the profile's sample types (count or
	// delay, alloc_space or inuse_space…), when it has several.
	Types []typeLink
	// FlameData is that JSON itself when it is small enough to put in the
	// page (inlineFlame).
	FlameData json.RawMessage
}

// loadCase resolves {id} and {case}; it writes the error page itself.
func (s *Server) loadCase(w http.ResponseWriter, r *http.Request) (*model.Run, *model.Case, bool) {
	run, ok := s.loadRun(w, r)
	if !ok {
		return nil, nil, false
	}
	name := r.PathValue("case")
	c, ok := run.Case(name)
	if ok {
		return run, c, true
	}
	// A name typed as the CLI takes it (a bench case by go test's name,
	// "BenchmarkMutex-2" or "Mutex"): sent to the case's own address, so
	// that every page and cache knows a case by one name.
	c, err := run.FindCase(name)
	if err != nil {
		s.fail(w, r, http.StatusNotFound, "%s.", upperFirst(err.Error()))
		return nil, nil, false
	}
	// The route matched /runs/{id}/cases/{case}[/rest]: the escaped
	// path's fifth segment is the case.
	parts := strings.SplitN(r.URL.EscapedPath(), "/", 6)
	// A slug and a run id need no escaping: their bytes are URL-safe.
	to := "/runs/" + run.ID + "/cases/" + model.Slug(c.Name)
	if len(parts) == 6 {
		to += "/" + parts[5]
	}
	if r.URL.RawQuery != "" {
		to += "?" + r.URL.RawQuery
	}
	http.Redirect(w, r, to, http.StatusFound)
	return nil, nil, false
}

// caseBySlashedName answers a case page asked for by a name with its '/'
// typed as is, as perflab show takes it (BenchmarkHash/size=64/loop-2):
// the routes above match one segment, so without this such a name was a
// bare "no page" 404. It redirects to the case's own address, or says
// which cases the run has.
func (s *Server) caseBySlashedName(w http.ResponseWriter, r *http.Request) {
	run, ok := s.loadRun(w, r)
	if !ok {
		return
	}
	c, err := run.FindCase(r.PathValue("rest"))
	if err != nil {
		s.fail(w, r, http.StatusNotFound, "%s.", upperFirst(err.Error()))
		return
	}
	to := "/runs/" + run.ID + "/cases/" + model.Slug(c.Name)
	if r.URL.RawQuery != "" {
		to += "?" + r.URL.RawQuery
	}
	http.Redirect(w, r, to, http.StatusFound)
}

// caseKind picks the profile kind a request asks for (?kind=), defaulting
// to the first the case has.
func caseKind(r *http.Request, c *model.Case) (string, error) {
	kinds := profileKinds(c)
	k := r.URL.Query().Get("kind")
	if k == "" {
		if len(kinds) == 0 {
			return "", nil
		}
		return kinds[0], nil
	}
	if !slices.Contains(kinds, k) {
		return "", fmt.Errorf("case %s has no %q profile (it has %s)", c.Name, k, strings.Join(kinds, ", "))
	}
	return k, nil
}

// caseTree returns what is built from the kind profile of case c in run
// for sample type typ ("" for the default), from the cache or built under
// the server's memory budget, and the function to call when done with it.
func (s *Server) caseTree(ctx context.Context, run *model.Run, c *model.Case, kind, typ string) (*built, func(), int, error) {
	f, size, key, err := s.openProfile(run.ID, c.Profiles[kind])
	if err != nil {
		return nil, nil, profileStatus(err), s.profileErr(c, kind, run, err)
	}
	defer f.Close()
	// What is built depends on the run's rules and the title too.
	rules, rulesDone, err := s.rulesOfRun(ctx, run)
	if err != nil {
		return nil, nil, profileStatus(err), s.profileErr(c, kind, run, err)
	}
	defer rulesDone()
	key = "tree\x00" + key + "\x00" + rules.key + "\x00" + kind + "\x00" + typ + "\x00" + c.Name
	b, done, err := s.trees.get(ctx, key, func(ctx context.Context) (*built, *lease, error) {
		src, l, err := s.parseFile(ctx, f, size)
		if err != nil {
			return nil, nil, err
		}
		b, err := buildTree(src, flame.Options{Title: kind + " · " + c.Name, SampleType: typ, Rules: rules.rules}, l)
		if err != nil {
			l.release()
			return nil, nil, err
		}
		return b, l, nil
	})
	if err != nil {
		var nt errNoType
		if errors.As(err, &nt) {
			return nil, nil, http.StatusNotFound, fmt.Errorf("the %s profile of %s: %w", kind, c.Name, err)
		}
		return nil, nil, profileStatus(err), s.profileErr(c, kind, run, err)
	}
	return b, done, http.StatusOK, nil
}

// profileStatus is the status of a failure to read a stored profile.
func profileStatus(err error) int {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return http.StatusNotFound
	case errors.Is(err, store.ErrRefused):
		return http.StatusForbidden
	case errors.Is(err, errBusy):
		return http.StatusServiceUnavailable
	}
	return http.StatusUnprocessableEntity
}

func (s *Server) profileErr(c *model.Case, kind string, run *model.Run, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("the %s profile of %s is missing from run %s", kind, c.Name, run.ID)
	case errors.Is(err, store.ErrRefused):
		return err
	}
	return fmt.Errorf("the %s profile of %s: %v", kind, c.Name, err)
}

func (s *Server) casePage(w http.ResponseWriter, r *http.Request) {
	run, c, ok := s.loadCase(w, r)
	if !ok {
		return
	}
	kind, err := caseKind(r, c)
	if err != nil {
		s.fail(w, r, http.StatusNotFound, "%v", err)
		return
	}
	typ := r.URL.Query().Get("type")
	status := http.StatusOK
	slug := model.Slug(c.Name)
	base := "/runs/" + run.ID + "/cases/" + slug
	rc := report.BuildCase(c)
	v := caseView{Run: run, Case: c, Report: rc, Warnings: rc.Warnings, Slug: slug, Base: base, Params: paramString(run, c), Kind: kind, Kinds: profileKinds(c), Budget: colored(rc.Budget)}
	for _, m := range rc.Metrics {
		v.Stats = append(v.Stats, statRow{Label: m.Label, Cell: m.Cell})
	}
	rules, rulesDone, err := s.rulesOfRun(r.Context(), run)
	if err != nil {
		s.fail(w, r, http.StatusServiceUnavailable, "%v.", err)
		return
	}
	rulesDone()
	if warn := rules.warning; warn != "" {
		// Clipped: the append must not write into the report's slice.
		v.Warnings = append(slices.Clip(v.Warnings), model.Warn(model.WarnOther, 0, warn))
	}
	for _, p := range v.Budget {
		v.Legend = append(v.Legend, legendItem{Label: p.Category, Color: p.Color})
	}
	if kind != "" {
		q := "?kind=" + url.QueryEscape(kind)
		if typ != "" {
			q += "&type=" + url.QueryEscape(typ)
		}
		b, done, st, err := s.caseTree(r.Context(), run, c, kind, typ)
		var nt errNoType
		switch {
		case errors.As(err, &nt):
			s.fail(w, r, http.StatusNotFound, "%v.", err)
			return
		case err != nil:
			// The page still shows the case, and says why its profile
			// is not drawn, with the failure's status (issue 26: a
			// broken profile's page answered 200).
			v.ProfileErr = err.Error()
			status = st
		default:
			pv := *b.view
			pv.FlameURL = base + "/flame.json" + q
			pv.Types = typeLinksOf(b.types, b.idx, base+"?kind="+url.QueryEscape(kind)+"&")
			if b.jsonErr == nil {
				pv.FlameData = inlineFlame(b.json)
			}
			v.Profile = &pv
			done()
		}
		v.FlameSVG = base + "/flame.svg" + q
		// The file's own link only for a path the store would serve: a
		// tampered run.json's "../../etc/passwd" gets none, not a link
		// to a refusal.
		if rel := c.Profiles[kind]; s.servable(run.ID, rel) {
			v.Downloads = append(v.Downloads, link{Label: kind + ".pb.gz (pprof)", URL: "/runs/" + run.ID + "/files/" + escapePath(rel)})
		}
		v.Downloads = append(v.Downloads,
			link{Label: kind + ".folded (flamegraph.pl, speedscope)", URL: base + "/folded" + q},
			link{Label: kind + ".svg (flame graph)", URL: v.FlameSVG + "&download=1"})
	} else if c.Flame != "" {
		v.FlameSVG = "/runs/" + run.ID + "/files/" + c.Flame
	}
	v.CompareTo = s.compareCandidates(run, c)
	s.render(w, r, status, "case", v)
}

// servable says runFile would serve run id's file rel: the store's checks
// (no dot segments, no symbolic links, a regular file) pass.
func (s *Server) servable(id, rel string) bool {
	_, err := s.store.Path(id, rel)
	return err == nil
}

// escapePath escapes each segment of a run's relative file path for a URL.
func escapePath(rel string) string {
	segs := strings.Split(rel, "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	return strings.Join(segs, "/")
}

// compareCandidates lists what a case can be compared with: the other
// cases of its run, then the same case in other runs of the scenario.
func (s *Server) compareCandidates(run *model.Run, c *model.Case) []caseOption {
	var out []caseOption
	for _, o := range run.Cases {
		if len(out) == maxPickerCases {
			break // the others by URL: /compare?a=…&b=RUN/CASE
		}
		if o.Name != c.Name {
			out = append(out, caseOption{Value: run.ID + "/" + model.Slug(o.Name), Label: o.Name})
		}
	}
	runs, _, _ := s.runs.list()
	n := 0
	for _, o := range runs {
		if o.ID == run.ID || o.Scenario != run.Scenario {
			continue
		}
		if _, ok := o.Case(c.Name); ok {
			out = append(out, caseOption{Value: o.ID + "/" + model.Slug(c.Name), Label: "run " + o.ID})
			if n++; n == 20 {
				break
			}
		}
	}
	return out
}

// caseProfileRequest is one profile of one case, as a request names it,
// with what is built from it.
type caseProfileRequest struct {
	run  *model.Run
	c    *model.Case
	kind string
	b    *built
	done func() // to call when done with b
}

// loadCaseProfile resolves {id}, {case}, ?kind= and ?type= and gets what is
// built from the profile. On a failure it answers itself, with JSON if
// asJSON, and returns false.
func (s *Server) loadCaseProfile(w http.ResponseWriter, r *http.Request, asJSON bool) (caseProfileRequest, bool) {
	fail := func(status int, err error) {
		if asJSON {
			s.failJSON(w, status, err)
		} else {
			s.fail(w, r, status, "%v", err)
		}
	}
	var q caseProfileRequest
	run, c, ok := s.loadCase(w, r)
	if !ok {
		return q, false
	}
	kind, err := caseKind(r, c)
	if err == nil && kind == "" {
		err = fmt.Errorf("case %s has no profiles", c.Name)
	}
	if err != nil {
		fail(http.StatusNotFound, err)
		return q, false
	}
	b, done, status, err := s.caseTree(r.Context(), run, c, kind, r.URL.Query().Get("type"))
	if err != nil {
		fail(status, err)
		return q, false
	}
	return caseProfileRequest{run: run, c: c, kind: kind, b: b, done: done}, true
}

// filename names a download of this profile: RUN-CASE-KIND.ext.
func (q caseProfileRequest) filename(ext string) string {
	return q.run.ID + "-" + model.Slug(q.c.Name) + "-" + q.kind + ext
}

func (s *Server) caseFlameJSON(w http.ResponseWriter, r *http.Request) {
	q, ok := s.loadCaseProfile(w, r, true)
	if !ok {
		return
	}
	defer q.done()
	if q.b.jsonErr != nil {
		s.failJSON(w, http.StatusUnprocessableEntity, q.b.jsonErr)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(q.b.json)
}

func (s *Server) caseFlameSVG(w http.ResponseWriter, r *http.Request) {
	q, ok := s.loadCaseProfile(w, r, false)
	if !ok {
		return
	}
	defer q.done()
	s.writeFlameSVG(w, r, q.b.tree, q.filename(".svg"))
}

func (s *Server) caseFolded(w http.ResponseWriter, r *http.Request) {
	q, ok := s.loadCaseProfile(w, r, false)
	if !ok {
		return
	}
	defer q.done()
	h := http.Header{}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": q.filename(".folded")}))
	s.stream(w, r, h, "folded stacks", q.b.tree.WriteFolded)
}

func (s *Server) failJSON(w http.ResponseWriter, status int, err error) {
	body, _ := json.Marshal(map[string]string{"error": err.Error()})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}
