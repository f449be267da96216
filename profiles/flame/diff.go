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
	ids := make(map[string]int32)
	bb := newBuilder(opts, ids, nil)
	bb.fill(basep, bi)
	base := bb.t
	base.classify()

	nb := newBuilder(opts, ids, base.names)
	nb.fill(newp, ni)
	t := nb.t
	t.classify()
	t.diff = true
	t.baseTotal = base.Total()
	t.baseByCat = base.byCat

	// Walk both trees together: a new node's twin in the base tree is the
	// base child of its parent's twin with the same name.
	scale := 0.0
	if base.Total() > 0 {
		scale = float64(t.Total()) / float64(base.Total())
	}
	twin := make([]int32, len(t.nodes))
	twin[0] = 0
	t.nodes[0].base = int64(math.Round(float64(base.nodes[0].value) * scale))
	for i := 1; i < len(t.nodes); i++ {
		n := &t.nodes[i]
		twin[i] = -1
		if pt := twin[n.parent]; pt >= 0 {
			key := uint64(uint32(pt))<<32 | uint64(uint32(n.name))
			if b, ok := bb.children[key]; ok {
				twin[i] = b
				n.base = int64(math.Round(float64(base.nodes[b].value) * scale))
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
