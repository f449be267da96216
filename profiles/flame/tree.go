// Package flame builds flame graphs from pprof profiles and writes them as
// static SVG, as a self-contained interactive HTML page (a canvas drawn from
// compact JSON), and as differential graphs of two profiles. Frames are
// coloured by perflab's categories (package profiles), in the palette used
// everywhere in perflab.
//
// The tree is built once per profile with interned names and a flat node
// array, so a profile of 100,000 unique stacks is laid out in well under a
// second; frames narrower than the minimum width are pruned before output,
// which keeps the SVG and the page small however large the profile.
package flame

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/profiles"
)

// Options control how a flame graph is built and drawn. The zero value is
// usable: the default sample type, the built-in rules, a 1200-pixel SVG.
type Options struct {
	// Title is shown at the top; empty means "Flame graph".
	Title string
	// SampleType names the sample type to draw ("cpu", "samples", "time",
	// "delay", "contentions", "alloc_space", ...); empty means the
	// profile's default, as in `go tool pprof`.
	SampleType string
	// Rules classify frames; nil means profiles.DefaultRules().
	Rules *profiles.Rules
	// Width is the SVG width in pixels; 0 means 1200.
	Width int
	// MinWidth prunes frames narrower than this many pixels of the full
	// width from the SVG (0 means 0.1, flamegraph.pl's default).
	MinWidth float64
	// MaxNodes caps the frames sent to the interactive page (0 means
	// 60,000): the narrowest are pruned first, so the page stays small and
	// fast whatever the profile.
	MaxNodes int
	// MaxOutput bounds the bytes one SVG, HTML page, JSON or folded
	// output of the tree may take (0 means DefaultMaxOutput): a writer
	// refuses, with ErrOutputBudget, before writing if it can tell, and
	// stops at the limit if not.
	MaxOutput int64
	// Layout is the shape a diff is drawn on: the new profile's (the
	// default) or the base's.
	Layout Layout
	// DrawnOnly keeps in a tree (not a diff's) only the frames that its
	// SVG and its JSON or HTML page can draw, with the others counted:
	// those outputs are the same, byte for byte, and a profile of a million
	// unique stacks, whose tree has some 25 million frames of which a few
	// thousand are drawn, builds in a fraction of the time and memory
	// (issue 26). Functions and the tree's WriteFolded need every frame:
	// they panic on such a tree.
	DrawnOnly bool
}

func (o *Options) defaults() {
	if o.Title == "" {
		o.Title = "Flame graph"
	}
	if o.Rules == nil {
		o.Rules = profiles.DefaultRules()
	}
	if o.Width <= 0 {
		o.Width = 1200
	}
	if o.MinWidth <= 0 {
		o.MinWidth = 0.1
	}
	if o.MaxNodes <= 0 {
		o.MaxNodes = 60000
	}
}

// Tree is a flame graph: a call tree from the root (a synthetic "all" node)
// to the leaves, with a value and a category per frame. A differential tree
// (Diff) is the union of two profiles' trees: every frame carries the value
// it has in each, zero where it exists on one side only.
//
// Nodes are stored in pre-order with every node's children sorted by name,
// as struct-of-arrays: node i's subtree is the index range [i, end[i]), and
// its first child, if any, is i+1. Laying out a flame graph is then one
// sequential pass, with no pointers to chase.
type Tree struct {
	opts  Options
	names []string // interned function names

	name  []int32 // per node; -1 for the root
	end   []int32
	value []int64 // per node; for a diff, the new profile's value
	class []profiles.Class

	maxDepth int
	// For a tree built with Options.DrawnOnly: the frames it would have
	// whole (Len), and the histogram of their values (for jsonBuckets).
	nodes      int
	hist       *valueHist
	sampleType string // e.g. "cpu"
	unit       string // e.g. "nanoseconds"
	byCat      [numCategories]int64

	// Diff state, set by Diff.
	diff      bool
	base      []int64 // per node, the base profile's value, unscaled
	baseByCat [numCategories]int64
	// scale turns base values into the new profile's units: base frames
	// are compared and drawn at the same total (a profile twice as long
	// is not "slower" everywhere).
	scale float64
	// width is each frame's drawn width in the chosen layout (diff.go).
	width []int64
	// sq and baseSq are, per node, the sum over the stacks through it of
	// value²/observations (stats.go); catSq and baseCatSq per category.
	sq, baseSq       []float64
	catSq, baseCatSq [numCategories]float64
	stat             *diffStats
}

// interner gives function names small integer ids, shared by the trees of
// a diff so that their frames can be matched.
type interner struct {
	names []string
	ids   map[string]int32
}

func newInterner() *interner {
	return &interner{ids: make(map[string]int32)}
}

func (in *interner) intern(s string) int32 {
	if id, ok := in.ids[s]; ok {
		return id
	}
	id := int32(len(in.names))
	in.names = append(in.names, s)
	in.ids[s] = id
	return id
}

// stacks holds a profile's samples as name sequences, root first, in one
// flat buffer.
type stacks struct {
	buf        []int32
	start      []int32 // per stack; stack k is buf[start[k]:start[k+1]]
	value      []int64
	sq         []float64 // per stack, value²/observations; diffs only
	sampleType string
	unit       string
}

// collect reads src's stacks of sample type idx. With obs (diffs), it
// also records each stack's value²/observations for the significance test.
func collect(in *interner, src *Source, idx int, obs observer) *stacks {
	st := &stacks{sampleType: src.sampleTypes[idx].Type, unit: src.sampleTypes[idx].Unit}
	ids := make([]int32, len(src.names))
	for i, name := range src.names {
		ids[i] = in.intern(name)
	}
	// Size the buffers exactly: appending doubled the peak for large
	// profiles.
	n, frames := 0, 0
	for k := range src.Samples() {
		// Negative values are no time and no count to draw (a frame of
		// one would be wider than the plot, the total negative); they are
		// left out, as profiles.Breakdown leaves them out.
		if src.value(k, idx) <= 0 {
			continue
		}
		n++
		for _, l := range src.locs[src.start[k]:src.start[k+1]] {
			frames += int(src.locStart[l+1] - src.locStart[l])
		}
	}
	st.buf = make([]int32, 0, frames)
	st.start = make([]int32, 0, n+1)
	st.value = make([]int64, 0, n)
	if obs != nil {
		st.sq = make([]float64, 0, n)
	}
	for k := range src.Samples() {
		v := src.value(k, idx)
		if v <= 0 {
			continue
		}
		st.start = append(st.start, int32(len(st.buf)))
		locs := src.locs[src.start[k]:src.start[k+1]]
		for i := len(locs) - 1; i >= 0; i-- {
			l := locs[i]
			for _, name := range src.locNames[src.locStart[l]:src.locStart[l+1]] {
				st.buf = append(st.buf, ids[name])
			}
		}
		st.value = append(st.value, v)
		if obs != nil {
			st.sq = append(st.sq, float64(v)*float64(v)/obs(k, v))
		}
	}
	st.start = append(st.start, int32(len(st.buf)))
	return st
}

// concat returns the stacks of a followed by those of b.
func concat(a, b *stacks) *stacks {
	off := int32(len(a.buf))
	st := &stacks{sampleType: a.sampleType, unit: a.unit}
	st.buf = append(append(make([]int32, 0, len(a.buf)+len(b.buf)), a.buf...), b.buf...)
	st.start = append(make([]int32, 0, len(a.start)+len(b.start)-1), a.start[:len(a.start)-1]...)
	for _, x := range b.start {
		st.start = append(st.start, x+off)
	}
	st.value = append(append([]int64(nil), a.value...), b.value...)
	st.sq = append(append([]float64(nil), a.sq...), b.sq...)
	return st
}

// build makes the tree of ns, or with bs the union tree of ns (new) and
// bs (base). Stacks are sorted by their names' ranks in alphabetical order,
// so each new stack shares its longest common prefix with the one before:
// the tree comes out in pre-order with sorted children, built by
// appending, with no map lookups per frame. This is what makes a
// 100,000-stack profile fast (a map from (parent, name) to child spent most
// of its time on cache misses). Both profiles' stacks sort together, so a
// frame of the union is one node whichever sides it exists on.
func build(opts Options, in *interner, rank []int32, ns, bs *stacks) *Tree {
	t := &Tree{opts: opts, names: in.names, sampleType: ns.sampleType, unit: ns.unit}
	diff := bs != nil
	nNew := len(ns.value)
	st := ns
	if diff {
		st = concat(ns, bs) // stacks from nNew on are the base's
	}
	n := len(st.value)
	// Translate to ranks in place of names: comparisons are then integer
	// comparisons.
	byRank := make([]int32, len(rank))
	for id, r := range rank {
		byRank[r] = int32(id)
	}
	seq := func(k int32) []int32 { return st.buf[st.start[k]:st.start[k+1]] }
	for i, id := range st.buf {
		st.buf[i] = rank[id]
	}
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	lcps := sortStacks(order, seq)

	// Count the nodes first (each stack adds its frames past the prefix it
	// shares with the one before) and allocate them once: growing the
	// arrays by appending took twice the memory at the peak.
	est := 1
	for o, k := range order {
		est += len(seq(k)) - int(lcps[o])
	}
	// keep is the value below which a frame's subtree is left out, the
	// frame itself kept as a stub so that the writers count it as pruned
	// as they would in the whole tree.
	keep := int64(0)
	if opts.DrawnOnly && !diff {
		keep = t.drawnKeep(order, lcps, seq, st.value, est-1)
		est = 1
	}
	t.name = make([]int32, 1, est)
	t.end = make([]int32, 1, est)
	t.value = make([]int64, 1, est)
	t.class = make([]profiles.Class, 1, est)
	if diff {
		t.diff = true
		t.base = make([]int64, 1, est)
		t.sq = make([]float64, 1, est)
		t.baseSq = make([]float64, 1, est)
	}
	t.name[0] = -1
	r := opts.Rules
	frame := make([]profiles.Class, len(in.names))
	known := make([]bool, len(in.names))
	path := []int32{0} // path[d] is the node at depth d of the previous stack
	for o, k := range order {
		s, v, lcp := seq(k), st.value[k], int(lcps[o])
		// Close the subtrees the new stack leaves.
		for d := len(path) - 1; d > lcp; d-- {
			t.close(path[d], keep)
		}
		path = path[:lcp+1]
		for _, rk := range s[lcp:] {
			id := byRank[rk]
			if !known[id] {
				frame[id] = r.Frame(in.names[id])
				known[id] = true
			}
			node := int32(len(t.name))
			t.name = append(t.name, id)
			t.end = append(t.end, 0)
			t.value = append(t.value, 0)
			t.class = append(t.class, frame[id].Under(t.class[path[len(path)-1]]))
			if diff {
				t.base = append(t.base, 0)
				t.sq = append(t.sq, 0)
				t.baseSq = append(t.baseSq, 0)
			}
			path = append(path, node)
		}
		isBase := int(k) >= nNew
		vals, byCat := t.value, &t.byCat
		if isBase {
			vals, byCat = t.base, &t.baseByCat
		}
		for _, node := range path {
			vals[node] = profiles.AddSaturating(vals[node], v)
		}
		if len(s) > t.maxDepth {
			t.maxDepth = len(s)
		}
		// A sample's value is the self value of its leaf.
		cat := profiles.Other
		if leaf := path[len(path)-1]; leaf != 0 {
			cat = t.class[leaf].Category()
		}
		byCat[cat.Index()] = profiles.AddSaturating(byCat[cat.Index()], v)
		if diff {
			q := st.sq[k]
			sqs, catSq := t.sq, &t.catSq
			if isBase {
				sqs, catSq = t.baseSq, &t.baseCatSq
			}
			for _, node := range path {
				sqs[node] += q
			}
			catSq[cat.Index()] += q
		}
	}
	for d := len(path) - 1; d >= 0; d-- {
		t.close(path[d], keep)
	}
	// Classified: a kept tree must not keep the compiled rules alive
	// (package web charges them to its budget apart, and drops them).
	t.opts.Rules = nil
	return t
}

// close ends node's subtree at the nodes appended so far, leaving its
// descendants out if its value is under keep: they are the last ones
// appended, and never larger than it.
func (t *Tree) close(node int32, keep int64) {
	if node != 0 && t.value[node] < keep {
		n := node + 1
		t.name, t.end, t.value, t.class = t.name[:n], t.end[:n], t.value[:n], t.class[:n]
	}
	t.end[node] = int32(len(t.name))
}

// drawnKeep returns the value under which no writer draws a frame (the
// lower of the SVG's and the JSON's), for Options.DrawnOnly, and records
// what the writers need of the whole tree of nodes frames: their number
// and the histogram of their values. It walks the stacks in their sorted
// order as build does, keeping the values on the path of the previous
// stack: a frame's value is final when a stack leaves it.
func (t *Tree) drawnKeep(order, lcps []int32, seq func(int32) []int32, value []int64, nodes int) int64 {
	t.nodes, t.hist = nodes, new(valueHist)
	var total int64
	var path []int64 // the values of the previous stack's frames, root excluded
	for o, k := range order {
		s, v, lcp := seq(k), value[k], int(lcps[o])
		for _, x := range path[lcp:] {
			t.hist[bucketOf(x)]++
		}
		path = path[:lcp]
		for range s[lcp:] {
			path = append(path, 0)
		}
		for d := range path {
			path[d] = profiles.AddSaturating(path[d], v)
		}
		total = profiles.AddSaturating(total, v)
	}
	for _, x := range path {
		t.hist[bucketOf(x)]++
	}
	keep := svgMinValue(t.opts, total) + 1
	if t.nodes > t.opts.MaxNodes {
		_, below := t.hist.thresholds(t.opts.MaxNodes)
		keep = min(keep, below)
	} else {
		keep = 0
	}
	return keep
}

// ranks returns each interned name's position in alphabetical order.
func ranks(names []string) []int32 {
	ids := make([]int32, len(names))
	for i := range ids {
		ids[i] = int32(i)
	}
	slices.SortFunc(ids, func(a, b int32) int { return strings.Compare(names[a], names[b]) })
	rank := make([]int32, len(names))
	for r, id := range ids {
		rank[id] = int32(r)
	}
	return rank
}

// Build returns the flame graph of p.
func Build(p *profile.Profile, opts Options) (*Tree, error) {
	return BuildSource(sourceOf(p), opts)
}

// BuildSource returns the flame graph of src (see ReadSource).
func BuildSource(src *Source, opts Options) (*Tree, error) {
	opts.defaults()
	idx, err := src.sampleIndex(opts.SampleType)
	if err != nil {
		return nil, err
	}
	in := newInterner()
	st := collect(in, src, idx, nil)
	return build(opts, in, ranks(in.names), st, nil), nil
}

// Total returns the root's value: the sum of all samples drawn.
func (t *Tree) Total() int64 { return t.value[0] }

// Len returns the number of frames in the tree (before pruning).
func (t *Tree) Len() int {
	if t.hist != nil {
		return t.nodes
	}
	return len(t.name) - 1
}

// mustBeWhole panics if t was built with Options.DrawnOnly: what needs
// every frame cannot be computed from it.
func (t *Tree) mustBeWhole(what string) {
	if t.hist != nil {
		panic("flame: " + what + " of a tree built with Options.DrawnOnly, which keeps only the frames drawn")
	}
}

// SampleType returns the drawn sample type and unit, e.g. "cpu",
// "nanoseconds".
func (t *Tree) SampleType() (typ, unit string) { return t.sampleType, t.unit }

// Share returns each category's share of the total, by self value: the
// same split as profiles.Breakdown.
func (t *Tree) Share() map[profiles.Category]float64 {
	out := make(map[profiles.Category]float64, len(profiles.Categories))
	for i, c := range profiles.Categories {
		out[c] = 0
		if t.Total() != 0 {
			out[c] = float64(t.byCat[i]) / float64(t.Total())
		}
	}
	return out
}

// nodeName returns node i's function name ("all" for the root).
func (t *Tree) nodeName(i int32) string {
	if t.name[i] < 0 {
		return "all"
	}
	return t.names[t.name[i]]
}

// category returns node i's category (Other for the root).
func (t *Tree) category(i int32) profiles.Category {
	if i == 0 {
		return profiles.Other
	}
	return t.class[i].Category()
}

// formatValue renders v in the tree's unit for labels and tooltips.
func formatValue(v int64, unit string) string {
	f := float64(v)
	switch unit {
	case "nanoseconds":
		switch {
		case v >= 1e9:
			return fmt.Sprintf("%.2f s", f/1e9)
		case v >= 1e6:
			return fmt.Sprintf("%.2f ms", f/1e6)
		case v >= 1e3:
			return fmt.Sprintf("%.2f µs", f/1e3)
		}
		return fmt.Sprintf("%d ns", v)
	case "bytes":
		switch {
		case v >= 1<<30:
			return fmt.Sprintf("%.2f GiB", f/(1<<30))
		case v >= 1<<20:
			return fmt.Sprintf("%.2f MiB", f/(1<<20))
		case v >= 1<<10:
			return fmt.Sprintf("%.2f KiB", f/(1<<10))
		}
		return fmt.Sprintf("%d B", v)
	case "count", "":
		return fmt.Sprintf("%d", v)
	}
	return fmt.Sprintf("%d %s", v, unit)
}

// numCategories sizes the per-category arrays; init checks it against
// profiles.Categories so adding a category cannot silently overflow them.
const numCategories = 7

func init() {
	if len(profiles.Categories) != numCategories {
		panic("flame: numCategories must match profiles.Categories")
	}
}
