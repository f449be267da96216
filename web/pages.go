package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/store"
)

// ---- runs -------------------------------------------------------------

type runsView struct {
	Dir       string
	MakeRun   string
	Scenario  string
	Scenarios []string
	Runs      []runRow
	Skipped   []string
}

type runRow struct {
	*model.Run
	Machine string
	Failed  int
}

func (s *Server) runsPage(w http.ResponseWriter, r *http.Request) {
	runs, skipped, err := s.runs.list()
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, "Cannot list the run store %s: %v", s.store.Root, err)
		return
	}
	v := runsView{Dir: s.store.Root, MakeRun: s.opts.MakeRun, Scenario: r.URL.Query().Get("scenario")}
	seen := map[string]bool{}
	for _, run := range runs {
		if !seen[run.Scenario] {
			seen[run.Scenario] = true
			v.Scenarios = append(v.Scenarios, run.Scenario)
		}
		if v.Scenario != "" && run.Scenario != v.Scenario {
			continue
		}
		row := runRow{Run: run, Machine: machine(run.Env)}
		for _, c := range run.Cases {
			if c.Status == model.StatusFailed {
				row.Failed++
			}
		}
		v.Runs = append(v.Runs, row)
	}
	sort.Strings(v.Scenarios)
	for _, e := range skipped {
		v.Skipped = append(v.Skipped, e.Error())
	}
	s.render(w, r, http.StatusOK, "runs", v)
}

func machine(e model.Env) string {
	var parts []string
	if e.Hostname != "" {
		parts = append(parts, e.Hostname)
	}
	if e.CPU != "" {
		parts = append(parts, e.CPU)
	}
	if e.NumCPU > 0 {
		parts = append(parts, fmt.Sprintf("%d CPUs, GOMAXPROCS=%d", e.NumCPU, e.GOMAXPROCS))
	}
	return strings.Join(parts, " · ")
}

// loadRun resolves the {id} of a request. "latest" redirects to the newest
// run's own URL so that what the user bookmarks stays put. It writes the
// error page itself and returns ok=false on any problem.
func (s *Server) loadRun(w http.ResponseWriter, r *http.Request) (*model.Run, bool) {
	id := r.PathValue("id")
	if id == store.Latest {
		run, err := s.runs.latest()
		if err != nil {
			s.fail(w, r, http.StatusNotFound, "%v", err)
			return nil, false
		}
		// The rest of the path as it was sent, escaped: a case name's '/'
		// (a sub-benchmark's, a full case name) is %2F in one segment,
		// which the unescaped path would split in two.
		target := "/runs/" + run.ID
		if parts := strings.SplitN(r.URL.EscapedPath(), "/", 4); len(parts) == 4 {
			target += "/" + parts[3]
		}
		if r.URL.RawQuery != "" {
			target += "?" + r.URL.RawQuery
		}
		http.Redirect(w, r, target, http.StatusFound)
		return nil, false
	}
	run, status, err := s.run(id)
	if err != nil {
		s.fail(w, r, status, "%v", err)
		return nil, false
	}
	return run, true
}

// run loads run id and says which status a failure deserves.
func (s *Server) run(id string) (*model.Run, int, error) {
	if !store.ValidID(id) {
		return nil, http.StatusBadRequest, fmt.Errorf("%q is not a valid run id: ids are letters, digits, '.', '-' and '_'", id)
	}
	// The store's door refuses a run directory that is a symbolic link
	// (it could point out of the store) and a run.json that is not a
	// regular file (a FIFO would hang the request).
	if _, err := s.store.Path(id, "run.json"); errors.Is(err, fs.ErrNotExist) {
		if _, derr := os.Lstat(filepath.Join(s.store.Root, id)); errors.Is(derr, fs.ErrNotExist) {
			return nil, http.StatusNotFound, fmt.Errorf("there is no run %q in %s", id, s.store.Root)
		}
		return nil, http.StatusNotFound, fmt.Errorf("%s/%s has no run.json; it is not a run", s.store.Root, id)
	} else if errors.Is(err, store.ErrRefused) {
		return nil, http.StatusForbidden, err
	} else if err != nil {
		return nil, http.StatusInternalServerError, err
	}
	run, err := s.runs.load(id)
	switch {
	case err == nil:
		return run, http.StatusOK, nil
	case errors.Is(err, store.ErrCorrupt):
		// The request names a run whose file is not one: the reason is
		// the answer (issue 26: a corrupt run.json was a 500).
		return nil, http.StatusUnprocessableEntity, err
	case errors.Is(err, store.ErrRefused):
		return nil, http.StatusForbidden, err
	case errors.Is(err, store.ErrNoRun):
		return nil, http.StatusNotFound, err
	case errors.Is(err, errBusy):
		return nil, http.StatusServiceUnavailable, err
	}
	return nil, http.StatusInternalServerError, err
}

// ---- one run ----------------------------------------------------------

type runView struct {
	Run *model.Run
	// Report is the run's report, the model this page lays out.
	Report     *report.Run
	HasResults bool
	// Warnings are the run's own warnings (the machine's, and routine
	// ones most cases share), shown once at the top; Notes the run's
	// notes (report.Info), behind a toggle.
	Warnings, Notes []report.Warning
	NoCI            bool
	Machine         string
	Load            string
	Units           []string
	// Cols are the run table's metric columns, VariantCol the width class
	// of its first: every group's table has the same widths (tableWidths).
	Cols       []tableCol
	VariantCol string
	// Span is how many columns a case without results leaves to its note.
	Span    int
	Groups  []caseGroup
	Scaling []lineChart
	Legend  []legendItem
	Cases   []caseOption
	// CompareA and CompareB are the compare form's first choice: two
	// variants at the same parameters (variantPair).
	CompareA, CompareB string
}

type caseGroup struct {
	Title string
	// Verdict is the report's sentence on the group's fastest variant;
	// Advice says when the repetitions were too few for it.
	Verdict, Advice string
	// Notes are its cases' notes (report.Info), behind a toggle.
	Notes  []report.Warning
	Rows   []caseRow
	Time   barChart
	Budget stackChart
}

type caseRow struct {
	Case *model.Case
	// Warnings are the case's own warnings (report.Caution and above),
	// shown under the group's table, with a mark on the row.
	Warnings []report.Warning
	// Untrusted marks a budget that cannot be trusted, Trust says why;
	// SchedBy says what preempted goroutines were doing (the report's).
	Untrusted      bool
	Trust, SchedBy string
	Slug           string
	Cells          []report.Cell
	Budget         []budgetPart
	Kinds          []string
	// BudgetBar is the budget as a small stacked bar for the table, and
	// BudgetText its largest shares, "lock 71% · work 13%".
	BudgetBar  []barSeg
	BudgetText string
	// Err is the widest share's sampling error (report.Row.ErrMax), shown
	// after BudgetText as the CLI's budget table shows it.
	Err float64
}

// barSeg is one category's piece of a table row's budget bar (SVG units:
// the bar is 100 wide).
type barSeg struct {
	X, W         float64
	Color, Title string
}

// budgetCell draws a budget as a 100-unit stacked bar beside the report's
// text of its two largest shares, so the run table says where the time
// goes without a column per category (the table fits 1280 px).
func budgetCell(parts []budgetPart) ([]barSeg, string) {
	var segs []barSeg
	x := 0.0
	rp := make([]report.BudgetPart, len(parts))
	for i, p := range parts {
		w := 100 * p.Share
		title := p.Category + " " + report.Share(p.Share)
		if p.Err > 0 {
			title += " " + report.ErrCell(p.Err)
		}
		segs = append(segs, barSeg{X: x, W: w, Color: p.Color, Title: title})
		x += w
		rp[i] = p.BudgetPart
	}
	return segs, report.BudgetText(rp)
}

// tableCol is a metric column of the run table: its heading and its width
// classes, Width with each interval beside its figure and Stacked with it
// under the figure (the layout below 1240 px, where rows are two lines high
// anyway).
type tableCol struct {
	Label, Width, Stacked string
}

// The run table is one table per parameter group, laid out with fixed
// column widths so that every group's columns line up and the widths do
// not depend on which group has the longest figure. The widths are chosen
// here, from the longest text each column holds anywhere in the run, in
// units of the font's "0" (CSS ch; digits are exactly 1ch with tabular
// figures) and given as classes (col.w3 … col.w24 in style.css: the
// Content-Security-Policy forbids style attributes). The budget column's
// width is fixed in the stylesheet. An estimate that falls short only
// wraps a cell's interval under its figure; it never overlaps a neighbour.
const (
	minCol, maxCol = 3, 24
	// maxVariantCol: a longer variant name wraps rather than squeeze the
	// figures.
	maxVariantCol = 22
	errScale      = 0.85 // .err and the profile links are 0.85em
	headScale     = 0.95 // headings: 0.85rem, bold
	warnCh        = 0.35 + 1.45
)

// tableWidths gives the variant column's width class and each unit's
// column.
func tableWidths(units []string, groups map[string]*caseGroup) (string, []tableCol) {
	variant := textCh("variant") * headScale
	need := make([]float64, len(units))
	stacked := make([]float64, len(units))
	for i, u := range units {
		need[i] = textCh(unitLabel(u)) * headScale
		stacked[i] = need[i]
	}
	for _, g := range groups {
		for _, row := range g.Rows {
			name := textCh(row.Case.Variant)
			if row.Case.Variant == "" {
				name = textCh(row.Case.Name)
			}
			if len(row.Warnings) > 0 {
				name += warnCh
			}
			variant = max(variant, name, textCh(strings.Join(row.Kinds, " "))*errScale)
			if statusNote(row.Case) != "" {
				continue // its note spans the metric columns
			}
			for i, c := range row.Cells {
				w, e := textCh(c.Text), textCh(c.Err)*errScale
				if c.Err != "" {
					w += textCh(" ") + e
				}
				need[i] = max(need[i], w)
				stacked[i] = max(stacked[i], textCh(c.Text), e)
			}
		}
	}
	cols := make([]tableCol, len(units))
	for i, u := range units {
		cols[i] = tableCol{Label: unitLabel(u), Width: widthClass("w", need[i], maxCol), Stacked: widthClass("s", stacked[i], maxCol)}
	}
	return widthClass("w", variant, maxVariantCol), cols
}

// widthClass rounds a width in ch up, with half a ch to spare, to one of
// the stylesheet's width classes: "w" for the wide layout, "s" for the
// stacked one.
func widthClass(layout string, ch float64, limit int) string {
	n := min(max(int(math.Ceil(ch+0.5)), minCol), limit)
	return layout + strconv.Itoa(n)
}

// textCh estimates how wide s is in the UI's sans-serif font, in ch, from
// measured widths (DejaVu Sans in Chromium; other system fonts are close):
// digits 1, '.' 0.5, '%' 1.5, '±' '<' '∞' 1.3, '⚠' 1.4, lower-case letters
// 0.6–1.45. It errs wide: a column a little too wide costs a few pixels, a
// column too narrow wraps.
func textCh(s string) float64 {
	var w float64
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			w++
		case r == ' ':
			w += 0.35
		case strings.ContainsRune(".,:;·|!'ijlft", r):
			w += 0.6
		case strings.ContainsRune("mwMW%@", r):
			w += 1.5
		case r < 0x80:
			w += 1.05
		default: // ±, ∞, ⚠, —, µ and anything wider
			w += 1.6
		}
	}
	return w
}

// budgetPart is the report's share of a category, with its colour.
type budgetPart struct {
	report.BudgetPart
	Color string
}

// budgetParts colours the report's layout of a budget of a profile
// (report.BudgetOf).
func budgetParts(b map[string]float64) []budgetPart { return colored(report.BudgetOf(b)) }

// caseBudget colours the report's budget of a case (report.Budget).
func caseBudget(c *model.Case) []budgetPart { return colored(report.Budget(c)) }

func colored(rp []report.BudgetPart) []budgetPart {
	var parts []budgetPart
	for _, p := range rp {
		parts = append(parts, budgetPart{BudgetPart: p, Color: categoryColor(p.Category)})
	}
	return parts
}

type caseOption struct {
	Value, Label string
}

func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	run, ok := s.loadRun(w, r)
	if !ok {
		return
	}
	v := buildRunView(run)
	_, err := s.store.Path(run.ID, "results.txt")
	v.HasResults = err == nil
	s.render(w, r, http.StatusOK, "run", v)
}

// buildRunView lays out the report of run (internal/report, the one model
// the CLI's table renders too) as the run page: the groups, rows, verdicts,
// warnings and notes are the report's; what is decided here is layout
// (column widths, charts, colours).
func buildRunView(run *model.Run) runView {
	rep := report.Build(run)
	v := runView{Run: run, Report: rep, Machine: machine(run.Env), Units: report.TableUnits(run.Cases), Load: rep.Machine}
	for _, w := range rep.Warnings {
		if w.ShownByDefault() {
			v.Warnings = append(v.Warnings, w)
		} else {
			v.Notes = append(v.Notes, w)
		}
	}
	colors := variantColors(run)
	cats := map[string]bool{}
	byKey := map[string]*caseGroup{}
	for _, rg := range rep.Groups {
		g := &caseGroup{Title: rg.Title(), Advice: rg.Advice}
		if rg.Verdict != nil {
			g.Verdict = rg.Verdict.String()
		}
		byKey[g.Title] = g
		for ri := range rg.Rows {
			rr := &rg.Rows[ri]
			c := rr.Case
			row := caseRow{Case: c, Slug: model.Slug(c.Name), Kinds: profileKinds(c)}
			for _, w := range rr.Warnings {
				if w.ShownByDefault() {
					row.Warnings = append(row.Warnings, w)
				} else {
					g.Notes = append(g.Notes, w)
				}
			}
			if st, _, ok := report.TimeStat(c); ok && !report.HasCI(st) {
				v.NoCI = true
			}
			for _, u := range v.Units {
				row.Cells = append(row.Cells, report.StatCell(c.Stats, u))
			}
			if rr.HasBudget {
				row.Budget = caseBudget(c)
				row.Untrusted, row.Trust = rr.Untrusted, rr.Trust
				row.SchedBy = rr.SchedNote
				row.Err = rr.ErrMax
			}
			for _, p := range row.Budget {
				cats[p.Category] = true
			}
			row.BudgetBar, row.BudgetText = budgetCell(row.Budget)
			g.Rows = append(g.Rows, row)
			v.Cases = append(v.Cases, caseOption{Value: run.ID + "/" + row.Slug, Label: c.Name})
		}
		v.Groups = append(v.Groups, *g)
	}
	v.VariantCol, v.Cols = tableWidths(v.Units, byKey)
	v.Span = len(v.Cols) + 1
	for i := range v.Groups {
		g := &v.Groups[i]
		g.Time = timeChart(g.Rows, colors)
		g.Budget = budgetChart(g.Rows)
	}
	if x, y := variantPair(run); x != nil {
		v.CompareA, v.CompareB = run.ID+"/"+model.Slug(x.Name), run.ID+"/"+model.Slug(y.Name)
	} else if len(v.Cases) > 1 {
		v.CompareA, v.CompareB = v.Cases[0].Value, v.Cases[1].Value
	}
	v.Scaling = scalingCharts(run, colors)
	for _, c := range report.CategoryOrder(cats) {
		v.Legend = append(v.Legend, legendItem{Label: c, Color: categoryColor(c)})
	}
	return v
}

// kindOrder is the order profile kinds are offered in: the store's one
// list.
var kindOrder = model.ProfileKinds

func profileKinds(c *model.Case) []string {
	var out []string
	for _, k := range kindOrder {
		if c.Profiles[k] != "" {
			out = append(out, k)
		}
	}
	var rest []string
	for k := range c.Profiles {
		if !slices.Contains(kindOrder, k) {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// ---- files ------------------------------------------------------------

// servedTypes are the only files of a run the server hands out.
var servedTypes = map[string]string{
	".pb.gz":  "application/octet-stream",
	".svg":    "image/svg+xml",
	".json":   "application/json",
	".txt":    "text/plain; charset=utf-8",
	".folded": "text/plain; charset=utf-8",
}

func fileType(name string) (ext, ctype string) {
	for ext, ctype := range servedTypes {
		if strings.HasSuffix(name, ext) {
			return ext, ctype
		}
	}
	return "", ""
}

func (s *Server) runFile(w http.ResponseWriter, r *http.Request) {
	run, ok := s.loadRun(w, r)
	if !ok {
		return
	}
	rel := r.PathValue("path")
	ext, ctype := fileType(rel)
	if ctype == "" {
		s.fail(w, r, http.StatusNotFound, "Run files served here are profiles (.pb.gz), flame graphs (.svg), results (.txt) and run.json; %q is none of those.", rel)
		return
	}
	if rel == "run.json" {
		// The run as read, not the file: a run stored before the command
		// line was redacted would hand out a password (store.RedactArgs).
		w.Header().Set("Content-Type", ctype)
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(run)
		return
	}
	f, fi, err := s.store.OpenFile(run.ID, rel)
	if errors.Is(err, fs.ErrNotExist) {
		s.fail(w, r, http.StatusNotFound, "Run %s has no file %q.", run.ID, rel)
		return
	}
	if errors.Is(err, store.ErrRefused) {
		s.fail(w, r, http.StatusBadRequest, "%v", err)
		return
	}
	if err != nil {
		s.fail(w, r, http.StatusNotFound, "Run %s has no file %q.", run.ID, rel)
		return
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", ctype)
	if ext == ".svg" {
		// A flame graph SVG holds function names from the profile; even if
		// one got through unescaped it must not run script here.
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
	}
	if ext == ".pb.gz" || r.URL.Query().Get("download") != "" {
		name := run.ID + "-" + strings.ReplaceAll(rel, "/", "-")
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": path.Base(name)}))
	}
	http.ServeContent(w, r, "", fi.ModTime(), f)
}
