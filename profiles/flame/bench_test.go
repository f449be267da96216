package flame

import (
	"bytes"
	"io"
	"sync"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/profiles"
)

var benchProfiles sync.Map // stacks → []byte (gzipped profile)

// benchData returns the encoded yardstick profile with n unique stacks.
func benchData(b *testing.B, n int) []byte {
	if v, ok := benchProfiles.Load(n); ok {
		return v.([]byte)
	}
	var buf bytes.Buffer
	if err := genProfile(n, 1).Write(&buf); err != nil {
		b.Fatal(err)
	}
	benchProfiles.Store(n, buf.Bytes())
	return buf.Bytes()
}

func benchProfile(b *testing.B, n int) *profile.Profile {
	p, err := profiles.Read(bytes.NewReader(benchData(b, n)))
	if err != nil {
		b.Fatal(err)
	}
	return p
}

var sizes = []struct {
	name string
	n    int
}{{"stacks=1k", 1000}, {"stacks=10k", 10000}, {"stacks=100k", 100000}}

// BenchmarkSVG is `perflab flame -o x.svg` without the file system: read
// the .pb.gz, build the tree, write the SVG.
func BenchmarkSVG(b *testing.B) {
	for _, s := range sizes {
		b.Run(s.name, func(b *testing.B) {
			data := benchData(b, s.n)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				p, err := profiles.Read(bytes.NewReader(data))
				if err != nil {
					b.Fatal(err)
				}
				if err := WriteSVG(io.Discard, p, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHTML is `perflab flame -o x.html` without the file system.
func BenchmarkHTML(b *testing.B) {
	for _, s := range sizes {
		b.Run(s.name, func(b *testing.B) {
			data := benchData(b, s.n)
			b.ReportAllocs()
			var size int
			for b.Loop() {
				p, err := profiles.Read(bytes.NewReader(data))
				if err != nil {
					b.Fatal(err)
				}
				t, err := Build(p, Options{})
				if err != nil {
					b.Fatal(err)
				}
				var buf bytes.Buffer
				if err := t.WriteHTML(&buf); err != nil {
					b.Fatal(err)
				}
				size = buf.Len()
			}
			b.ReportMetric(float64(size)/1e6, "MB-html")
		})
	}
}

// BenchmarkRead is the pprof decoding alone: the floor under every output,
// and what `go tool pprof -raw` also pays.
func BenchmarkRead(b *testing.B) {
	for _, s := range sizes {
		b.Run(s.name, func(b *testing.B) {
			data := benchData(b, s.n)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := profiles.Read(bytes.NewReader(data)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBuild is the tree and classification alone.
func BenchmarkBuild(b *testing.B) {
	for _, s := range sizes {
		b.Run(s.name, func(b *testing.B) {
			p := benchProfile(b, s.n)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Build(p, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBreakdown is the time budget of one profile (package profiles'
// classifier with its location cache).
func BenchmarkBreakdown(b *testing.B) {
	p := benchProfile(b, 100000)
	r := profiles.DefaultRules()
	b.ReportAllocs()
	for b.Loop() {
		profiles.Breakdown(p, 1, r)
	}
}

// BenchmarkStreamSVG is BenchmarkSVG on the streaming path (ReadSource),
// which `perflab flame` and the web upload take.
func BenchmarkStreamSVG(b *testing.B) {
	for _, s := range sizes {
		b.Run(s.name, func(b *testing.B) {
			data := benchData(b, s.n)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				src, err := ReadSource(bytes.NewReader(data), profiles.Limits{})
				if err != nil {
					b.Fatal(err)
				}
				t, err := BuildSource(src, Options{})
				if err != nil {
					b.Fatal(err)
				}
				if err := t.WriteSVG(io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStreamRead is the streaming decoder alone.
func BenchmarkStreamRead(b *testing.B) {
	for _, s := range sizes {
		b.Run(s.name, func(b *testing.B) {
			data := benchData(b, s.n)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ReadSource(bytes.NewReader(data), profiles.Limits{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
