package flame

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"hash/fnv"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/profiles"
)

// Layout of the SVG, in pixels. The frame height and font follow
// flamegraph.pl so that the graphs look familiar.
const (
	frameH    = 16
	padX      = 10
	headerH   = 74 // title, subtitle, legend
	footerH   = 10
	charW     = 7.0 // average width of a 12px Verdana character
	minLabelW = 3 * charW
)

// WriteSVG builds p's flame graph and writes it as a static SVG: the
// harness writes one per case.
func WriteSVG(w io.Writer, p *profile.Profile, opts Options) error {
	t, err := Build(p, opts)
	if err != nil {
		return err
	}
	return t.WriteSVG(w)
}

// WriteSVG writes the tree as a static SVG: no script is needed to read it.
// Frames are coloured by category (by change for a diff), with the full
// name, value and share in each frame's tooltip and each category's share
// in the legend. Frames narrower than Options.MinWidth pixels are left out.
func (t *Tree) WriteSVG(w io.Writer) error {
	o := t.opts
	total := t.Total()
	width := t.drawn()[0] // total, or for a diff the union's width
	plotW := float64(o.Width - 2*padX)
	minValue := svgMinValue(o, width)
	depth, shown := 0, 0
	// What the frames will take, known before the first byte: a frame is
	// its markup and its name twice (tooltip and label), cut.
	size := int64(4 << 10)
	pruned := t.walk(minValue, func(i int32, d int, x int64) {
		depth = max(depth, d)
		shown++
		size += svgFrameBytes + 2*int64(min(len(t.nodeName(i)), 4*MaxNameRunes))
	})
	shown-- // the root is not a frame
	if limit := t.maxOutput(); size > limit {
		return overBudget("SVG", size, limit)
	}
	bw := bufio.NewWriterSize(&budgetWriter{w: w, limit: t.maxOutput(), what: "SVG"}, 64<<10)
	top := t.headerH()
	height := top + (depth+1)*frameH + footerH

	fmt.Fprintf(bw, `<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Verdana, DejaVu Sans, sans-serif" font-size="12">
<style>.f text{pointer-events:none;fill:#000} .f:hover rect{stroke:#000;stroke-width:1} .l text{fill:#333}</style>
<rect x="0" y="0" width="100%%" height="100%%" fill="#fbfbfb"/>
`, o.Width, height, o.Width, height)
	if t.diff {
		// Frames only in the base are hatched: blue if their going is
		// significant, grey if it is within the noise.
		fmt.Fprintf(bw, `<defs>%s%s</defs>`+"\n", hatch("gone", diffBlue), hatch("gone-ns", "#a8a8a8"))
	}
	// A diff's title names two cases and ran off both edges; the full
	// title is its tooltip.
	fmt.Fprintf(bw, `<text x="%d" y="22" text-anchor="middle" font-size="17"><title>%s</title>%s</text>`+"\n", o.Width/2, esc(cutName(o.Title, 4*MaxNameRunes)),
		esc(cut(cutName(o.Title, 4*MaxNameRunes), int(float64(o.Width-2*padX)/(charW*17/12)))))
	sub := fmt.Sprintf("%s (%s), total %s, %d frames", t.sampleType, t.unit, formatValue(total, t.unit), shown)
	if pruned > 0 {
		sub += fmt.Sprintf(" (%d narrower than %g px not shown)", pruned, o.MinWidth)
	}
	if total <= 0 {
		sub += ": no samples, nothing to draw"
	}
	if t.diff {
		sub += fmt.Sprintf("; against a base of %s, scaled to the same total, on the %s profile's shape", formatValue(t.BaseTotal(), t.unit), t.opts.Layout)
	}
	fmt.Fprintf(bw, `<text x="%d" y="40" text-anchor="middle" fill="#555">%s</text>`+"\n", o.Width/2, esc(sub))
	if t.diff {
		fmt.Fprintf(bw, `<text x="%d" y="58" text-anchor="middle" fill="#555">%s</text>`+"\n", o.Width/2, esc(t.diffKey()))
	}
	t.writeLegend(bw, top-22)

	// Frames, root at the bottom.
	bottom := float64(top + depth*frameH)
	scale := 0.0
	if width > 0 {
		scale = plotW / float64(width)
	}
	var line []byte
	colors := make(map[int32]string)
	t.walk(minValue, func(i int32, d int, x int64) {
		y := bottom - float64(d*frameH)
		line = t.appendFrame(line[:0], i, padX+float64(x)*scale, y, float64(t.drawn()[i])*scale, colors)
		bw.Write(line)
	})
	bw.WriteString("</svg>\n")
	return bw.Flush()
}

// svgMinValue is the value a frame must be above to be drawn in an SVG of
// the given total width (in value units). Children are never larger than
// their parent, so pruning a node prunes its subtree.
func svgMinValue(o Options, width int64) int64 {
	if width <= 0 {
		return 0
	}
	return int64(o.MinWidth * float64(width) / float64(o.Width-2*padX))
}

// walk visits the tree in pre-order, leaving out every frame whose value is
// not above minValue with its subtree, and calls fn with each frame's depth
// and offset from the left edge (in value units). It returns the number of
// frames left out whose parent was visited.
func (t *Tree) walk(minValue int64, fn func(i int32, depth int, x int64)) (pruned int) {
	value := t.drawn()
	return t.walkKeep(func(i int32, _ int) bool { return value[i] > minValue && value[i] > 0 }, fn)
}

// walkKeep is walk with the frames kept chosen by keep (the root always
// is); a frame left out takes its subtree with it.
func (t *Tree) walkKeep(keep func(i int32, depth int) bool, fn func(i int32, depth int, x int64)) (pruned int) {
	value := t.drawn()
	cursor := make([]int64, t.maxDepth+2)
	ends := make([]int32, 0, t.maxDepth+1)
	for i := int32(0); i < int32(len(t.name)); {
		for len(ends) > 0 && ends[len(ends)-1] <= i {
			ends = ends[:len(ends)-1]
		}
		d := len(ends)
		x := cursor[d]
		cursor[d] += value[i]
		if i != 0 && !keep(i, d) {
			pruned++
			i = t.end[i]
			continue
		}
		fn(i, d, x)
		cursor[d+1] = x
		ends = append(ends, t.end[i])
		i++
	}
	return pruned
}

// svgFrameBytes is what a frame takes in the SVG besides its name: the
// markup, the numbers, the value and share in the tooltip.
const svgFrameBytes = 320

func (t *Tree) appendFrame(b []byte, i int32, x, y, w float64, colors map[int32]string) []byte {
	full := t.nodeName(i)
	name := cutName(full, MaxNameRunes)
	cat := t.category(i)
	v := t.value[i]
	total := t.Total()
	pct := 0.0
	if total > 0 {
		pct = 100 * float64(v) / float64(total)
	}
	var fill, tip string
	if t.diff {
		fill = t.diffFill(i)
		tip = fmt.Sprintf("%s\n%s\n%s", name, t.diffText(i), cat)
	} else {
		key := t.name[i]<<3 | int32(cat.Index())
		if fill = colors[key]; fill == "" {
			fill = frameColor(cat, full)
			colors[key] = fill
		}
		tip = fmt.Sprintf("%s\n%s (%.2f%%), %s", name, formatValue(v, t.unit), pct, cat)
	}
	b = append(b, `<g class="f"><title>`...)
	b = appendEsc(b, tip)
	b = append(b, `</title><rect x="`...)
	b = strconv.AppendFloat(b, x, 'f', 1, 64)
	b = append(b, `" y="`...)
	b = strconv.AppendFloat(b, y, 'f', 0, 64)
	b = append(b, `" width="`...)
	b = strconv.AppendFloat(b, w, 'f', 1, 64)
	b = append(b, `" height="15" rx="2" fill="`...)
	b = append(b, fill...)
	b = append(b, '"', '/', '>')
	if w >= minLabelW {
		b = append(b, `<text x="`...)
		b = strconv.AppendFloat(b, x+3, 'f', 1, 64)
		b = append(b, `" y="`...)
		b = strconv.AppendFloat(b, y+11.5, 'f', 1, 64)
		b = append(b, `">`...)
		b = appendEsc(b, label(name, int((w-6)/charW)))
		b = append(b, `</text>`...)
	}
	return append(b, "</g>\n"...)
}

// writeLegend draws one swatch per category with its share of the total,
// or for a diff its change in share with its interval, at height y.
func (t *Tree) writeLegend(bw *bufio.Writer, y int) {
	x := float64(padX)
	total := float64(t.Total())
	for i, c := range profiles.Categories {
		share := 0.0
		if total > 0 {
			share = 100 * float64(t.byCat[i]) / total
		}
		text := fmt.Sprintf("%s %.1f%%", c, share)
		tip := fmt.Sprintf("%s: %s, %.2f%% of the total (the self %s of %s frames)", c, formatValue(t.byCat[i], t.unit), share, t.sampleType, c)
		if t.diff {
			text, tip = t.catText(i)
		}
		fmt.Fprintf(bw, `<g class="l"><title>%s</title><rect x="%.0f" y="%d" width="12" height="12" rx="2" fill="%s"/><text x="%.0f" y="%.1f">%s</text></g>`+"\n",
			esc(tip), x, y, c.Color(), x+16, float64(y)+10.5, esc(text))
		x += 16 + float64(utf8.RuneCountInString(text))*charW + 18
	}
}

// headerH is the height above the frames: a diff has a line more.
func (t *Tree) headerH() int {
	if t.diff {
		return headerH + 18
	}
	return headerH
}

// hatch returns an SVG pattern of diagonal stripes of colour c, light
// enough for a label to stay readable (flame.js draws the same).
func hatch(id, c string) string {
	return `<pattern id="` + id + `" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="` +
		mix(c, "#ffffff", 0.72) + `"/><rect width="2" height="6" fill="` + mix(c, "#ffffff", 0.15) + `"/></pattern>`
}

// diffFill is the fill of node i of a diff.
func (t *Tree) diffFill(i int32) string {
	sig := t.stat.sig[i]
	if t.value[i] == 0 && i != 0 {
		if sig != 0 {
			return "url(#gone)"
		}
		return "url(#gone-ns)"
	}
	return diffColor(t.value[i], t.scaledBase(i), sig)
}

// label shortens a function name to at most n characters for a frame:
// the package path is dropped first (the tooltip keeps the full name),
// then the end is cut with "..".
func label(name string, n int) string {
	if n < 3 {
		return ""
	}
	short := name
	if i := strings.LastIndexByte(prefixBeforeBracket(name), '/'); i >= 0 {
		short = name[i+1:]
	}
	if utf8.RuneCountInString(short) <= n {
		return short
	}
	if n < 5 {
		return "" // "ab.." says nothing; flamegraph.pl also leaves such frames blank
	}
	r := []rune(short)
	return string(r[:n-2]) + ".."
}

// cut shortens s to at most n characters, ending it with "…".
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n || n < 2 {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func prefixBeforeBracket(s string) string {
	if i := strings.IndexByte(s, '['); i >= 0 {
		return s[:i]
	}
	return s
}

func esc(s string) string {
	return string(appendEsc(nil, s))
}

// appendEsc appends s escaped for XML text and attribute values. Invalid
// UTF-8 and characters XML cannot carry (control bytes) become U+FFFD.
func appendEsc(b []byte, s string) []byte {
	var sb strings.Builder
	xml.EscapeText(&sb, []byte(s))
	return append(b, sb.String()...)
}

// frameColor is the category colour, lightened by up to 30% by a hash of
// the name, so that neighbouring frames of one category stay apart and the
// same function has the same shade in every graph.
func frameColor(c profiles.Category, name string) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	f := float64(h.Sum32()%1000) / 1000 * 0.3
	return mix(c.Color(), "#ffffff", f)
}

// mix blends two "#rrggbb" colours: f=0 gives a, f=1 gives b.
func mix(a, b string, f float64) string {
	pa, pb := parseHex(a), parseHex(b)
	var out [3]int
	for i := range out {
		out[i] = int(float64(pa[i])*(1-f) + float64(pb[i])*f + 0.5)
	}
	return fmt.Sprintf("#%02x%02x%02x", out[0], out[1], out[2])
}

func parseHex(s string) [3]int {
	var c [3]int
	for i := range c {
		v, _ := strconv.ParseUint(s[1+2*i:3+2*i], 16, 8)
		c[i] = int(v)
	}
	return c
}
