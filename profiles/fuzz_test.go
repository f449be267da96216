package profiles

import (
	"bufio"
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// FuzzRead feeds arbitrary bytes to Read: it must return a profile or an
// error, never panic, and a profile it returns must hold what the rest of
// perflab relies on: every sample classifies into a known category, the
// categories sum to the total (sums saturate, never wrap), and the folded
// stacks read back give the same total per stack as the samples. The seed
// corpus in testdata/fuzz/FuzzRead holds a real CPU and mutex profile
// (compressed and not), truncations, near-misses and issue 14's hostile
// shapes (a huge name deep, a stack 100,000 deep, a sample bomb).
func FuzzRead(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0x1f, 0x8b})
	for _, p := range hostileShapes() {
		var buf bytes.Buffer
		p.Write(&buf)
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := read(bytes.NewReader(data), 1<<20, 8<<20, 64<<20)
		if err != nil {
			return
		}
		r := DefaultRules()
		pc := r.ForProfile(p)
		for _, s := range p.Sample {
			if c := pc.Sample(s); !c.Valid() {
				t.Fatalf("sample classified as %q, not a category", c)
			}
		}
		for i := range p.SampleType {
			by, total := Breakdown(p, i, r)
			var sum int64
			for _, v := range by {
				if v < 0 {
					t.Fatalf("negative category value %d", v)
				}
				sum = AddSaturating(sum, v)
			}
			if sum != total {
				t.Fatalf("sample type %d: categories sum to %d, total %d", i, sum, total)
			}
			var folded bytes.Buffer
			if err := WriteFolded(&folded, p, i); err != nil {
				t.Fatal(err)
			}
			if got, want := foldedSums(t, folded.Bytes()), sampleSums(p, i); got != want {
				t.Fatalf("sample type %d: folded stacks read back to %v, the samples sum to %v", i, got, want)
			}
		}
	})
}

// sampleSums is the sum of the samples' values, wrapping as int64 does,
// so that two groupings of the same values agree.
func sampleSums(p *profile.Profile, i int) int64 {
	var s int64
	for _, smp := range p.Sample {
		if i < len(smp.Value) {
			s += smp.Value[i]
		}
	}
	return s
}

// foldedSums reads folded stacks back: every line is "stack value", the
// stack's frames separated by ';', none of them with a line break.
func foldedSums(t *testing.T, b []byte) int64 {
	var s int64
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			t.Fatalf("folded line %q has no value", line)
		}
		v, err := strconv.ParseInt(line[i+1:], 10, 64)
		if err != nil {
			t.Fatalf("folded line %q: %v", line, err)
		}
		s += v
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading folded stacks back: %v", err)
	}
	return s
}

// hostileShapes are issue 14's, scaled to a fuzzer's limits: a 4 KiB
// name 2,000 deep, a stack 100,000 deep, 100,000 tiny samples, and values
// that overflow int64 and are negative.
func hostileShapes() []*profile.Profile {
	deep := func(name string, depth int, vals ...int64) *profile.Profile {
		fn := &profile.Function{ID: 1, Name: name}
		loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
		p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "cpu", Unit: "nanoseconds"}}, Location: []*profile.Location{loc}, Function: []*profile.Function{fn}}
		st := make([]*profile.Location, depth)
		for i := range st {
			st[i] = loc
		}
		for _, v := range vals {
			p.Sample = append(p.Sample, &profile.Sample{Location: st, Value: []int64{v}})
		}
		return p
	}
	bomb := deep("f", 4, 1)
	for range 100_000 {
		bomb.Sample = append(bomb.Sample, &profile.Sample{Location: bomb.Sample[0].Location, Value: []int64{1}})
	}
	return []*profile.Profile{
		deep(strings.Repeat("x;\n", 4<<10/3), 2000, 1000),
		deep("main.f", 100_000, 1),
		bomb,
		deep("runtime.mallocgc", 3, math.MaxInt64, math.MaxInt64, -5),
	}
}

func FuzzParseRules(f *testing.F) {
	f.Add("lock ^a\\.b$\n# c\nwork? x\n")
	f.Add("gc\t(\n")
	f.Fuzz(func(t *testing.T, src string) {
		r, err := ParseRules(bytes.NewReader([]byte(src)), "fuzz")
		if err != nil {
			return
		}
		for _, stack := range [][]string{{"a.b"}, {"runtime.mallocgc"}, {src}, {}, {"main.main", "sync.(*Mutex).Lock", src}} {
			if c := r.Classify(stack); !c.Valid() {
				t.Fatalf("Classify(%q) = %q, not a category", stack, c)
			}
		}
	})
}
