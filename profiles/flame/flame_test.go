package flame

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/profiles"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fake builds a profile from folded-style stacks: "root;caller;leaf" →
// value, with a "samples" and a "cpu" (×10ms) sample type.
func fake(stacks map[string]int64) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
	}
	locs := map[string]*profile.Location{}
	loc := func(name string) *profile.Location {
		if l, ok := locs[name]; ok {
			return l
		}
		fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name}
		p.Function = append(p.Function, fn)
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fn}}}
		p.Location = append(p.Location, l)
		locs[name] = l
		return l
	}
	keys := make([]string, 0, len(stacks))
	for k := range stacks {
		keys = append(keys, k)
	}
	// Deterministic order, so that the golden files are stable.
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if keys[j] < keys[i] {
				keys[i], keys[j] = keys[j], keys[i]
			}
		}
	}
	for _, k := range keys {
		frames := strings.Split(k, ";")
		s := &profile.Sample{Value: []int64{stacks[k], stacks[k] * 10_000_000}}
		for i := len(frames) - 1; i >= 0; i-- {
			s.Location = append(s.Location, loc(frames[i]))
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}

// small is a cipher-cache-like profile: hashing (work), a contended mutex,
// allocation with a GC assist, and the cache's own bookkeeping (other).
var small = map[string]int64{
	"runtime.goexit;main.worker;crypto/sha256.Sum256;crypto/internal/fips140/sha256.blockSHANI":                           40,
	"runtime.goexit;main.worker;sync.(*Mutex).Lock;internal/sync.(*Mutex).lockSlow;internal/sync.runtime_SemacquireMutex": 25,
	"runtime.goexit;main.worker;runtime.makeslice;runtime.mallocgc":                                                       10,
	"runtime.goexit;main.worker;runtime.makeslice;runtime.mallocgc;runtime.gcAssistAlloc;runtime.gcDrainN":                5,
	"runtime.goexit;main.worker;runtime.mapaccess1_fast64":                                                                15,
	"runtime.goexit;main.worker":                                         3,
	"runtime.mcall;runtime.park_m;runtime.schedule;runtime.findRunnable": 2,
}

func smallOpts(t testing.TB) Options {
	r, err := profiles.DefaultRules().WithWork(`^crypto/`)
	if err != nil {
		t.Fatal(err)
	}
	return Options{Title: "small", Rules: r}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; run go test -update and review the diff", path)
	}
}

func TestGoldenSVG(t *testing.T) {
	tr, err := Build(fake(small), smallOpts(t))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tr.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	golden(t, "small.svg", buf.Bytes())
	wellFormed(t, buf.Bytes())
}

func TestGoldenJSON(t *testing.T) {
	tr, err := Build(fake(small), smallOpts(t))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tr.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	golden(t, "small.json", buf.Bytes())
}

func wellFormed(t *testing.T, b []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
	}
}

var rectRE = regexp.MustCompile(`<title>([^<]*)</title><rect x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)"`)

// TestSVGWidthsAndCategories checks the layout against the values: every
// frame's width is its share of the plot, and frames have the colour of
// their category.
func TestSVGWidthsAndCategories(t *testing.T) {
	tr, err := Build(fake(small), smallOpts(t))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tr.WriteSVG(&buf)
	var total int64
	for _, v := range small {
		total += v
	}
	plot := float64(1200 - 2*padX)
	frames := map[string]float64{}
	for _, m := range rectRE.FindAllStringSubmatch(buf.String(), -1) {
		name := strings.SplitN(m[1], "&#xA;", 2)[0]
		w, _ := strconv.ParseFloat(m[4], 64)
		frames[name] += w
	}
	for name, want := range map[string]int64{"all": total, "main.worker": 98, "crypto/sha256.Sum256": 40, "runtime.mallocgc": 15, "runtime.findRunnable": 2} {
		got := frames[name]
		if exp := plot * float64(want) / float64(total); got < exp-0.1 || got > exp+0.1 {
			t.Errorf("%s: width %.1f, want %.1f", name, got, exp)
		}
	}
	share := tr.Share()
	want := map[profiles.Category]int64{profiles.Work: 40, profiles.Lock: 25, profiles.Alloc: 10, profiles.GC: 5, profiles.Sched: 2, profiles.Other: 18}
	for c, v := range want {
		if got := share[c] * float64(total); got < float64(v)-1e-9 || got > float64(v)+1e-9 {
			t.Errorf("share of %s = %.1f samples, want %d", c, got, v)
		}
	}
	// And the same split as profiles.Breakdown.
	by, btotal := profiles.Breakdown(fake(small), 0, smallOpts(t).Rules)
	for c, v := range want {
		if by[c] != v || btotal != total {
			t.Errorf("Breakdown %s = %d of %d, want %d of %d", c, by[c], btotal, v, total)
		}
	}
	s := buf.String()
	for name, cat := range map[string]profiles.Category{
		"crypto/internal/fips140/sha256.blockSHANI": profiles.Work,
		"internal/sync.runtime_SemacquireMutex":     profiles.Lock,
		"runtime.gcDrainN":                          profiles.GC,
		"runtime.mapaccess1_fast64":                 profiles.Other,
	} {
		re := regexp.MustCompile(`<title>` + regexp.QuoteMeta(name) + `&#xA;[^<]*, ` + string(cat) + `</title><rect [^>]* fill="(#[0-9a-f]{6})"`)
		m := re.FindStringSubmatch(s)
		if m == nil {
			t.Errorf("%s: no %s frame", name, cat)
			continue
		}
		if m[1] != frameColor(cat, name) {
			t.Errorf("%s: fill %s, want the %s shade %s", name, m[1], cat, frameColor(cat, name))
		}
	}
}

// hostile are names that break naive SVG, HTML or JSON output.
var hostile = []string{
	`</script><img src=x onerror=alert(1)>`,
	`"&<>'`,
	"ctl\x00\x01\x1b[31m\x7f",
	"bad\xff\xfeutf8",
	"line\nbreak\u2028sep\u2029",
	`]]><!--`,
	`{{.Title}}`,
}

func hostileProfile() *profile.Profile {
	m := map[string]int64{}
	for i, h := range hostile {
		m["main.main;"+h] = int64(10 + i)
	}
	return fake(m)
}

func TestHostileNames(t *testing.T) {
	opts := Options{Title: `<b>title</b> & "</script>"` + "\xff"}
	tr, err := Build(hostileProfile(), opts)
	if err != nil {
		t.Fatal(err)
	}

	var svg bytes.Buffer
	tr.WriteSVG(&svg)
	wellFormed(t, svg.Bytes())
	for _, bad := range []string{"<img", "<script", "<b>", "\x00", "\x1b", "\xff", "]]><!--"} {
		if bytes.Contains(svg.Bytes(), []byte(bad)) {
			t.Errorf("SVG contains %q", bad)
		}
	}

	var js bytes.Buffer
	tr.WriteJSON(&js)
	var data struct {
		Title string
		Names []string
	}
	if err := json.Unmarshal(js.Bytes(), &data); err != nil {
		t.Fatalf("JSON does not parse: %v", err)
	}
	found := 0
	for _, n := range data.Names {
		for _, h := range hostile {
			if n == h {
				found++
			}
		}
	}
	if found < 5 { // the invalid UTF-8 ones come back with U+FFFD
		t.Errorf("only %d hostile names survive the JSON round trip: %q", found, data.Names)
	}
	for _, bad := range []string{"<", ">", "&", "\u2028", "\u2029"} {
		if bytes.Contains(js.Bytes(), []byte(bad)) {
			t.Errorf("JSON contains a raw %q", bad)
		}
	}

	var page bytes.Buffer
	if err := tr.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	if n := strings.Count(strings.ToLower(html), "</script"); n != 3 {
		t.Errorf("page has %d </script (want the 3 of its own script elements)", n)
	}
	for _, bad := range []string{"<img", "<b>", "onerror=alert(1)>"} {
		if strings.Contains(html, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	if !strings.Contains(html, "<title>&lt;b&gt;title&lt;/b&gt; &amp; &#34;&lt;/script&gt;&#34;") {
		t.Errorf("page title not escaped: %s", html[:strings.Index(html, "</title>")])
	}
	// The embedded JSON is the same as WriteJSON's.
	start := strings.Index(html, `id="flame-data">`) + len(`id="flame-data">`)
	end := strings.Index(html[start:], "</script>")
	if got := strings.TrimSpace(html[start : start+end]); got != strings.TrimSpace(js.String()) {
		t.Errorf("page data differs from WriteJSON")
	}
	if strings.Contains(Script, "innerHTML") || strings.Contains(Script, "outerHTML") || strings.Contains(Script, "insertAdjacentHTML") {
		t.Error("flame.js must set text with textContent, never innerHTML")
	}
}

func TestFoldedHostile(t *testing.T) {
	var buf bytes.Buffer
	if err := profiles.WriteFolded(&buf, hostileProfile(), 0); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != len(hostile) {
		t.Errorf("%d lines for %d stacks:\n%s", len(lines), len(hostile), buf.String())
	}
	for _, l := range lines {
		if strings.Count(l, ";") != 1 {
			t.Errorf("line %q has extra separators", l)
		}
	}
}

// TestMaxNodes checks that the page prunes the narrowest frames first and
// keeps a consistent tree.
func TestMaxNodes(t *testing.T) {
	p := genProfile(2000, 7)
	tr, err := Build(p, Options{MaxNodes: 500})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tr.WriteJSON(&buf)
	var data struct {
		Nodes  []int64
		Pruned int
		Total  int64
	}
	if err := json.Unmarshal(buf.Bytes(), &data); err != nil {
		t.Fatal(err)
	}
	n := len(data.Nodes) / 4
	if n > 501 || n < 250 || data.Pruned == 0 {
		t.Errorf("%d frames kept of %d, %d pruned", n, tr.Len(), data.Pruned)
	}
	// Children never exceed their parent.
	var path []int64
	for i := 0; i < n; i++ {
		v, d := data.Nodes[4*i+1], int(data.Nodes[4*i+3])
		path = path[:d]
		if d > 0 && v > path[d-1] {
			t.Fatalf("frame %d: value %d above its parent's %d", i, v, path[d-1])
		}
		path = append(path, v)
	}
	if data.Nodes[1] != data.Total || data.Total != tr.Total() {
		t.Errorf("root %d, total %d, tree %d", data.Nodes[1], data.Total, tr.Total())
	}
}

// TestTreeMatchesSamples checks the sorted-stack construction on the
// generated profile: the root is the sum of all samples, every frame's
// value is at least the sum of its children, and a Diff of a profile with
// itself shows no change anywhere.
func TestTreeMatchesSamples(t *testing.T) {
	p := genProfile(3000, 3)
	tr, err := Build(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, s := range p.Sample {
		sum += s.Value[1]
	}
	if tr.Total() != sum {
		t.Errorf("total %d, samples add up to %d", tr.Total(), sum)
	}
	for i := int32(0); i < int32(len(tr.name)); i++ {
		var kids int64
		for c := i + 1; c < tr.end[i]; c = tr.end[c] {
			kids += tr.value[c]
		}
		if kids > tr.value[i] {
			t.Fatalf("node %d: children %d > value %d", i, kids, tr.value[i])
		}
	}
	d, err := Diff(p, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range d.name {
		if d.base[i] != d.value[i] || d.width[i] != d.value[i] || d.stat.sig[i] != 0 {
			t.Fatalf("self-diff: node %d base %d value %d width %d sig %d", i, d.base[i], d.value[i], d.width[i], d.stat.sig[i])
		}
	}
}

func TestErrors(t *testing.T) {
	p := fake(small)
	if _, err := Build(p, Options{SampleType: "alloc_space"}); err == nil || !strings.Contains(err.Error(), `no sample type "alloc_space"`) {
		t.Errorf("Build with a missing sample type: %v", err)
	}
	q := fake(small)
	q.SampleType[1] = &profile.ValueType{Type: "delay", Unit: "nanoseconds"}
	if _, err := Diff(p, q, Options{}); err == nil || !strings.Contains(err.Error(), "cannot compare cpu") {
		t.Errorf("Diff of different types: %v", err)
	}
	empty := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}}}
	tr, err := Build(empty, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tr.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	wellFormed(t, buf.Bytes())
	if !strings.Contains(buf.String(), "no samples, nothing to draw") {
		t.Error("the SVG of an empty profile does not say it is empty")
	}
	if err := tr.WriteHTML(io.Discard); err != nil {
		t.Fatal(err)
	}
}

// TestMaxNodesUnitValues prunes a profile whose frames are mostly of value
// 1 (a million one-count samples): the cap must hold there too, where the
// page was once sent whole (10 MB for 1M frames).
func TestMaxNodesUnitValues(t *testing.T) {
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}}}
	var locs []*profile.Location
	for i := range 300 {
		fn := &profile.Function{ID: uint64(i + 1), Name: "pkg.f" + strconv.Itoa(i)}
		l := &profile.Location{ID: uint64(i + 1), Line: []profile.Line{{Function: fn}}}
		p.Function = append(p.Function, fn)
		p.Location = append(p.Location, l)
		locs = append(locs, l)
	}
	for i := range 300 * 300 {
		p.Sample = append(p.Sample, &profile.Sample{Value: []int64{1}, Location: []*profile.Location{locs[i%300], locs[i/300]}})
	}
	tr, err := Build(p, Options{MaxNodes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tr.WriteJSON(&buf)
	var data struct {
		Nodes  []int64
		Pruned int
	}
	if err := json.Unmarshal(buf.Bytes(), &data); err != nil {
		t.Fatal(err)
	}
	if n := len(data.Nodes) / 4; n > 1001 || data.Pruned < 90000-1000 {
		t.Errorf("%d frames kept of %d (cap 1000), %d pruned", n, tr.Len(), data.Pruned)
	}
}

// TestJSONGaps lays the page's frames out as flame.js does (a frame's
// offset is its parent's plus its elder siblings' widths, plus its gap)
// and checks every kept frame against the SVG's layout: frames after a
// pruned sibling used to shift left into its place.
func TestJSONGaps(t *testing.T) {
	tr, err := Build(genProfile(2000, 7), Options{MaxNodes: 300})
	if err != nil {
		t.Fatal(err)
	}
	var want []int64
	tr.walkKeep(tr.jsonKeep(), func(i int32, d int, x int64) { want = append(want, x) })
	var buf bytes.Buffer
	tr.WriteJSON(&buf)
	var data struct{ Nodes, Gaps []int64 }
	if err := json.Unmarshal(buf.Bytes(), &data); err != nil {
		t.Fatal(err)
	}
	n := len(data.Nodes) / 4
	if len(data.Gaps) == 0 || n != len(want) {
		t.Fatalf("%d frames (want %d), %d gap entries", n, len(want), len(data.Gaps)/2)
	}
	gap := make([]int64, n)
	for g := 0; g+1 < len(data.Gaps); g += 2 {
		gap[data.Gaps[g]] = data.Gaps[g+1]
	}
	off, cursor := make([]int64, n), make([]int64, n)
	var path []int
	for i := range n {
		d := int(data.Nodes[4*i+3])
		path = path[:d]
		if d > 0 {
			p := path[d-1]
			cursor[p] += gap[i]
			off[i] = cursor[p]
			cursor[p] += data.Nodes[4*i+1]
		}
		cursor[i] = off[i]
		path = append(path, i)
		if off[i] != want[i] {
			t.Fatalf("frame %d at %d, the SVG has it at %d", i, off[i], want[i])
		}
	}
}

// TestCallerTint checks what the issue asked to check: memmove takes its
// caller's category, so memmove under hashing is work and under growslice
// alloc; asyncPreempt is the scheduler's, wherever it interrupts.
func TestCallerTint(t *testing.T) {
	p := fake(map[string]int64{
		"main.worker;crypto/sha256.Sum256;runtime.memmove":      3,
		"main.worker;runtime.growslice;runtime.memmove":         2,
		"main.worker;crypto/sha256.Sum256;runtime.asyncPreempt": 1,
	})
	tr, err := Build(p, smallOpts(t))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]profiles.Category{}
	for i := int32(1); i < int32(len(tr.name)); i++ {
		for c := i + 1; c < tr.end[i]; c = tr.end[c] {
			got[tr.nodeName(c)+" < "+tr.nodeName(i)] = tr.category(c)
		}
	}
	for k, want := range map[string]profiles.Category{
		"runtime.memmove < crypto/sha256.Sum256":      profiles.Work,
		"runtime.memmove < runtime.growslice":         profiles.Alloc,
		"runtime.asyncPreempt < crypto/sha256.Sum256": profiles.Sched,
	} {
		if got[k] != want {
			t.Errorf("%s: %s, want %s", k, got[k], want)
		}
	}
}

// TestNegativeValuesLeftOut: a sample with a negative value (a hostile or
// mis-made profile) draws nothing, so no frame is wider than the plot and
// the total is not negative (issue 14).
func TestNegativeValuesLeftOut(t *testing.T) {
	p := fake(map[string]int64{"main.worker;main.a": 100, "main.worker;main.b": -1000})
	tr, err := Build(p, smallOpts(t))
	if err != nil {
		t.Fatal(err)
	}
	only, err := Build(fake(map[string]int64{"main.worker;main.a": 100}), smallOpts(t))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Total() != only.Total() {
		t.Errorf("total %d, want %d (the negative sample left out)", tr.Total(), only.Total())
	}
	for i := range tr.value {
		if tr.value[i] < 0 || tr.value[i] > tr.Total() {
			t.Errorf("frame %d has value %d of a total %d", i, tr.value[i], tr.Total())
		}
	}
}

// TestHugeValuesSaturate: values whose sum overflows int64 make a total of
// MaxInt64, never a negative one (issue 14).
func TestHugeValuesSaturate(t *testing.T) {
	p := fake(map[string]int64{"main.worker;main.a": 1, "main.worker;main.b": 1})
	for _, s := range p.Sample {
		for i := range s.Value {
			s.Value[i] = math.MaxInt64 - 1
		}
	}
	tr, err := Build(p, smallOpts(t))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Total() != math.MaxInt64 {
		t.Errorf("total %d, want MaxInt64", tr.Total())
	}
	for i := range tr.value {
		if tr.value[i] < 0 {
			t.Errorf("frame %d: value %d", i, tr.value[i])
		}
	}
}

// TestGoldenHTML: the self-contained page of the small profile. The
// viewer's script and style are checked to be inlined whole, once, and
// stand as placeholders in the golden file, which holds the page around
// them and its data: a change to flame.js or flame.css alone does not
// rewrite it.
func TestGoldenHTML(t *testing.T) {
	tr, err := Build(fake(small), smallOpts(t))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tr.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, inline := range []struct{ name, text string }{{"flame.js", Script}, {"flame.css", Style}} {
		if n := strings.Count(page, inline.text); n != 1 {
			t.Fatalf("the page holds %s %d times, want once", inline.name, n)
		}
		page = strings.Replace(page, inline.text, "/* "+inline.name+" */", 1)
	}
	golden(t, "small.html", []byte(page))
}
