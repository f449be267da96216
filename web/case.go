package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"slices"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/profiles"
	"github.com/perflab/perflab/profiles/flame"
)

type caseView struct {
	Run        *store.Run
	Case       *store.Case
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
	Cell  cell
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
func (s *Server) loadCase(w http.ResponseWriter, r *http.Request) (*store.Run, *store.Case, bool) {
	run, ok := s.loadRun(w, r)
	if !ok {
		return nil, nil, false
	}
	name := r.PathValue("case")
	c, ok := run.Case(name)
	if !ok {
		s.fail(w, r, http.StatusNotFound, "Run %s has no case %q.", run.ID, name)
		return nil, nil, false
	}
	return run, c, true
}

// caseKind picks the profile kind a request asks for (?kind=), defaulting
// to the first the case has.
func caseKind(r *http.Request, c *store.Case) (string, error) {
	kinds := profileKinds(c)
	k := r.URL.Query().Get("kind")
	if k == "" {
		if len(kinds) == 0 {
			return "", nil
		}
		return kinds[0], nil
	}
	if !slices.Contains(kinds, k) {
		return "", fmt.Errorf("case %s has no %q profile (it has: %v)", c.Name, k, kinds)
	}
	return k, nil
}

// caseProfile loads the kind profile of case c in run.
//
// The key identifies the file's content, for caching what is built from it.
func (s *Server) caseProfile(run *store.Run, c *store.Case, kind string) (prof *profile.Profile, key string, status int, err error) {
	prof, key, err = s.loadProfile(run.ID, c.Profiles[kind])
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", http.StatusNotFound, fmt.Errorf("the %s profile of %s is missing from run %s", kind, c.Name, run.ID)
	}
	if errors.Is(err, store.ErrRefused) {
		return nil, "", http.StatusForbidden, err
	}
	if err != nil {
		return nil, "", http.StatusUnprocessableEntity, fmt.Errorf("the %s profile of %s: %v", kind, c.Name, err)
	}
	// What is built from the profile depends on the run's rules too.
	return prof, key + "\x00" + rulesOfRun(run).key, http.StatusOK, nil
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
	slug := store.Slug(c.Name)
	base := "/runs/" + run.ID + "/cases/" + slug
	v := caseView{Run: run, Case: c, Slug: slug, Base: base, Params: paramString(run, c), Kind: kind, Kinds: profileKinds(c), Budget: budgetParts(c.Budget)}
	for _, u := range units([]store.Case{*c}) {
		v.Stats = append(v.Stats, statRow{Label: unitLabel(u), Cell: statCell(c.Stats, u)})
	}
	if warn := rulesOfRun(run).warning; warn != "" {
		// A copy: the cached run is shared between requests.
		cc := *c
		cc.Warnings = append(slices.Clip(c.Warnings), warn)
		v.Case = &cc
	}
	for _, p := range v.Budget {
		v.Legend = append(v.Legend, legendItem{Label: p.Category, Color: p.Color})
	}
	if kind != "" {
		q := "?kind=" + url.QueryEscape(kind)
		if typ != "" {
			q += "&type=" + url.QueryEscape(typ)
		}
		prof, key, _, err := s.caseProfile(run, c, kind)
		if err != nil {
			v.ProfileErr = err.Error()
		} else {
			idx, err := sampleIndex(prof, typ)
			if err != nil {
				s.fail(w, r, http.StatusNotFound, "The %s profile of %s: %v.", kind, c.Name, err)
				return
			}
			cached, _ := s.views.get(key+"\x00"+kind+"\x00"+typ, func() (*profileView, error) {
				pv := newProfileView(prof, idx, base+"/flame.json"+q, rulesOfRun(run).rules)
				pv.Types = typeLinks(prof, idx, base+"?kind="+url.QueryEscape(kind)+"&")
				return pv, nil
			})
			pv := *cached
			if data, err := s.flameJSON(key+"\x00"+kind+"\x00"+typ+"\x00"+c.Name, caseFlame(run, c, kind, typ, prof)); err == nil {
				pv.FlameData = inlineFlame(data)
			}
			v.Profile = &pv
		}
		files := "/runs/" + run.ID + "/files/"
		v.FlameSVG = base + "/flame.svg" + q
		v.Downloads = append(v.Downloads,
			link{Label: kind + ".pb.gz (pprof)", URL: files + c.Profiles[kind]},
			link{Label: kind + ".folded (flamegraph.pl, speedscope)", URL: base + "/folded" + q},
			link{Label: kind + ".svg (flame graph)", URL: v.FlameSVG + "&download=1"})
	} else if c.Flame != "" {
		v.FlameSVG = "/runs/" + run.ID + "/files/" + c.Flame
	}
	v.CompareTo = s.compareCandidates(run, c)
	s.render(w, r, http.StatusOK, "case", v)
}

func newProfileView(p *profile.Profile, idx int, flameURL string, rules *profiles.Rules) *profileView {
	bySelf, byTotal, total := topFunctions(p, idx, 20, rules)
	st := p.SampleType[idx]
	return &profileView{
		SampleType: st.Type + " (" + st.Unit + ")",
		Total:      fmtSample(total, st.Unit),
		Samples:    len(p.Sample),
		TopSelf:    bySelf,
		TopTotal:   byTotal,
		FlameURL:   flameURL,
	}
}

// compareCandidates lists what a case can be compared with: the other
// cases of its run, then the same case in other runs of the scenario.
func (s *Server) compareCandidates(run *store.Run, c *store.Case) []caseOption {
	var out []caseOption
	for _, o := range run.Cases {
		if o.Name != c.Name {
			out = append(out, caseOption{Value: run.ID + "/" + store.Slug(o.Name), Label: o.Name})
		}
	}
	runs, _, _ := s.runs.list()
	n := 0
	for _, o := range runs {
		if o.ID == run.ID || o.Scenario != run.Scenario {
			continue
		}
		if _, ok := o.Case(c.Name); ok {
			out = append(out, caseOption{Value: o.ID + "/" + store.Slug(c.Name), Label: "run " + o.ID})
			if n++; n == 20 {
				break
			}
		}
	}
	return out
}

// caseProfileRequest is one profile of one case, as a request names it.
type caseProfileRequest struct {
	run  *store.Run
	c    *store.Case
	kind string
	typ  string // sample type asked for (?type=), "" for the default
	idx  int    // the sample type's index
	prof *profile.Profile
	key  string // identifies the profile file's content (caseProfile)
}

// loadCaseProfile resolves {id}, {case} and ?kind= and loads the profile.
// On a failure it answers itself, with JSON if asJSON, and returns false.
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
	prof, key, status, err := s.caseProfile(run, c, kind)
	if err != nil {
		fail(status, err)
		return q, false
	}
	typ := r.URL.Query().Get("type")
	idx, err := sampleIndex(prof, typ)
	if err != nil {
		fail(http.StatusNotFound, fmt.Errorf("the %s profile of %s: %v", kind, c.Name, err))
		return q, false
	}
	return caseProfileRequest{run: run, c: c, kind: kind, typ: typ, idx: idx, prof: prof, key: key}, true
}

// filename names a download of this profile: RUN-CASE-KIND.ext.
func (q caseProfileRequest) filename(ext string) string {
	return q.run.ID + "-" + store.Slug(q.c.Name) + "-" + q.kind + ext
}

func (s *Server) caseFlameJSON(w http.ResponseWriter, r *http.Request) {
	q, ok := s.loadCaseProfile(w, r, true)
	if !ok {
		return
	}
	s.writeFlameJSON(w, r, q.key+"\x00"+q.kind+"\x00"+q.typ+"\x00"+q.c.Name, caseFlame(q.run, q.c, q.kind, q.typ, q.prof))
}

// caseFlame builds the flame graph of one profile of a case.
func caseFlame(run *store.Run, c *store.Case, kind, typ string, prof *profile.Profile) func() (*flame.Tree, error) {
	return func() (*flame.Tree, error) {
		return flame.Build(prof, flame.Options{Title: kind + " · " + c.Name, SampleType: typ, Rules: rulesOfRun(run).rules})
	}
}

func (s *Server) caseFlameSVG(w http.ResponseWriter, r *http.Request) {
	q, ok := s.loadCaseProfile(w, r, false)
	if !ok {
		return
	}
	t, err := caseFlame(q.run, q.c, q.kind, q.typ, q.prof)()
	if err != nil {
		s.fail(w, r, http.StatusUnprocessableEntity, "%v", err)
		return
	}
	s.writeFlameSVG(w, r, t, q.filename(".svg"))
}

func (s *Server) caseFolded(w http.ResponseWriter, r *http.Request) {
	q, ok := s.loadCaseProfile(w, r, false)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": q.filename(".folded")}))
	writeFolded(w, q.prof, q.idx)
}

func (s *Server) failJSON(w http.ResponseWriter, status int, err error) {
	body, _ := json.Marshal(map[string]string{"error": err.Error()})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}
