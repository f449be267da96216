package flame

import (
	"fmt"
	"math"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/profiles"
)

// Diff returns a differential flame graph: the shape of newp, each frame
// coloured by how its value changed from basep after scaling basep to the
// same total (so a profile twice as long is not "slower" everywhere). Red
// frames take a larger share in newp, blue ones a smaller share; the legend
// shows each category's change in percentage points. Frames that exist only
// in basep are not drawn: they have no place in newp's shape.
func Diff(basep, newp *profile.Profile, opts Options) (*Tree, error) {
	opts.defaults()
	bi, err := sampleIndex(basep, opts.SampleType, "base")
	if err != nil {
		return nil, err
	}
	ni, err := sampleIndex(newp, opts.SampleType, "new")
	if err != nil {
		return nil, err
	}
	if bt, nt := basep.SampleType[bi], newp.SampleType[ni]; bt.Type != nt.Type || bt.Unit != nt.Unit {
		return nil, fmt.Errorf("cannot compare %s (%s) with %s (%s); choose a common --sample-type", bt.Type, bt.Unit, nt.Type, nt.Unit)
	}
	in := newInterner()
	bs := collect(in, basep, bi)
	ns := collect(in, newp, ni)
	rank := ranks(in.names)
	base := build(opts, in, rank, bs)
	t := build(opts, in, rank, ns)
	t.diff = true
	t.baseTotal = base.Total()
	t.baseByCat = base.byCat
	t.base = make([]int64, len(t.name))
	scale := 0.0
	if base.Total() > 0 {
		scale = float64(t.Total()) / float64(base.Total())
	}
	// Walk both trees together: children are sorted by name rank in both,
	// so a node's twin among the base node's children is found by merging.
	type pair struct{ i, j int32 }
	stack := []pair{{0, 0}}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		t.base[p.i] = int64(math.Round(float64(base.value[p.j]) * scale))
		ci, cj := p.i+1, p.j+1
		for ci < t.end[p.i] && cj < base.end[p.j] {
			ri, rj := rank[t.name[ci]], rank[base.name[cj]]
			switch {
			case ri == rj:
				stack = append(stack, pair{ci, cj})
				ci, cj = t.end[ci], base.end[cj]
			case ri < rj:
				ci = t.end[ci]
			default:
				cj = base.end[cj]
			}
		}
	}
	return t, nil
}

func sampleIndex(p *profile.Profile, typ, which string) (int, error) {
	i, err := profiles.SampleIndex(p, typ)
	if err != nil {
		return 0, fmt.Errorf("%s profile: %v", which, err)
	}
	return i, nil
}

// diffColor is light grey for no change, shading to red as a frame grows and to
// blue as it shrinks, by its change relative to the larger of the two
// values: +100% (new frame) is full red, -50% is half blue.
func diffColor(v, base int64) string {
	d := change(v, base)
	if d >= 0 {
		return mix("#e4e4e4", "#d7301f", d)
	}
	return mix("#e4e4e4", "#2166ac", -d)
}

// change returns (v-base)/max(v,base) in [-1, 1].
func change(v, base int64) float64 {
	m := max(v, base)
	if m <= 0 {
		return 0
	}
	return float64(v-base) / float64(m)
}

func changeText(v, base int64) string {
	if base == 0 {
		return "new in this profile"
	}
	return fmt.Sprintf("%+.1f%% against base", 100*float64(v-base)/float64(base))
}
