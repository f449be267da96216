package flame

import (
	"bytes"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// FuzzFlame feeds arbitrary bytes through the whole drawing pipeline
// (ReadSource, the tree, every writer) and holds it to its invariants:
// the categories sum to the total; the folded stacks written from the
// tree are those written from the source (same stacks, same sums); a
// profile diffed against itself has every frame equal on both sides and
// nothing significant; every output stays within its budget; and a
// DrawnOnly tree writes the same SVG and page as the whole one. The
// corpus under testdata/fuzz/FuzzFlame adds issue 14's hostile shapes.
func FuzzFlame(f *testing.F) {
	for _, name := range []string{"cpu", "mutex", "block"} {
		f.Add(readReal(f, name))
	}
	f.Add(encode(f, deepProfile(strings.Repeat("n", 4<<10), 200), true)) // TestHugeNamesBounded has 1 MiB × 2,000
	f.Add(encode(f, deepProfile("main.f", 2_000), true))                 // TestDeepStackJSON has 100,000
	f.Add(encode(f, hostileProfile(), false))
	f.Fuzz(func(t *testing.T, data []byte) {
		src, err := ReadSource(bytes.NewReader(data), profiles.Limits{Compressed: 1 << 20, Uncompressed: 8 << 20, Memory: 64 << 20})
		if err != nil {
			return
		}
		const budget = 32 << 20
		for idx, st := range src.SampleTypes() {
			tr, err := BuildSource(src, Options{SampleType: st.Type, MaxNodes: 100, MaxOutput: budget})
			if err != nil {
				continue // a sample type named twice
			}
			var sum int64
			for _, v := range tr.byCat {
				sum += v // wrapping, as the total does
			}
			if sum != tr.Total() {
				t.Fatalf("%s: categories sum to %d, total %d", st.Type, sum, tr.Total())
			}
			for name, write := range map[string]func(io.Writer) error{"svg": tr.WriteSVG, "html": tr.WriteHTML, "json": tr.WriteJSON} {
				var cw countWriter
				if err := write(&cw); err != nil && !errors.Is(err, ErrOutputBudget) {
					t.Fatalf("%s: %v", name, err)
				}
				if cw.n > budget {
					t.Fatalf("%s: %d bytes past a budget of %d", name, cw.n, budget)
				}
			}
			// A DrawnOnly tree draws the same bytes (TestDrawnOnlySameOutput).
			drawn, err := BuildSource(src, Options{SampleType: st.Type, MaxNodes: 100, MaxOutput: budget, DrawnOnly: true})
			if err != nil {
				t.Fatalf("DrawnOnly: %v", err)
			}
			for name, pair := range map[string][2]func(io.Writer) error{"svg": {tr.WriteSVG, drawn.WriteSVG}, "html": {tr.WriteHTML, drawn.WriteHTML}} {
				var w, d bytes.Buffer
				ew, ed := pair[0](&w), pair[1](&d)
				if (ew == nil) != (ed == nil) || !bytes.Equal(w.Bytes(), d.Bytes()) {
					t.Fatalf("%s: DrawnOnly wrote %d bytes (%v), the whole tree %d (%v)", name, d.Len(), ed, w.Len(), ew)
				}
			}
			var a, b bytes.Buffer
			errA, errB := tr.WriteFolded(&a), src.WriteFolded(&b, idx)
			if (errA == nil) != (errB == nil) {
				if errA != nil && errors.Is(errA, profiles.ErrFoldedTooLarge) {
					continue // the tree's budget is lower than profiles.MaxFolded
				}
				t.Fatalf("folded: from the tree %v, from the source %v", errA, errB)
			}
			if fa, fb := foldedMap(t, a.Bytes()), foldedMap(t, b.Bytes()); !maps.Equal(fa, fb) {
				t.Fatalf("%s: folded stacks from the tree (%d) differ from the source's (%d)", st.Type, len(fa), len(fb))
			}
			d, err := DiffSource(src, src, Options{SampleType: st.Type, MaxNodes: 100, MaxOutput: budget})
			if err != nil {
				t.Fatalf("self-diff: %v", err)
			}
			for i := range d.value {
				if d.value[i] != d.base[i] || d.stat.sig[i] != 0 {
					t.Fatalf("%s: self-diff frame %d: %d against %d, significance %d", st.Type, i, d.value[i], d.base[i], d.stat.sig[i])
				}
			}
			var cw countWriter
			if err := d.WriteSVG(&cw); err != nil && !errors.Is(err, ErrOutputBudget) {
				t.Fatalf("self-diff SVG: %v", err)
			}
		}
	})
}

// foldedMap reads folded stacks into their sums per stack, leaving out
// stacks that sum to zero (the source writes them, the tree cannot).
func foldedMap(t *testing.T, b []byte) map[string]int64 {
	out := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseInt(line[i+1:], 10, 64)
		if i < 0 || err != nil {
			t.Fatalf("folded line %q", line)
		}
		out[line[:i]] += v
	}
	for k, v := range out {
		if v == 0 {
			delete(out, k)
		}
	}
	return out
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
