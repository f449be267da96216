package web

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/store"
	"golang.org/x/perf/benchunit"
)

// pageNames are the templates under templates/, each rendered inside
// layout.html.
var pageNames = []string{"runs", "run", "case", "compare", "upload", "uploaded", "pyroscope", "error"}

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
	"fmtValue": fmtValue,
	"fmtTime":  func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"pct":      func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) },
	"slug":     store.Slug,
	"short":    func(s string, n int) string { return shorten(s, n) },
	"query":    func(k, v string) template.URL { return template.URL(k + "=" + url.QueryEscape(v)) },
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
	w.Write(buf.Bytes())
}

// fmtValue formats a measurement in its unit the way benchstat does:
// 1.234µs, 1.50KiB, 12.0k.
func fmtValue(v float64, unit string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	switch unit {
	case "sec/op", "cpu-sec/op":
		return benchunit.Scale(v, benchunit.Decimal) + "s"
	case "ns/op", "cpu-ns/op":
		return benchunit.Scale(v*1e-9, benchunit.Decimal) + "s"
	case "ops/s", "alloc-MB/s", "MB/s":
		if math.Abs(v) >= 1000 {
			return benchunit.Scale(v, benchunit.Decimal)
		}
	case "gc-cpu-%":
		return fmt.Sprintf("%.1f%%", v)
	}
	// Counts and bytes per operation read as plain numbers, as in the
	// CLI's table: 0.876 allocs/op, not 876.2m; 70.1 B/op, not 70.10B.
	return plainNumber(v)
}

// plainNumber formats v with three significant figures below 1000 and
// SI prefixes above, never with milli- or micro- prefixes.
func plainNumber(v float64) string {
	switch a := math.Abs(v); {
	case v == 0:
		return "0"
	case a >= 1e4:
		return benchunit.Scale(v, benchunit.Decimal)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 1:
		return fmt.Sprintf("%.3g", v)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// unitLabel names a unit for a column heading.
func unitLabel(unit string) string {
	switch unit {
	case "sec/op", "ns/op":
		return "time/op"
	case "cpu-sec/op", "cpu-ns/op":
		return "CPU/op"
	case "alloc-MB/s":
		return "alloc MB/s"
	case "gc-cpu-%":
		return "GC CPU"
	}
	return unit
}

func shorten(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// paramString renders a case's parameters (without variant and threads)
// as "keys=128 key=ssk", in the order the case name gives them. It matches
// name segments against the Params map rather than trusting the name, so a
// variant name containing '/' cannot forge parameters.
func paramString(c *store.Case) string {
	var parts []string
	used := map[string]bool{}
	for _, seg := range strings.Split(c.Name, "/") {
		k, v, ok := strings.Cut(seg, "=")
		if !ok || used[k] {
			continue
		}
		if pv, ok := c.Params[k]; ok && pv == v {
			parts = append(parts, seg)
			used[k] = true
		}
	}
	var rest []string
	for k, v := range c.Params {
		if !used[k] {
			rest = append(rest, k+"="+v)
		}
	}
	sort.Strings(rest)
	return strings.Join(append(parts, rest...), " ")
}
