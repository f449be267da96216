package flame

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/profiles"
)

// stacksOf returns a profile's stacks, root first, with their summed
// values per sample type: what a flame graph is drawn from.
func stacksOf(p *profile.Profile) map[string][]int64 {
	out := map[string][]int64{}
	for _, s := range p.Sample {
		var names []string
		for i := len(s.Location) - 1; i >= 0; i-- {
			fn := profiles.FrameNames(s.Location[i])
			for j := len(fn) - 1; j >= 0; j-- {
				names = append(names, fn[j])
			}
		}
		key := strings.Join(names, ";")
		if out[key] == nil {
			out[key] = make([]int64, len(p.SampleType))
		}
		for i, v := range s.Value {
			out[key][i] += v
		}
	}
	return out
}

func stacksOfSource(s *Source) map[string][]int64 {
	out := map[string][]int64{}
	nt := len(s.sampleTypes)
	for k := range s.Samples() {
		var names []string
		locs := s.locs[s.start[k]:s.start[k+1]]
		for i := len(locs) - 1; i >= 0; i-- {
			for _, n := range s.locNames[s.locStart[locs[i]]:s.locStart[locs[i]+1]] {
				names = append(names, s.names[n])
			}
		}
		key := strings.Join(names, ";")
		if out[key] == nil {
			out[key] = make([]int64, nt)
		}
		for i := range nt {
			out[key][i] += s.value(k, i)
		}
	}
	return out
}

// sameProfile reports how src differs from p, or "".
func sameProfile(p *profile.Profile, src *Source) string {
	if len(p.SampleType) != len(src.sampleTypes) {
		return fmt.Sprintf("%d sample types, want %d", len(src.sampleTypes), len(p.SampleType))
	}
	for i, st := range p.SampleType {
		if src.sampleTypes[i] != *st {
			return fmt.Sprintf("sample type %d is %v, want %v", i, src.sampleTypes[i], *st)
		}
	}
	if src.defaultType != p.DefaultSampleType || src.period != p.Period || (p.PeriodType != nil && src.periodType != *p.PeriodType) {
		return fmt.Sprintf("default %q period %d %v, want %q %d %v", src.defaultType, src.period, src.periodType, p.DefaultSampleType, p.Period, p.PeriodType)
	}
	want, got := stacksOf(p), stacksOfSource(src)
	if len(want) != len(got) {
		return fmt.Sprintf("%d stacks, want %d", len(got), len(want))
	}
	for k, v := range want {
		if !slices.Equal(got[k], v) {
			return fmt.Sprintf("stack %q: %v, want %v", k, got[k], v)
		}
	}
	return ""
}

func encode(t testing.TB, p *profile.Profile, gz bool) []byte {
	var buf bytes.Buffer
	var err error
	if gz {
		err = p.Write(&buf)
	} else {
		err = p.WriteUncompressed(&buf)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestReadSourceMatchesParse decodes real Go 1.26 profiles (CPU, fgprof,
// mutex, block, allocs), generated and hand-built ones with the streaming
// decoder and with pprof's parser: the same sample types, stacks and
// totals.
func TestReadSourceMatchesParse(t *testing.T) {
	inputs := map[string][]byte{}
	for _, name := range realProfiles {
		inputs["real/"+name] = readReal(t, name)
	}
	inputs["generated"] = encode(t, genProfile(3000, 9), true)
	inputs["small, uncompressed"] = encode(t, fake(small), false)
	inputs["hostile"] = encode(t, hostileProfile(), true)
	inputs["traced wall"] = encode(t, tracedWallProfile(), true)
	inlined := fake(small)
	// An inlined call and a location with no symbols.
	inlined.Location[0].Line = append(inlined.Location[0].Line, profile.Line{Function: inlined.Function[1]})
	inlined.Location[1].Line = nil
	inlined.Location[1].Address = 0x4f2a10
	inputs["inlined"] = encode(t, inlined, true)
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			p, err := profiles.Read(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			src, err := ReadSource(bytes.NewReader(data), profiles.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := sameProfile(p, src); diff != "" {
				t.Error(diff)
			}
			// The folded stacks are profiles.WriteFolded's.
			for idx := range p.SampleType {
				var fa, fb bytes.Buffer
				if err := profiles.WriteFolded(&fa, p, idx); err != nil {
					t.Fatal(err)
				}
				if err := src.WriteFolded(&fb, idx); err != nil {
					t.Fatal(err)
				}
				if fa.String() != fb.String() {
					t.Errorf("folded %s differs from profiles.WriteFolded", p.SampleType[idx].Type)
				}
			}
			// And the graphs drawn from either are the same.
			a, err := Build(p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			b, err := BuildSource(src, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var sa, sb bytes.Buffer
			a.WriteSVG(&sa)
			b.WriteSVG(&sb)
			if !bytes.Equal(sa.Bytes(), sb.Bytes()) {
				t.Error("the SVG drawn from the streamed profile differs from the parsed one's")
			}
		})
	}
}

func TestReadSourceErrors(t *testing.T) {
	good := encode(t, fake(small), true)
	var gzgz bytes.Buffer
	zw := gzip.NewWriter(&gzgz)
	zw.Write(good)
	zw.Close()
	var empty bytes.Buffer
	gzip.NewWriter(&empty).Close()
	// A million tiny samples: small on the wire, large decoded.
	bomb := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}}}
	fn := &profile.Function{ID: 1, Name: "f"}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
	bomb.Function, bomb.Location = []*profile.Function{fn}, []*profile.Location{loc}
	for range 200000 {
		bomb.Sample = append(bomb.Sample, &profile.Sample{Location: []*profile.Location{loc, loc, loc, loc}, Value: []int64{1}})
	}
	bombData := encode(t, bomb, true)
	unknownLoc := fake(small)
	unknownLoc.Location = unknownLoc.Location[1:]
	for _, tc := range []struct {
		name string
		data []byte
		l    profiles.Limits
		want string
	}{
		{"empty", nil, profiles.Limits{}, "the input is empty"},
		{"empty gzip", empty.Bytes(), profiles.Limits{}, "the gzip data is empty"},
		{"truncated gzip", good[:len(good)/2], profiles.Limits{}, "truncated gzip data"},
		{"gzip in gzip", gzgz.Bytes(), profiles.Limits{}, "gzip inside gzip"},
		{"text", []byte("this is not a profile"), profiles.Limits{}, "not a pprof profile"},
		{"garbage protobuf", []byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}, profiles.Limits{}, "not a pprof profile"},
		{"too large", good, profiles.Limits{Compressed: 100}, "larger than"},
		{"bomb, expanded", bombData, profiles.Limits{Uncompressed: 1 << 20}, "once decompressed (a gzip bomb?)"},
		{"bomb, decoded", bombData, profiles.Limits{Memory: 16 << 20}, "more than the limit of 16 MiB"},
		{"unknown location", encode(t, unknownLoc, true), profiles.Limits{}, "unknown location"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadSource(bytes.NewReader(tc.data), tc.l)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
			if strings.Contains(tc.want, "not a pprof") && !errors.Is(err, profiles.ErrNotProfile) {
				t.Errorf("%v is not ErrNotProfile", err)
			}
		})
	}
	// What the budget lets through, it lets through whole.
	if src, err := ReadSource(bytes.NewReader(bombData), profiles.Limits{}); err != nil || src.Samples() != 200000 {
		t.Errorf("bomb under the default limits: %v", err)
	}
}

// TestReadSourceLegacy reads a legacy text profile through pprof's parser.
func TestReadSourceLegacy(t *testing.T) {
	text := "--- contention:\ncycles/second=3000000000\nsampling period=1\n100 300000000 @ 0x1 0x2\n"
	p, err := profiles.Read(strings.NewReader(text))
	if err != nil {
		t.Skipf("pprof does not read this legacy form: %v", err)
	}
	src, err := ReadSource(strings.NewReader(text), profiles.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := sameProfile(p, src); diff != "" {
		t.Error(diff)
	}
}

// FuzzReadSource holds the streaming decoder to pprof's parser: what one
// reads the other reads, with the same stacks and totals. The corpus under
// testdata/fuzz/FuzzReadSource has real and hand-built profiles; run
// `go test ./profiles/flame -fuzz FuzzReadSource` to search further.
func FuzzReadSource(f *testing.F) {
	f.Add(encode(f, fake(small), false))
	f.Add(encode(f, tracedWallProfile(), false))
	f.Add(encode(f, hostileProfile(), false))
	f.Fuzz(func(t *testing.T, data []byte) {
		l := profiles.Limits{Memory: 256 << 20}
		p, perr := profiles.ReadLimited(bytes.NewReader(data), l)
		src, serr := ReadSource(bytes.NewReader(data), l)
		switch {
		case perr == nil && serr == nil:
			if diff := sameProfile(p, src); diff != "" {
				t.Fatal(diff)
			}
		case perr == nil:
			t.Fatalf("pprof reads it, the streaming decoder says %v", serr)
		case serr == nil:
			t.Fatalf("the streaming decoder reads it, pprof says %v", perr)
		}
	})
}
