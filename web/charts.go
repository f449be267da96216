package web

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/report"
)

// Charts are laid out here in SVG user units and drawn by the templates in
// charts.html; html/template escapes every label. The viewBox scales them
// to the page width, so one layout serves laptops and phones: labels sit
// above their bars rather than beside them to stay legible when narrow.

const (
	chartWidth = 480
	plotLeft   = 8.0
	plotRight  = 400.0 // value labels go to the right of this
	rowHeight  = 34.0
	barHeight  = 14.0
	axisHeight = 22.0
)

type tick struct {
	X, Y  float64
	Label string
}

type barChart struct {
	Width, Height int
	Rows          []barRow
	Ticks         []tick
	AxisY         float64
}

type barRow struct {
	Label, Value, Title  string
	LabelY, BarY         float64
	X, W                 float64
	Lo, Hi               float64 // whisker ends; equal to X+W when absent
	HasCI                bool
	MidY, CapTop, CapBot float64
	ValueX               float64
	Color                string
}

type stackChart struct {
	Width, Height int
	Rows          []stackRow
	Ticks         []tick
	AxisY         float64
}

type stackRow struct {
	Label, Value string
	LabelY, BarY float64
	ValueX       float64
	Parts        []stackPart
}

type stackPart struct {
	X, W         float64
	Color, Title string
}

type lineChart struct {
	Title          string
	Width, Height  int
	Series         []series
	XTicks         []tick
	YTicks         []tick
	PlotX0, PlotX1 float64
	PlotY0, PlotY1 float64
}

type series struct {
	Label, Color string
	Points       string
	Dots         []dot
}

type dot struct {
	X, Y  float64
	Title string
}

type legendItem struct {
	Label, Color string
}

// variantPalette colours variants (not categories) in charts: hues far
// from every category colour (profiles' palette: green work, vermilion
// lock, pink wait, amber alloc, purple gc, blue sched, grey other), from
// Paul Tol's muted scheme and two darks, so a variant's bar is never read
// as a category's. TestVariantColoursAreNotCategories checks the distance.
var variantPalette = []string{"#332288", "#66cccc", "#999933", "#882255", "#004488", "#661100", "#222222", "#88ccee"}

// tickLabel formats an axis value without trailing zeros: "250ns", "1µs".
func tickLabel(v float64, unit string) string {
	if v == 0 {
		return "0"
	}
	s := fmtValue(v, unit)
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(s)
	}
	num, suffix := s[:i], s[i:]
	if strings.Contains(num, ".") {
		num = strings.TrimRight(strings.TrimRight(num, "0"), ".")
	}
	return num + suffix
}

// variantColors gives each variant of a run one colour for all its charts.
func variantColors(run *model.Run) map[string]string {
	colors := map[string]string{}
	for _, c := range run.Cases {
		if _, ok := colors[c.Variant]; !ok {
			colors[c.Variant] = variantPalette[len(colors)%len(variantPalette)]
		}
	}
	return colors
}

// niceTicks returns about n round tick values from 0 to at least max.
func niceTicks(max float64, n int) []float64 {
	if max <= 0 || math.IsNaN(max) || math.IsInf(max, 0) {
		return []float64{0}
	}
	raw := max / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []float64
	for v := 0.0; v <= max+step*0.999; v += step {
		out = append(out, v)
	}
	return out
}

func xTicks(ticks []float64, scale func(float64) float64, unit string, y float64) []tick {
	out := make([]tick, len(ticks))
	for i, v := range ticks {
		out[i] = tick{X: scale(v), Y: y, Label: tickLabel(v, unit)}
	}
	return out
}

// timeChart draws each case's median time/op with its 95% confidence
// interval.
func timeChart(rows []caseRow, colors map[string]string) barChart {
	var c barChart
	// The axis fits the medians and their intervals, but an interval
	// wider than twice the largest median (a noisy case) is clipped at the
	// edge rather than squeezing every bar into a corner.
	var maxMed, maxHi float64
	unit := ""
	for _, r := range rows {
		if st, u, ok := report.TimeStat(r.Case); ok {
			unit = u
			maxMed = math.Max(maxMed, st.Median)
			if report.HasCI(st) {
				maxHi = math.Max(maxHi, st.MedianHi)
			}
		}
	}
	max := math.Max(maxMed, math.Min(maxHi, 2*maxMed))
	if max <= 0 || math.IsInf(max, 0) || math.IsNaN(max) {
		return c
	}
	ticks := niceTicks(max, 4)
	top := ticks[len(ticks)-1]
	scale := func(v float64) float64 { return plotLeft + (plotRight-plotLeft)*v/top }
	for _, r := range rows {
		st, u, ok := report.TimeStat(r.Case)
		if !ok {
			continue
		}
		y := float64(len(c.Rows)) * rowHeight
		cell := report.StatCell(r.Case.Stats, u)
		b := barRow{
			Label:  r.Case.Variant,
			Value:  cell.Text,
			Title:  cell.Title,
			LabelY: y + 11,
			BarY:   y + 15,
			MidY:   y + 22,
			CapTop: y + 17,
			CapBot: y + 27,
			X:      plotLeft,
			W:      scale(st.Median) - plotLeft,
			Color:  colors[r.Case.Variant],
		}
		if b.Label == "" {
			b.Label = r.Case.Name
		}
		b.Lo, b.Hi = scale(st.Median), scale(st.Median)
		if st.N > 1 && report.HasCI(st) && st.MedianHi > st.MedianLo {
			b.HasCI = true
			b.Lo, b.Hi = scale(st.MedianLo), math.Min(scale(st.MedianHi), scale(top))
		}
		b.ValueX = math.Max(b.Hi, b.X+b.W) + 4
		c.Rows = append(c.Rows, b)
	}
	c.AxisY = float64(len(c.Rows))*rowHeight + 4
	c.Ticks = xTicks(ticks, scale, unit, c.AxisY+14)
	c.Width, c.Height = chartWidth, int(c.AxisY+axisHeight)
	return c
}

// budgetChart stacks each case's time budget by category.
func budgetChart(rows []caseRow) stackChart {
	var c stackChart
	var max float64
	for _, r := range rows {
		var sum float64
		for _, p := range r.Budget {
			sum += p.NS
		}
		max = math.Max(max, sum)
	}
	if max <= 0 {
		return c
	}
	ticks := niceTicks(max, 4)
	top := ticks[len(ticks)-1]
	scale := func(v float64) float64 { return (plotRight - plotLeft) * v / top }
	for _, r := range rows {
		if len(r.Budget) == 0 {
			continue
		}
		y := float64(len(c.Rows)) * rowHeight
		row := stackRow{Label: r.Case.Variant, LabelY: y + 11, BarY: y + 15}
		if row.Label == "" {
			row.Label = r.Case.Name
		}
		x := plotLeft
		var sum float64
		for _, p := range r.Budget {
			w := scale(p.NS)
			row.Parts = append(row.Parts, stackPart{
				X: x, W: w, Color: p.Color,
				Title: fmt.Sprintf("%s: %s/op (%.1f%%)", p.Category, fmtValue(p.NS, "ns/op"), 100*p.Share),
			})
			x += w
			sum += p.NS
		}
		row.Value = fmtValue(sum, "ns/op")
		row.ValueX = x + 4
		c.Rows = append(c.Rows, row)
	}
	c.AxisY = float64(len(c.Rows))*rowHeight + 4
	c.Ticks = xTicks(ticks, func(v float64) float64 { return plotLeft + scale(v) }, "ns/op", c.AxisY+14)
	c.Width, c.Height = chartWidth, int(c.AxisY+axisHeight)
	return c
}

// scalingCharts draws ops/s against goroutine count, one chart per
// parameter combination that was measured at several thread counts.
func scalingCharts(run *model.Run, colors map[string]string) []lineChart {
	type point struct {
		threads int
		ops     float64
	}
	var keys []string
	byKey := map[string]map[string][]point{}
	var variants []string
	for i := range run.Cases {
		c := &run.Cases[i]
		ops, ok := report.Throughput(c)
		if !ok || c.Threads <= 0 {
			continue
		}
		key := paramString(run, c)
		if byKey[key] == nil {
			byKey[key] = map[string][]point{}
			keys = append(keys, key)
		}
		v := c.Variant
		if !containsString(variants, v) {
			variants = append(variants, v)
		}
		byKey[key][v] = append(byKey[key][v], point{c.Threads, ops})
	}
	var charts []lineChart
	for _, key := range keys {
		threadSet := map[int]bool{}
		var max float64
		for _, pts := range byKey[key] {
			for _, p := range pts {
				threadSet[p.threads] = true
				max = math.Max(max, p.ops)
			}
		}
		if len(threadSet) < 2 {
			continue
		}
		var threads []int
		for t := range threadSet {
			threads = append(threads, t)
		}
		sort.Ints(threads)
		lc := lineChart{Title: key, Width: chartWidth, Height: 240, PlotX0: 56, PlotX1: chartWidth - 24, PlotY0: 26, PlotY1: 200}
		if lc.Title == "" {
			lc.Title = "all cases"
		}
		xOf := func(t int) float64 {
			i := sort.SearchInts(threads, t)
			return lc.PlotX0 + (lc.PlotX1-lc.PlotX0)*float64(i)/float64(len(threads)-1)
		}
		yt := niceTicks(max, 4)
		top := yt[len(yt)-1]
		yOf := func(v float64) float64 { return lc.PlotY1 - (lc.PlotY1-lc.PlotY0)*v/top }
		for _, t := range threads {
			lc.XTicks = append(lc.XTicks, tick{X: xOf(t), Y: lc.PlotY1 + 16, Label: fmt.Sprint(t)})
		}
		for _, v := range yt {
			lc.YTicks = append(lc.YTicks, tick{X: lc.PlotX0 - 6, Y: yOf(v), Label: tickLabel(v, "ops/s")})
		}
		for _, v := range variants {
			pts := byKey[key][v]
			if len(pts) == 0 {
				continue
			}
			sort.Slice(pts, func(i, j int) bool { return pts[i].threads < pts[j].threads })
			s := series{Label: v, Color: colors[v]}
			var b strings.Builder
			for _, p := range pts {
				x, y := xOf(p.threads), yOf(p.ops)
				fmt.Fprintf(&b, "%.1f,%.1f ", x, y)
				s.Dots = append(s.Dots, dot{X: x, Y: y, Title: fmt.Sprintf("%s, %d goroutines: %s ops/s", v, p.threads, fmtValue(p.ops, "ops/s"))})
			}
			s.Points = strings.TrimSpace(b.String())
			lc.Series = append(lc.Series, s)
		}
		charts = append(charts, lc)
	}
	return charts
}

func containsString(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
