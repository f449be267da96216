package profiles

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func readFile(t testing.TB, path string) *profile.Profile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := Read(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return p
}

func TestReadErrors(t *testing.T) {
	real, err := os.ReadFile("testdata/real/cpu.pb.gz")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := gzip.NewReader(bytes.NewReader(real))
	if err != nil {
		t.Fatal(err)
	}
	var plain bytes.Buffer
	plain.ReadFrom(raw)

	tests := []struct {
		name    string
		in      []byte
		want    string
		notProf bool
	}{
		{"empty", nil, "the input is empty", true},
		{"text", []byte("hello, world\n"), "not a pprof profile", true},
		{"html", []byte("<html><body>404</body></html>"), "not a pprof profile", true},
		{"truncated gzip", real[:len(real)/2], "truncated gzip data", false},
		{"gzip of nothing", gz(nil), "the gzip data is empty", true},
		{"gzip of text", gz([]byte("not a profile")), "not a pprof profile", true},
		{"gzip in gzip", gz(real), "gzip inside gzip", true},
		{"truncated proto", plain.Bytes()[:plain.Len()/3], "not a pprof profile", true},
		{"bad gzip header", []byte{0x1f, 0x8b, 0, 0, 0}, "decompressing profile", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Read(bytes.NewReader(tt.in))
			if err == nil {
				t.Fatalf("no error; profile with %d samples", len(p.Sample))
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
			if tt.notProf != errors.Is(err, ErrNotProfile) {
				t.Errorf("errors.Is(err, ErrNotProfile) = %v", !tt.notProf)
			}
		})
	}
}

func TestReadUncompressed(t *testing.T) {
	p := readFile(t, "testdata/real/cpu.pb.gz")
	var buf bytes.Buffer
	if err := p.WriteUncompressed(&buf); err != nil {
		t.Fatal(err)
	}
	q, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Sample) != len(p.Sample) {
		t.Errorf("%d samples, want %d", len(q.Sample), len(p.Sample))
	}
}

func TestReadLimits(t *testing.T) {
	// A gzip bomb: 16 MiB of zeros compress to about 16 KiB; Read's real
	// limit is 1 GiB, the test's 4 MiB keeps it fast under -race.
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zeros := make([]byte, 1<<20)
	for range 16 {
		w.Write(zeros)
	}
	w.Close()
	_, err := read(bytes.NewReader(buf.Bytes()), MaxCompressed, 4<<20, MaxMemory)
	if err == nil || !strings.Contains(err.Error(), "gzip bomb") {
		t.Errorf("bomb: err = %v", err)
	}
	_, err = read(bytes.NewReader(make([]byte, 2<<20)), 1<<20, MaxUncompressed, MaxMemory)
	if err == nil || !strings.Contains(err.Error(), "larger than 1 MiB") {
		t.Errorf("too large: err = %v", err)
	}
}

// tinySamples is a profile of n one-frame samples: a few bytes each on the
// wire, a few hundred parsed, and gzip squeezes them to almost nothing.
func tinySamples(n int) []byte {
	fn := &profile.Function{ID: 1, Name: "f"}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}}, Function: []*profile.Function{fn}, Location: []*profile.Location{loc}}
	for range n {
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{loc}, Value: []int64{1}, Label: map[string][]string{"k": {"v"}}})
	}
	var buf bytes.Buffer
	p.Write(&buf)
	return buf.Bytes()
}

// TestReadMemoryLimit: a small file whose samples would take far more
// memory parsed than its size suggests is refused before parsing.
func TestReadMemoryLimit(t *testing.T) {
	data := tinySamples(100_000)
	if len(data) > 64<<10 {
		t.Fatalf("test profile is %d bytes compressed; it should be tiny", len(data))
	}
	_, err := ReadLimited(bytes.NewReader(data), Limits{Memory: 16 << 20})
	if err == nil || !strings.Contains(err.Error(), "of memory once parsed") {
		t.Errorf("err = %v, want a refusal for memory", err)
	}
	p, err := ReadLimited(bytes.NewReader(data), Limits{Memory: 256 << 20})
	if err != nil || len(p.Sample) != 100_000 {
		t.Errorf("with room: %v", err)
	}
	// The estimate is an upper bound of what parsing allocates.
	raw, _ := gzip.NewReader(bytes.NewReader(data))
	var plain bytes.Buffer
	plain.ReadFrom(raw)
	est, ok := estimateMemory(plain.Bytes())
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	q, err := profile.ParseData(plain.Bytes())
	runtime.ReadMemStats(&m1)
	if err != nil || !ok {
		t.Fatal(err, ok)
	}
	if got := int64(m1.TotalAlloc - m0.TotalAlloc); got > est {
		t.Errorf("parsing allocated %d bytes, more than the estimate %d", got, est)
	}
	runtime.KeepAlive(q)
}

func TestSampleIndex(t *testing.T) {
	p := readFile(t, "testdata/real/cpu.pb.gz")
	for _, tt := range []struct {
		name string
		want int
	}{{"", 1}, {"samples", 0}, {"cpu", 1}} {
		if got, err := SampleIndex(p, tt.name); err != nil || got != tt.want {
			t.Errorf("SampleIndex(%q) = %d, %v; want %d", tt.name, got, err, tt.want)
		}
	}
	if _, err := SampleIndex(p, "alloc_space"); err == nil || !strings.Contains(err.Error(), "(it has samples, cpu)") {
		t.Errorf("unknown type: err = %v", err)
	}
}

func TestBreakdownReal(t *testing.T) {
	r, _ := DefaultRules().WithWork(cipherWork...)
	for _, name := range []string{"wall", "cpu", "mutex", "block", "allocs"} {
		p := readFile(t, "testdata/real/"+name+".pb.gz")
		idx, _ := SampleIndex(p, "")
		by, total := Breakdown(p, idx, r)
		var sum int64
		for _, c := range Categories {
			sum += by[c]
		}
		if sum != total || total <= 0 {
			t.Errorf("%s: categories add up to %d, total %d", name, sum, total)
		}
		t.Logf("%-6s total %d: %v", name, total, by)
	}
	// The CPU profile hashes, locks, allocates and collects: every one of
	// those categories must be visible.
	p := readFile(t, "testdata/real/cpu.pb.gz")
	by, total := Breakdown(p, 1, r)
	for _, c := range []Category{Work, Lock, Alloc, GC} {
		if by[c]*100 < total*3 {
			t.Errorf("cpu: %s is %d of %d, want at least 3%%", c, by[c], total)
		}
	}
	// The mutex profile is nearly all lock.
	p = readFile(t, "testdata/real/mutex.pb.gz")
	by, total = Breakdown(p, 1, r)
	if by[Lock]*10 < total*9 {
		t.Errorf("mutex: lock is %d of %d", by[Lock], total)
	}
	if by, total := Breakdown(p, 7, r); total != 0 || len(by) != len(Categories) {
		t.Errorf("out-of-range index: %v %d", by, total)
	}
}

// TestBreakdownMatchesClassify checks the location cache against the plain
// leaf-first walk on every sample of every real profile.
func TestBreakdownMatchesClassify(t *testing.T) {
	r, _ := DefaultRules().WithWork(cipherWork...)
	for _, name := range []string{"wall", "cpu", "mutex", "block", "allocs"} {
		p := readFile(t, "testdata/real/"+name+".pb.gz")
		pc := r.ForProfile(p)
		for _, s := range p.Sample {
			var names []string
			for _, l := range s.Location {
				names = append(names, FrameNames(l)...)
			}
			if got, want := pc.Sample(s), r.Classify(names); got != want {
				t.Errorf("%s: %s vs %s for %v", name, got, want, names)
			}
		}
	}
}

func TestWriteFolded(t *testing.T) {
	fn := func(id uint64, name string) *profile.Function { return &profile.Function{ID: id, Name: name} }
	main, work, leaf := fn(1, "main.main"), fn(2, "pkg.work;evil\nname"), fn(3, "pkg.leaf")
	loc1 := &profile.Location{ID: 1, Line: []profile.Line{{Function: leaf}, {Function: work}}} // leaf inlined into work
	loc2 := &profile.Location{ID: 2, Line: []profile.Line{{Function: main}}}
	loc3 := &profile.Location{ID: 3, Address: 0x4f2a10}
	loc4 := &profile.Location{ID: 4, Line: []profile.Line{{Function: leaf, Line: 9}, {Function: work, Line: 7}}}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		Sample: []*profile.Sample{
			{Location: []*profile.Location{loc1, loc2}, Value: []int64{5}},
			{Location: []*profile.Location{loc2}, Value: []int64{0}},
			{Location: []*profile.Location{loc3, loc2}, Value: []int64{2}},
			// Another line of the same functions: merged into the first stack.
			{Location: []*profile.Location{loc4, loc2}, Value: []int64{3}},
		},
		Location: []*profile.Location{loc1, loc2, loc3, loc4},
		Function: []*profile.Function{main, work, leaf},
	}
	var buf bytes.Buffer
	if err := WriteFolded(&buf, p, 0); err != nil {
		t.Fatal(err)
	}
	want := "main.main;pkg.work_evil_name;pkg.leaf 8\nmain.main;0x4f2a10 2\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}
