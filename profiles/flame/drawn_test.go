package flame

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/google/pprof/profile"
)

// TestDrawnOnlySameOutput draws profiles of many shapes with the whole
// tree and with Options.DrawnOnly: the SVG and the HTML page must be the
// same byte for byte (the frames left out are counted, their parents keep
// their values), while the DrawnOnly tree holds fewer frames when most are
// too narrow to draw.
func TestDrawnOnlySameOutput(t *testing.T) {
	unit := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}}}
	var locs []*profile.Location
	for i := range 200 {
		fn := &profile.Function{ID: uint64(i + 1), Name: fmt.Sprintf("pkg.f%d", i)}
		l := &profile.Location{ID: uint64(i + 1), Line: []profile.Line{{Function: fn}}}
		unit.Function, unit.Location, locs = append(unit.Function, fn), append(unit.Location, l), append(locs, l)
	}
	for i := range 200 * 200 {
		unit.Sample = append(unit.Sample, &profile.Sample{Value: []int64{1}, Location: []*profile.Location{locs[i%200], locs[i/200]}})
	}
	inlined := genProfile(3000, 5)
	for _, l := range inlined.Location[:100] { // a caller inlined in each of the first locations
		l.Line = append(l.Line, inlined.Location[len(inlined.Location)-1].Line[0])
	}
	tests := []struct {
		name   string
		p      *profile.Profile
		opts   Options
		pruned bool // DrawnOnly must hold fewer frames
	}{
		{"small, nothing pruned", fake(small), Options{}, false},
		{"generated 20k stacks", genProfile(20000, 1), Options{}, true},
		{"generated 20k stacks, cpu", genProfile(20000, 2), Options{SampleType: "cpu"}, true},
		{"generated, few nodes for the page", genProfile(5000, 3), Options{MaxNodes: 300}, true},
		{"generated, wide svg and fine width", genProfile(5000, 4), Options{Width: 5000, MinWidth: 0.01}, false}, // every frame is wide enough
		{"generated, narrow svg", genProfile(5000, 4), Options{Width: 21}, true},
		{"inlined frames", inlined, Options{MaxNodes: 2000}, true},
		{"unit values", unit, Options{MaxNodes: 1000}, false}, // the page keeps value 1 up to a depth
		{"deep stack", deepProfile("pkg.deep", 20000), Options{MaxNodes: 100}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			whole, err := Build(tc.p, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			o := tc.opts
			o.DrawnOnly = true
			drawn, err := Build(tc.p, o)
			if err != nil {
				t.Fatal(err)
			}
			if whole.Len() != drawn.Len() || whole.Total() != drawn.Total() || whole.Share()["work"] != drawn.Share()["work"] {
				t.Errorf("Len %d, total %d; DrawnOnly: %d, %d", whole.Len(), whole.Total(), drawn.Len(), drawn.Total())
			}
			if held := len(drawn.name) - 1; tc.pruned != (held < whole.Len()) {
				t.Errorf("DrawnOnly holds %d of %d frames; want fewer: %v", held, whole.Len(), tc.pruned)
			}
			for _, w := range []struct {
				what string
				fn   func(*Tree, *bytes.Buffer) error
			}{
				{"SVG", func(t *Tree, b *bytes.Buffer) error { return t.WriteSVG(b) }},
				{"HTML", func(t *Tree, b *bytes.Buffer) error { return t.WriteHTML(b) }},
			} {
				var a, b bytes.Buffer
				if err := w.fn(whole, &a); err != nil {
					t.Fatal(err)
				}
				if err := w.fn(drawn, &b); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(a.Bytes(), b.Bytes()) {
					i := 0
					for i < min(a.Len(), b.Len()) && a.Bytes()[i] == b.Bytes()[i] {
						i++
					}
					t.Errorf("%s differs at byte %d of %d/%d:\nwhole:     %.200s\nDrawnOnly: %.200s", w.what, i, a.Len(), b.Len(), a.Bytes()[i:], b.Bytes()[i:])
				}
			}
		})
	}
}

// TestDrawnOnlyNotWhole: what needs every frame refuses a DrawnOnly tree
// rather than answer from the frames it kept.
func TestDrawnOnlyNotWhole(t *testing.T) {
	tr, err := Build(genProfile(2000, 1), Options{DrawnOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	for name, fn := range map[string]func(){
		"Functions":   func() { tr.Functions() },
		"WriteFolded": func() { tr.WriteFolded(&bytes.Buffer{}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s of a DrawnOnly tree did not panic", name)
				}
			}()
			fn()
		}()
	}
}
