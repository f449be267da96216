package flame

import (
	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/profiles"
)

// Function is one function's part of a profile, for top-functions tables.
type Function struct {
	Name string
	// Self is the value of the stacks the function is the leaf of; Total
	// of the stacks it is on, counted once however often it recurses.
	Self, Total int64
	// Category is that of the first frame (in the tree's order) where the
	// function has self value, "" if it has none: its callers can change
	// it (runtime.lock2 under the GC is gc), so this is a hint, not a rule.
	Category profiles.Category
}

// Functions returns every function of the tree with its self and total
// value, in no particular order: what a top-functions table needs,
// without the profile.Profile it would otherwise be computed from.
func (t *Tree) Functions() []Function {
	t.mustBeWhole("Functions")
	idx := make([]int32, len(t.names)) // name id → index in out, +1
	var out []Function
	onPath := make([]int32, len(t.names))
	path := make([]int32, 0, t.maxDepth+1) // node ids
	for i := int32(1); i < int32(len(t.name)); i++ {
		for len(path) > 0 && t.end[path[len(path)-1]] <= i {
			onPath[t.name[path[len(path)-1]]]--
			path = path[:len(path)-1]
		}
		id := t.name[i]
		if idx[id] == 0 {
			out = append(out, Function{Name: t.names[id]})
			idx[id] = int32(len(out))
		}
		f := &out[idx[id]-1]
		self := t.value[i]
		for c := i + 1; c < t.end[i]; c = t.end[c] {
			self -= t.value[c]
		}
		if self > 0 && f.Self == 0 {
			f.Category = t.category(i)
		}
		f.Self += self
		if onPath[id] == 0 {
			f.Total += t.value[i]
		}
		onPath[id]++
		path = append(path, i)
	}
	return out
}

// ByCategory returns each category's value, by self value: the split of
// profiles.Breakdown.
func (t *Tree) ByCategory() map[profiles.Category]int64 {
	out := make(map[profiles.Category]int64, len(profiles.Categories))
	for i, c := range profiles.Categories {
		out[c] = t.byCat[i]
	}
	return out
}

// NewSource reduces a parsed profile to a Source, for callers that have a
// profile.Profile already (one fetched from Pyroscope).
func NewSource(p *profile.Profile) *Source { return sourceOf(p) }
