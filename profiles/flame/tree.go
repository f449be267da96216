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
	"sort"

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

// node is one frame of the tree. Children are a linked list (first, next)
// so that a node costs 40 bytes and no slice header.
type node struct {
	name        int32 // index in Tree.names
	parent      int32
	first, next int32 // first child, next sibling; -1 = none
	value       int64 // total (self + children)
	base        int64 // value in the base profile of a diff, scaled
	class       profiles.Class
}

// Tree is a flame graph: a call tree from the root (a synthetic "all" node)
// to the leaves, with a value and a category per frame.
type Tree struct {
	opts       Options
	names      []string
	nodes      []node // nodes[0] is the root
	sampleType string // e.g. "cpu"
	unit       string // e.g. "nanoseconds"
	// diff state: set by Diff.
	diff      bool
	baseTotal int64 // unscaled
	byCat     [6]int64
	baseByCat [6]int64
}

// treeBuilder interns names and finds children with one map lookup.
type treeBuilder struct {
	t        *Tree
	nameIDs  map[string]int32
	children map[uint64]int32 // parent<<32 | name → node
	locNames map[*profile.Location][]int32
	locClass map[*profile.Location]profiles.Class
}

func newBuilder(opts Options, nameIDs map[string]int32, names []string) *treeBuilder {
	t := &Tree{opts: opts, names: names}
	t.nodes = append(t.nodes, node{name: -1, parent: -1, first: -1, next: -1})
	return &treeBuilder{t: t, nameIDs: nameIDs, children: make(map[uint64]int32), locNames: make(map[*profile.Location][]int32)}
}

func (b *treeBuilder) intern(s string) int32 {
	if id, ok := b.nameIDs[s]; ok {
		return id
	}
	id := int32(len(b.t.names))
	b.t.names = append(b.t.names, s)
	b.nameIDs[s] = id
	return id
}

// names returns the interned names of loc, root-most (caller) first.
func (b *treeBuilder) namesOf(loc *profile.Location) []int32 {
	if ids, ok := b.locNames[loc]; ok {
		return ids
	}
	fn := profiles.FrameNames(loc) // leaf first
	ids := make([]int32, len(fn))
	for i, n := range fn {
		ids[len(fn)-1-i] = b.intern(n)
	}
	b.locNames[loc] = ids
	return ids
}

func (b *treeBuilder) child(parent int32, name int32) int32 {
	key := uint64(uint32(parent))<<32 | uint64(uint32(name))
	if id, ok := b.children[key]; ok {
		return id
	}
	t := b.t
	id := int32(len(t.nodes))
	p := &t.nodes[parent]
	t.nodes = append(t.nodes, node{name: name, parent: parent, first: -1, next: p.first})
	t.nodes[parent].first = id
	b.children[key] = id
	return id
}

// add adds one sample's value along its stack.
func (b *treeBuilder) add(s *profile.Sample, v int64) {
	t := b.t
	cur := int32(0)
	t.nodes[0].value += v
	for i := len(s.Location) - 1; i >= 0; i-- {
		for _, name := range b.namesOf(s.Location[i]) {
			cur = b.child(cur, name)
			t.nodes[cur].value += v
		}
	}
}

// Build returns the flame graph of p.
func Build(p *profile.Profile, opts Options) (*Tree, error) {
	opts.defaults()
	idx, err := profiles.SampleIndex(p, opts.SampleType)
	if err != nil {
		return nil, err
	}
	b := newBuilder(opts, make(map[string]int32), nil)
	b.fill(p, idx)
	t := b.t
	t.classify()
	return t, nil
}

func (b *treeBuilder) fill(p *profile.Profile, idx int) {
	t := b.t
	t.sampleType = p.SampleType[idx].Type
	t.unit = p.SampleType[idx].Unit
	for _, s := range p.Sample {
		if idx < len(s.Value) && s.Value[idx] != 0 {
			b.add(s, s.Value[idx])
		}
	}
}

// classify gives every node its class from the root down (nodes are
// created after their parents, so index order is a valid order) and adds up
// each category's self value.
func (t *Tree) classify() {
	r := t.opts.Rules
	frame := make([]profiles.Class, len(t.names))
	seen := make([]bool, len(t.names))
	t.byCat = [6]int64{}
	for i := 1; i < len(t.nodes); i++ {
		n := &t.nodes[i]
		if !seen[n.name] {
			frame[n.name] = r.Frame(t.names[n.name])
			seen[n.name] = true
		}
		n.class = frame[n.name].Under(t.nodes[n.parent].class)
	}
	for i := range t.nodes {
		if self := t.self(int32(i)); self != 0 && i != 0 {
			t.byCat[t.nodes[i].class.Category().Index()] += self
		}
	}
	// Samples whose stack is empty count at the root, as other.
	if self := t.self(0); self != 0 {
		t.byCat[profiles.Other.Index()] += self
	}
}

func (t *Tree) self(i int32) int64 {
	v := t.nodes[i].value
	for c := t.nodes[i].first; c >= 0; c = t.nodes[c].next {
		v -= t.nodes[c].value
	}
	return v
}

// Total returns the root's value: the sum of all samples drawn.
func (t *Tree) Total() int64 { return t.nodes[0].value }

// Len returns the number of frames in the tree (before pruning).
func (t *Tree) Len() int { return len(t.nodes) - 1 }

// SampleType returns the drawn sample type and unit, e.g. "cpu",
// "nanoseconds".
func (t *Tree) SampleType() (typ, unit string) { return t.sampleType, t.unit }

// Share returns each category's share of the total, by self value: the
// same split as profiles.Breakdown, in profiles.Categories order.
func (t *Tree) Share() map[profiles.Category]float64 {
	out := make(map[profiles.Category]float64, len(profiles.Categories))
	for i, c := range profiles.Categories {
		if t.Total() != 0 {
			out[c] = float64(t.byCat[i]) / float64(t.Total())
		} else {
			out[c] = 0
		}
	}
	return out
}

// sortedChildren returns i's children ordered by name, the standard flame
// graph order (alphabetical, so the same stack is in the same place in two
// graphs).
func (t *Tree) sortedChildren(i int32, buf []int32) []int32 {
	buf = buf[:0]
	for c := t.nodes[i].first; c >= 0; c = t.nodes[c].next {
		buf = append(buf, c)
	}
	sort.Slice(buf, func(a, b int) bool { return t.names[t.nodes[buf[a]].name] < t.names[t.nodes[buf[b]].name] })
	return buf
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
