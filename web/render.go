package web

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/textsafe"
	"github.com/perflab/perflab/internal/units"
)

// pageNames are the templates under templates/, each rendered inside
// layout.html.
var pageNames = []string{"runs", "run", "case", "compare", "runcompare", "upload", "uploaded", "pyroscope", "error"}

func parsePages() map[string]*template.Template {
	pages := make(map[string]*template.Template)
	for _, name := range pageNames {
		t := template.New("layout.html").Funcs(funcs)
		t = template.Must(t.ParseFS(templateFS, "templates/layout.html", "templates/charts.html", "templates/"+name+".html"))
		pages[name] = t
	}
	return pages
}

var funcs = template.FuncMap{
	"fmtValue":    fmtValue,
	"fmtTime":     func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"pct":         func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) },
	"errcell":     report.ErrCell,
	"slug":        model.Slug,
	"short":       func(s string, n int) string { return shorten(s, n) },
	"breakable":   breakable,
	"query":       func(k, v string) template.URL { return template.URL(k + "=" + url.QueryEscape(v)) },
	"status":      statusNote,
	"hasPrefix":   strings.HasPrefix,
	"skippedNote": func() string { return skippedNote },
}

// render executes a page into a buffer first, so a template error becomes a
// clean 500 instead of half a page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	var buf bytes.Buffer
	t := s.pages[name]
	if err := t.Execute(&buf, data); err != nil {
		s.opts.Logf("perflab serve: rendering %s for %s: %v", name, r.URL.Path, err)
		if name != "error" {
			s.fail(w, r, http.StatusInternalServerError, "The page could not be rendered: %v", err)
			return
		}
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(safePage(buf.Bytes()))
}

// safePage replaces in a rendered page every character that reorders or
// controls what is shown rather than showing itself (textsafe.Control:
// bidirectional overrides and isolates, C0 and C1 controls, DEL), except
// the tab, newline and carriage return the markup itself is made of, with
// U+FFFD. html/template escapes for HTML, not for these: a case named with
// U+202E reached the pages reversed (issue 26). U+FFFD is inert in every
// context a page has (text, attribute, JSON in a script), where a visible
// escape would be read back as one in JSON. The flame JSON the pages fetch
// goes through it too, once, when it is built.
func safePage(page []byte) []byte {
	clean := true
	for _, c := range page {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c >= 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return page
	}
	out := make([]byte, 0, len(page))
	for i := 0; i < len(page); {
		r, n := utf8.DecodeRune(page[i:])
		if textsafe.Control(r) && r != '\t' && r != '\n' && r != '\r' {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, page[i:i+n]...)
		}
		i += n
	}
	return out
}

// fmtValue formats a measurement in its unit: the unit table's one
// formatter, so the web and the CLI write every number alike.
func fmtValue(v float64, unit string) string { return units.Format(v, unit) }

// unitLabel names a unit for a column heading, as every table does.
func unitLabel(unit string) string { return units.Label(unit) }

// breakable escapes a function name for HTML and lets the browser break it
// only at package and type boundaries (after '/', '.', '(', ')' and '*'),
// never mid-identifier: "crypto/internal/<wbr>fips140/<wbr>sha256.<wbr>block".
func breakable(name string) template.HTML {
	var b strings.Builder
	for _, r := range name {
		b.WriteString(template.HTMLEscapeString(string(r)))
		switch r {
		case '/', '.', '(', ')', '*':
			b.WriteString("<wbr>")
		}
	}
	return template.HTML(b.String())
}

func shorten(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// paramString renders a case's parameters (without variant and threads)
// as "keys=128 key=ssk", in the scenario's order (internal/report.Params).
func paramString(run *model.Run, c *model.Case) string {
	var parts []string
	for _, p := range report.Params(run, c) {
		parts = append(parts, p.Name+"="+p.Value)
	}
	return strings.Join(parts, " ")
}

// skippedNote explains the store's "skipped": the runner marks every case
// skipped before the rounds and a case stays so only if the run stopped
// (Ctrl-C, an error) before measuring it.
const skippedNote = "not measured (the run stopped before this case ran)"

// statusNote says what became of a case that has no results, opening with
// its model.Status word as the CLI's table does (internal/report writes
// "skipped", "failed: …", "n/a: …"), so both name a case alike; "" for a
// measured case.
func statusNote(c *model.Case) string {
	switch c.Status {
	case model.StatusOK:
		return ""
	case model.StatusSkipped:
		return string(c.Status) + ": " + skippedNote
	case model.StatusNotApplicable:
		if c.Error != "" {
			return "n/a at these parameters: " + c.Error
		}
		return "n/a at these parameters"
	}
	if c.Error != "" {
		return string(c.Status) + ": " + c.Error
	}
	return string(c.Status)
}
