package profiles

import (
	"bytes"
	"testing"
)

// FuzzRead feeds arbitrary bytes to Read: it must return a profile or an
// error, never panic, and a profile it returns must be classifiable and
// foldable. The seed corpus in testdata/fuzz/FuzzRead holds a real CPU and
// mutex profile (compressed and not), truncations and near-misses.
func FuzzRead(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := read(bytes.NewReader(data), 1<<20, 8<<20, 64<<20)
		if err != nil {
			return
		}
		r := DefaultRules()
		for i := range p.SampleType {
			Breakdown(p, i, r)
		}
		WriteFolded(new(bytes.Buffer), p, 0)
	})
}

func FuzzParseRules(f *testing.F) {
	f.Add("lock ^a\\.b$\n# c\nwork? x\n")
	f.Add("gc\t(\n")
	f.Fuzz(func(t *testing.T, src string) {
		r, err := ParseRules(bytes.NewReader([]byte(src)), "fuzz")
		if err != nil {
			return
		}
		r.Classify([]string{"a.b", "runtime.mallocgc", src})
	})
}
