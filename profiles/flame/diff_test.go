package flame

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// Two variants whose code paths differ by design (issue 13's mutex against
// sum256): the base contends on a mutex, the new one has no lock at all
// and hashes in batches, through a function the base does not have.
var (
	mutexVariant = map[string]int64{
		"runtime.goexit;main.worker;crypto/sha256.Sum256;crypto/internal/fips140/sha256.blockSHANI":                           300,
		"runtime.goexit;main.worker;sync.(*Mutex).Lock;internal/sync.(*Mutex).lockSlow;internal/sync.runtime_SemacquireMutex": 600,
		"runtime.goexit;main.worker;sync.(*Mutex).Unlock;internal/sync.(*Mutex).unlockSlow":                                   50,
		"runtime.goexit;main.worker;runtime.mapaccess1_fast64":                                                                50,
	}
	sum256Variant = map[string]int64{
		"runtime.goexit;main.worker;crypto/sha256.Sum256;crypto/internal/fips140/sha256.blockSHANI":   500,
		"runtime.goexit;main.worker;main.sumBatch;crypto/internal/fips140/sha256.blockSHANI":          400,
		"runtime.goexit;main.worker;runtime.mapaccess1_fast64":                                        55,
		"runtime.goexit;main.worker;runtime.makeslice;runtime.mallocgc":                               45,
		"runtime.goexit;main.worker;sync.(*Mutex).Unlock;internal/sync.(*Mutex).unlockSlow;rare.only": 1,
	}
)

// svgFrame is one frame of a written SVG.
type svgFrame struct {
	tip     string
	x, y, w float64
	fill    string
	gone    bool
}

var frameRE = regexp.MustCompile(`<title>([^<]*)</title><rect x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)" height="15" rx="2" fill="([^"]+)"`)

func svgFrames(svg string) map[string]svgFrame {
	out := map[string]svgFrame{}
	for _, m := range frameRE.FindAllStringSubmatch(svg, -1) {
		name := strings.SplitN(m[1], "&#xA;", 2)[0]
		f := svgFrame{tip: m[1], fill: m[5], gone: strings.HasPrefix(m[5], "url(#gone")}
		f.x, _ = strconv.ParseFloat(m[2], 64)
		f.y, _ = strconv.ParseFloat(m[3], 64)
		f.w, _ = strconv.ParseFloat(m[4], 64)
		out[name+"@"+m[3]] = f
	}
	return out
}

func frameNamed(t *testing.T, fs map[string]svgFrame, name string) svgFrame {
	t.Helper()
	for k, f := range fs {
		if strings.HasPrefix(k, name+"@") {
			return f
		}
	}
	t.Fatalf("no frame %s", name)
	return svgFrame{}
}

// TestGoldenUnionDiff draws the variants on both layouts, as SVG and JSON:
// frames that exist only in the base (the lock) and only in the new
// profile (sumBatch, the allocation) are all there.
func TestGoldenUnionDiff(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout Layout
	}{{"new", LayoutNew}, {"base", LayoutBase}} {
		t.Run(tc.name, func(t *testing.T) {
			opts := smallOpts(t)
			opts.Title = "sum256 against mutex"
			opts.Layout = tc.layout
			tr, err := Diff(fake(mutexVariant), fake(sum256Variant), opts)
			if err != nil {
				t.Fatal(err)
			}
			var svg, js bytes.Buffer
			if err := tr.WriteSVG(&svg); err != nil {
				t.Fatal(err)
			}
			if err := tr.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			golden(t, "diff-"+tc.name+".svg", svg.Bytes())
			golden(t, "diff-"+tc.name+".json", js.Bytes())
			wellFormed(t, svg.Bytes())

			fs := svgFrames(svg.String())
			plot := float64(1200 - 2*padX)
			// The union's width: the layout side's total plus what exists
			// only on the other side, both on the new total's scale.
			newTotal, baseTotal := 1001.0, 1000.0
			scale := newTotal / baseTotal
			var union float64
			if tc.layout == LayoutNew {
				union = newTotal + scale*600 // the Lock subtree; Unlock is in both
			} else {
				union = newTotal + 400 + 45 + 1 // sumBatch, makeslice and rare.only are new
			}
			lock := frameNamed(t, fs, "sync.(*Mutex).Lock")
			if !lock.gone || !strings.Contains(lock.tip, "only in base") {
				t.Errorf("Lock frame (only in base) is %+v", lock)
			}
			if want := plot * 600 * scale / union; lock.w < want-0.2 || lock.w > want+0.2 {
				t.Errorf("Lock frame width %.1f, want its scaled base width %.1f", lock.w, want)
			}
			batch := frameNamed(t, fs, "main.sumBatch")
			if batch.gone || !strings.Contains(batch.tip, "only in new") || !strings.HasPrefix(batch.fill, "#") {
				t.Errorf("sumBatch frame (only in new) is %+v", batch)
			}
			if want := plot * 400 / union; batch.w < want-0.2 || batch.w > want+0.2 {
				t.Errorf("sumBatch width %.1f, want %.1f", batch.w, want)
			}
			if !isRed(batch.fill) {
				t.Errorf("sumBatch (added, 40%% of new) fill %s is not red", batch.fill)
			}
			if lock.fill != "url(#gone)" {
				t.Errorf("Lock (gone, 60%% of base) fill %s, want the significant hatch", lock.fill)
			}
			// A frame gone and too small to tell is hatched grey.
			rare := frameNamed(t, fs, "rare.only")
			if rare.fill != diffGrey || !strings.Contains(rare.tip, "only in new") {
				t.Errorf("rare.only frame %+v, want grey (one sample)", rare)
			}
			worker := frameNamed(t, fs, "main.worker")
			if want := plot; worker.w < want-0.2 {
				t.Errorf("main.worker width %.1f, want the whole plot %.1f", worker.w, want)
			}
			s := svg.String()
			for _, want := range []string{"work +", "lock -", "pt", `<pattern id="gone"`, "on the " + tc.name + " profile"} {
				if !strings.Contains(s, want) {
					t.Errorf("diff SVG lacks %q", want)
				}
			}
		})
	}
}

func isRed(fill string) bool {
	c := parseHex(fill)
	return c[0] > c[1]+40 && c[0] > c[2]+40
}

// TestUnionTree checks the union on the generated profile against two
// different seeds: filtered to the frames of one side, the union is that
// side's own tree, node for node; every frame's width holds its children.
func TestUnionTree(t *testing.T) {
	bp, np := genProfile(1500, 5), genProfile(1500, 6)
	for _, layout := range []Layout{LayoutNew, LayoutBase} {
		u, err := Diff(bp, np, Options{Layout: layout})
		if err != nil {
			t.Fatal(err)
		}
		for _, side := range []struct {
			p    *profile.Profile
			vals []int64
		}{{np, u.value}, {bp, u.base}} {
			own, err := Build(side.p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			j := 0
			for i := range u.name {
				if side.vals[i] == 0 {
					continue
				}
				if j >= len(own.name) || u.nodeName(int32(i)) != own.nodeName(int32(j)) || side.vals[i] != own.value[j] {
					t.Fatalf("union node %d (%s, %d) is not own node %d", i, u.nodeName(int32(i)), side.vals[i], j)
				}
				j++
			}
			if j != len(own.name) {
				t.Fatalf("union has %d of the side's %d nodes", j, len(own.name))
			}
		}
		for i := int32(0); i < int32(len(u.name)); i++ {
			var kids int64
			for c := i + 1; c < u.end[i]; c = u.end[c] {
				kids += u.width[c]
			}
			if kids > u.width[i] {
				t.Fatalf("node %d: children %d wider than it, %d", i, kids, u.width[i])
			}
			if prim := u.primary(i); prim > 0 && u.width[i] < prim {
				t.Fatalf("node %d drawn narrower (%d) than its value %d", i, u.width[i], prim)
			}
		}
	}
}

func (t *Tree) primary(i int32) int64 {
	if t.opts.Layout == LayoutBase {
		return t.scaledBase(i)
	}
	return t.value[i]
}

// TestDiffJSONMatchesSVG checks that the page draws the union as the SVG
// does: the same frames, widths, significance.
func TestDiffJSONMatchesSVG(t *testing.T) {
	tr, err := Diff(fake(mutexVariant), fake(sum256Variant), smallOpts(t))
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	tr.WriteJSON(&js)
	var data struct {
		Nodes, Base, Width, Sig, Gaps []int64
		Diff                          bool
		Layout                        string
		Stats                         struct {
			OK      bool
			N       float64
			CatText []string
		}
	}
	if err := json.Unmarshal(js.Bytes(), &data); err != nil {
		t.Fatal(err)
	}
	n := len(data.Nodes) / 4
	if !data.Diff || data.Layout != "new" || len(data.Base) != n || len(data.Width) != n || len(data.Sig) != n || !data.Stats.OK {
		t.Fatalf("diff JSON: %d frames, %d base, %d width, %d sig, stats %+v", n, len(data.Base), len(data.Width), len(data.Sig), data.Stats)
	}
	if data.Width[0] != tr.width[0] || data.Nodes[1] != tr.Total() {
		t.Errorf("root width %d value %d, want %d %d", data.Width[0], data.Nodes[1], tr.width[0], tr.Total())
	}
	if len(data.Stats.CatText) != numCategories || !strings.HasPrefix(data.Stats.CatText[1], "lock -") {
		t.Errorf("legend texts %q", data.Stats.CatText)
	}
}

func TestParseLayout(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Layout
		err  bool
	}{{"", LayoutNew, false}, {"new", LayoutNew, false}, {"base", LayoutBase, false}, {"old", 0, true}} {
		got, err := ParseLayout(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseLayout(%q) = %v, %v", tc.in, got, err)
		}
	}
}
