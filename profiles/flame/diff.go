package flame

import (
	"fmt"
	"math"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/profiles"
)

// Layout is the shape a differential flame graph is drawn on (issue 13).
type Layout int

const (
	// LayoutNew draws the new profile's shape: each frame as wide as its
	// new value, with room next to it for what went away under it.
	LayoutNew Layout = iota
	// LayoutBase draws the base profile's shape, with room for what was
	// added.
	LayoutBase
)

// String returns "new" or "base", as the --layout flag spells them.
func (l Layout) String() string {
	if l == LayoutBase {
		return "base"
	}
	return "new"
}

// ParseLayout reads "new" (or "") and "base".
func ParseLayout(s string) (Layout, error) {
	switch s {
	case "", "new":
		return LayoutNew, nil
	case "base":
		return LayoutBase, nil
	}
	return 0, fmt.Errorf("unknown layout %q: new or base", s)
}

// Diff returns a differential flame graph of two profiles: the union of
// their trees, every frame with its base and new values, the base scaled to
// the new profile's total so that shares compare.
//
// Frames that exist in one profile only are drawn too, so that comparing
// two variants whose code paths differ by design shows what went away
// (issue 13: mutex against sum256 was all red, the vanished lock frames
// visible only in the legend). The graph has the shape of Options.Layout's
// side; a frame that exists only on the other side is drawn at its width
// there, and every ancestor is widened to hold it. Frames only in the base
// are hatched.
//
// Colour is evidence, not change: each frame's change in share is tested
// against its sampling noise (stats.go), with false-discovery control
// across frames. Significantly larger shares are red, smaller ones blue,
// the rest grey; the tooltip gives the change with its 95% interval, and the
// legend each category's change with its interval.
func Diff(basep, newp *profile.Profile, opts Options) (*Tree, error) {
	return DiffSource(sourceOf(basep), sourceOf(newp), opts)
}

// DiffSource is Diff of two Sources (see ReadSource).
func DiffSource(base, newp *Source, opts Options) (*Tree, error) {
	opts.defaults()
	bi, err := base.sampleIndex(opts.SampleType)
	if err != nil {
		return nil, fmt.Errorf("base profile: %v", err)
	}
	ni, err := newp.sampleIndex(opts.SampleType)
	if err != nil {
		return nil, fmt.Errorf("new profile: %v", err)
	}
	if bt, nt := base.sampleTypes[bi], newp.sampleTypes[ni]; bt.Type != nt.Type || bt.Unit != nt.Unit {
		return nil, fmt.Errorf("cannot compare %s (%s) with %s (%s); choose a common --sample-type", bt.Type, bt.Unit, nt.Type, nt.Unit)
	}
	in := newInterner()
	bobs, bmodel := observations(base, bi)
	nobs, nmodel := observations(newp, ni)
	bs := collect(in, base, bi, bobs)
	ns := collect(in, newp, ni, nobs)
	t := build(opts, in, ranks(in.names), ns, bs)
	t.scale = 1
	if bt, nt := t.BaseTotal(), t.Total(); bt > 0 && nt > 0 {
		t.scale = float64(nt) / float64(bt)
	}
	t.layout()
	t.test(bmodel, nmodel)
	return t, nil
}

// BaseTotal returns the base profile's total, unscaled (0 if t is not a
// diff).
func (t *Tree) BaseTotal() int64 {
	if !t.diff {
		return 0
	}
	return t.base[0]
}

// scaledBase returns node i's base value in the new profile's units.
// Truncating keeps children within their parent (the sum of truncations is
// at most the truncation of the sum).
func (t *Tree) scaledBase(i int32) int64 {
	return int64(float64(t.base[i]) * t.scale)
}

// layout computes every frame's drawn width: its value on the layout's
// side, plus the width of what exists only on the other side below it. A
// frame that exists only on the other side is as wide as it is there.
// Children then always fit inside their parent: a child adds to its
// parent's width exactly what it adds beyond its own value.
func (t *Tree) layout() {
	prim := func(i int32) int64 { return t.value[i] }
	sec := t.scaledBase
	if t.opts.Layout == LayoutBase {
		prim, sec = t.scaledBase, func(i int32) int64 { return t.value[i] }
	}
	n := int32(len(t.name))
	w := make([]int64, n)
	// Reverse pre-order: every node's children are done before it.
	for i := n - 1; i >= 0; i-- {
		p := prim(i)
		if p == 0 && i != 0 {
			w[i] = sec(i)
			continue
		}
		for c := i + 1; c < t.end[i]; c = t.end[c] {
			p += w[c] - prim(c)
		}
		w[i] = p
	}
	t.width = w
}

// drawn returns the per-node widths the graph is laid out with.
func (t *Tree) drawn() []int64 {
	if t.diff {
		return t.width
	}
	return t.value
}

// Colours of a diff. Grey is "within sampling noise": the eye should not
// stop there.
const (
	diffGrey = "#dedede"
	diffRed  = "#d7301f"
	diffBlue = "#2166ac"
)

// diffColor is grey unless the frame's change is significant (sig ±1),
// then red for a larger share and blue for a smaller one, shading with the
// change relative to the larger of the two values (+100%, a frame only in
// new, is full red) from a floor that keeps a small significant change
// visible.
func diffColor(v, base int64, sig int8) string {
	if sig == 0 {
		return diffGrey
	}
	d := math.Abs(change(v, base))
	f := 0.35 + 0.65*d
	if sig > 0 {
		return mix(diffGrey, diffRed, f)
	}
	return mix(diffGrey, diffBlue, f)
}

// change returns (v-base)/max(v,base) in [-1, 1].
func change(v, base int64) float64 {
	m := max(v, base)
	if m <= 0 {
		return 0
	}
	return float64(v-base) / float64(m)
}

// side says which profiles a frame exists in.
func (t *Tree) side(i int32) string {
	switch {
	case t.base[i] == 0:
		return "only in new"
	case t.value[i] == 0:
		return "only in base"
	}
	return ""
}

// diffText describes node i's change for a tooltip: both values, the
// change in share with its interval, and whether it is beyond the noise.
func (t *Tree) diffText(i int32) string {
	total, btotal := t.Total(), t.BaseTotal()
	share := func(v, of int64) float64 {
		if of <= 0 {
			return 0
		}
		return 100 * float64(v) / float64(of)
	}
	s := fmt.Sprintf("new %s (%.2f%%), base %s (%.2f%%)", formatValue(t.value[i], t.unit), share(t.value[i], total),
		formatValue(t.base[i], t.unit), share(t.base[i], btotal))
	if where := t.side(i); where != "" {
		s += ", " + where
	}
	st := t.stat
	if i == 0 || st == nil || !st.ok {
		return s
	}
	d, h := st.frameDelta(t, i)
	s += fmt.Sprintf("\n%+.2f pt [%+.2f, %+.2f] (95%%): ", 100*d, 100*(d-h), 100*(d+h))
	switch {
	case st.sig[i] > 0:
		s += "larger share, significant"
	case st.sig[i] < 0:
		s += "smaller share, significant"
	case st.p[i] > 1:
		s += "too few samples to tell"
	default:
		s += fmt.Sprintf("within sampling noise (not significant at 5%% false discoveries over %s)", plural(st.tested, "frame"))
	}
	return s
}

// diffKey explains a diff's colours in one line.
func (t *Tree) diffKey() string {
	st := t.stat
	if st == nil || !st.ok {
		return "one of the profiles has no samples: nothing to test; hatched frames are only in the base"
	}
	return fmt.Sprintf("red: larger share, blue: smaller, beyond sampling noise (%s tested, 5%% false discoveries; n %s base, %s new); grey: within noise; hatched: only in base",
		plural(st.tested, "frame"), fmtN(st.nBase), fmtN(st.n))
}

// catText is a diff's legend entry for category c and its tooltip.
func (t *Tree) catText(c int) (text, tip string) {
	cat := profiles.Categories[c]
	st := t.stat
	share := func(v, of int64) float64 {
		if of <= 0 {
			return 0
		}
		return 100 * float64(v) / float64(of)
	}
	ns, bs := share(t.byCat[c], t.Total()), share(t.baseByCat[c], t.BaseTotal())
	if st == nil || !st.ok {
		return fmt.Sprintf("%s %+.1f pt", cat, ns-bs), fmt.Sprintf("%s: %.2f%% of new, %.2f%% of base", cat, ns, bs)
	}
	if t.byCat[c] == 0 && t.baseByCat[c] == 0 {
		return fmt.Sprintf("%s 0", cat), fmt.Sprintf("%s: in neither profile", cat)
	}
	d, h := st.catDelta(t, c)
	verdict := fmt.Sprintf("within sampling noise (not significant at 5%% false discoveries over the %d categories)", numCategories)
	mark := " ~"
	if st.catSig[c] != 0 {
		verdict, mark = "significant", ""
	}
	text = fmt.Sprintf("%s %+.1f±%.1f pt%s", cat, 100*d, 100*h, mark)
	tip = fmt.Sprintf("%s: %.2f%% of new, %.2f%% of base: %+.2f percentage points [%+.2f, %+.2f] (95%%), %s",
		cat, ns, bs, 100*d, 100*(d-h), 100*(d+h), verdict)
	return text, tip
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// fmtN renders an effective number of observations.
func fmtN(n float64) string {
	switch {
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", n/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.0fk", n/1e3)
	}
	return fmt.Sprintf("%.0f", n)
}
