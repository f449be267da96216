package flame

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/perflab/perflab/profiles"
)

var realProfiles = []string{"wall", "cpu", "mutex", "block", "allocs"}

func readReal(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "real", name+".pb.gz"))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestRealSampleTypes draws every sample type of the real Go 1.26
// profiles (fgprof wall-clock, CPU, mutex, block, allocs) as SVG and HTML.
func TestRealSampleTypes(t *testing.T) {
	rules, _ := profiles.DefaultRules().WithWork(`^crypto/`)
	for _, name := range realProfiles {
		p, err := profiles.Read(bytes.NewReader(readReal(t, name)))
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range p.SampleType {
			t.Run(name+"/"+st.Type, func(t *testing.T) {
				tr, err := Build(p, Options{SampleType: st.Type, Rules: rules, Title: name})
				if err != nil {
					t.Fatal(err)
				}
				var svg, html bytes.Buffer
				if err := tr.WriteSVG(&svg); err != nil {
					t.Fatal(err)
				}
				wellFormed(t, svg.Bytes())
				if err := tr.WriteHTML(&html); err != nil {
					t.Fatal(err)
				}
				if !bytes.Contains(svg.Bytes(), []byte(st.Type+" ("+st.Unit+")")) {
					t.Errorf("SVG does not name its sample type")
				}
				// The legend's split is profiles.Breakdown's.
				idx, _ := profiles.SampleIndex(p, st.Type)
				by, total := profiles.Breakdown(p, idx, rules)
				share := tr.Share()
				for _, c := range profiles.Categories {
					if total == 0 {
						continue
					}
					if want := float64(by[c]) / float64(total); share[c] < want-1e-9 || share[c] > want+1e-9 {
						t.Errorf("%s: tree share %.4f, Breakdown %.4f", c, share[c], want)
					}
				}
			})
		}
	}
}

// FuzzFlame feeds arbitrary bytes through the whole pipeline: whatever
// profiles.Read accepts must draw as SVG and HTML without panicking.
func FuzzFlame(f *testing.F) {
	for _, name := range []string{"cpu", "mutex", "block"} {
		f.Add(readReal(f, name))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := profiles.Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		tr, err := Build(p, Options{MaxNodes: 100})
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := tr.WriteSVG(&buf); err != nil {
			t.Fatal(err)
		}
		if err := tr.WriteHTML(&buf); err != nil {
			t.Fatal(err)
		}
		if d, err := Diff(p, p, Options{}); err == nil {
			d.WriteSVG(&buf)
		}
	})
}

// BenchmarkSVGReal is the SVG of a real captured profile (fgprof
// wall-clock of a contended, allocating SHA-256 workload).
func BenchmarkSVGReal(b *testing.B) {
	for _, name := range []string{"wall", "cpu"} {
		b.Run(name, func(b *testing.B) {
			data := readReal(b, name)
			b.ReportAllocs()
			for b.Loop() {
				p, err := profiles.Read(bytes.NewReader(data))
				if err != nil {
					b.Fatal(err)
				}
				var buf bytes.Buffer
				if err := WriteSVG(&buf, p, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
