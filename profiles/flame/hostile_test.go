package flame

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/profiles"
)

// deepProfile is one sample whose stack is depth calls of one function
// named name: issue 14's hostile shapes (a 1 MiB name 2,000 and 10,000
// levels deep is a 1.2 KB file; a stack 100,000 deep, 200 bytes).
func deepProfile(name string, depth int) *profile.Profile {
	fn := &profile.Function{ID: 1, Name: name}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
	st := make([]*profile.Location, depth)
	for i := range st {
		st[i] = loc
	}
	return &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "cpu", Unit: "nanoseconds"}},
		Sample:     []*profile.Sample{{Location: st, Value: []int64{1000}}},
		Location:   []*profile.Location{loc}, Function: []*profile.Function{fn},
	}
}

// countWriter counts what is written and keeps nothing.
type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// allocated returns the bytes fn allocates (runtime.MemStats.TotalAlloc):
// an upper bound on the memory it holds at its peak.
func allocated(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestHugeNamesBounded draws issue 14's profiles of a 1 MiB name at every
// level of a 2,000- and a 10,000-deep stack (2 GB of SVG, and the server's
// death, before): every output is bounded by what it shows, names cut to
// MaxNameRunes, and writing allocates a few MB, not the name × depth.
func TestHugeNamesBounded(t *testing.T) {
	big := strings.Repeat("a", 1<<20)
	for _, depth := range []int{2000, 10000} {
		data := encode(t, deepProfile(big, depth), true)
		if len(data) > 2<<10 {
			t.Fatalf("the hostile profile is %d bytes, want a small file", len(data))
		}
		src, err := ReadSource(bytes.NewReader(data), profiles.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := BuildSource(src, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []struct {
			name  string
			write func(io.Writer) error
			max   int64
		}{
			{"svg", tr.WriteSVG, int64(depth) * 3 << 10},
			{"json", tr.WriteJSON, 2<<20 + int64(depth)*64},
			{"html", tr.WriteHTML, 3<<20 + int64(depth)*64},
		} {
			var cw countWriter
			var err error
			alloc := allocated(func() { err = f.write(&cw) })
			if err != nil {
				t.Fatalf("depth %d %s: %v", depth, f.name, err)
			}
			if cw.n > f.max || alloc > 64<<20 {
				t.Errorf("depth %d %s: %d bytes written (max %d), %d MB allocated", depth, f.name, cw.n, f.max, alloc>>20)
			}
		}
		var svg bytes.Buffer
		tr.WriteSVG(&svg)
		if !strings.Contains(svg.String(), strings.Repeat("a", MaxNameRunes-1)+"…") || strings.Contains(svg.String(), strings.Repeat("a", MaxNameRunes+1)) {
			t.Errorf("depth %d: the SVG's tooltips do not cut the name at %d runes", depth, MaxNameRunes)
		}
		// Folded stacks must carry whole names: 2 GB and more is refused
		// before a byte is written, from the tree and from the source.
		for name, write := range map[string]func(io.Writer) error{
			"tree":   tr.WriteFolded,
			"source": func(w io.Writer) error { return src.WriteFolded(w, 0) },
		} {
			var cw countWriter
			var err error
			alloc := allocated(func() { err = write(&cw) })
			if !errors.Is(err, profiles.ErrFoldedTooLarge) || cw.n != 0 || alloc > 64<<20 {
				t.Errorf("depth %d folded from the %s: %v, %d bytes written, %d MB allocated", depth, name, err, cw.n, alloc>>20)
			}
		}
	}
}

// TestOutputBudget: a budget too small for the output is refused before
// anything is written, with ErrOutputBudget.
func TestOutputBudget(t *testing.T) {
	tr, err := Build(genProfile(2000, 3), Options{MaxOutput: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	for name, write := range map[string]func(io.Writer) error{"svg": tr.WriteSVG, "json": tr.WriteJSON, "html": tr.WriteHTML, "folded": tr.WriteFolded} {
		var cw countWriter
		err := write(&cw)
		if !errors.Is(err, ErrOutputBudget) && !errors.Is(err, profiles.ErrFoldedTooLarge) {
			t.Errorf("%s: %v, want the budget refused", name, err)
		}
		if cw.n > 64<<10 {
			t.Errorf("%s: %d bytes written past a budget of 64 KiB", name, cw.n)
		}
	}
}

// TestDeepStackJSON: a stack 100,000 deep, every frame of one value, put
// every frame in one bucket, and the interactive graph came out empty. It
// keeps MaxNodes frames, from the root down.
func TestDeepStackJSON(t *testing.T) {
	tr, err := Build(deepProfile("main.f", 100000), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tr.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var data struct {
		Nodes  []int64
		Pruned int
	}
	if err := json.Unmarshal(buf.Bytes(), &data); err != nil {
		t.Fatal(err)
	}
	frames := len(data.Nodes)/4 - 1
	if frames != 60000 || data.Pruned != 1 {
		t.Errorf("%d frames kept, %d pruned; want 60000 and the rest as one pruned subtree", frames, data.Pruned)
	}
	for i := 0; i < len(data.Nodes)/4; i++ {
		if d := data.Nodes[4*i+3]; d != int64(i) {
			t.Fatalf("frame %d at depth %d: the kept frames are not the top of the stack", i, d)
		}
	}
}

// TestCutName: names are cut at a rune boundary, with the ellipsis
// counted, and names that fit are kept.
func TestCutName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"abc", "abc"}, {"abcd", "abcd"}, {"abcde", "abc…"}, {"ééééé", "ééé…"}, {"éééé", "éééé"}, {"", ""},
	} {
		if got := cutName(tc.in, 4); got != tc.want {
			t.Errorf("cutName(%q, 4) = %q, want %q", tc.in, got, tc.want)
		}
	}
	names := fitNames([]string{strings.Repeat("x", 1000), "short", strings.Repeat("é", 500)}, 600)
	total := 0
	for _, n := range names {
		total += len(n)
	}
	if names[1] != "short" || total > 600+2*len("…") {
		t.Errorf("fitNames: %d bytes, short name %q", total, names[1])
	}
}
