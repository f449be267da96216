package uuidhash

import (
	"crypto/md5"
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/perflab/perflab"
	"github.com/perflab/perflab/perflabtest"
)

// want computes the v3 UUID by the book: MD5 over namespace || name, then
// version 3 and the RFC 4122 variant.
func want(name []byte) [16]byte {
	s := md5.Sum(append(append([]byte(nil), namespace[:]...), name...))
	s[6] = s[6]&0x0f | 0x30
	s[8] = s[8]&0x3f | 0x80
	return s
}

func TestKnownUUID(t *testing.T) {
	// The v3 UUID of "www.example.com" in the DNS namespace, from RFC 9562
	// appendix A.2.
	if got := uuid.UUID(want([]byte("www.example.com"))).String(); got != "5df41881-3aed-3515-88a7-2f4a814cf09e" {
		t.Errorf("v3(www.example.com) = %s", got)
	}
}

func TestVariantsAgreeWithStdlibAndGoogleUUID(t *testing.T) {
	names := makeNames(300)
	for _, v := range Scenario.Variants {
		t.Run(v.Name, func(t *testing.T) {
			cs, err := v.New(perflab.Params{"names": "300"})
			if err != nil {
				t.Fatal(err)
			}
			f := cs.NewWorker(0).(*worker).uuid
			for round := 0; round < 2; round++ { // the second round reuses state
				for _, n := range names {
					got := f(n)
					if got != want(n) || got != uuid.NewMD5(uuid.NameSpaceDNS, n) {
						t.Fatalf("uuid(%s) = %x, want %x", n, got, want(n))
					}
				}
			}
		})
	}
}

func TestNamesDistinct(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range makeNames(20000) {
		if seen[string(n)] || len(n) < 22 || len(n) > 27 {
			t.Fatalf("name %q repeated or of unexpected length", n)
		}
		seen[string(n)] = true
	}
}

// TestRingCyclesEveryName: names=N means N distinct names are hashed,
// whatever N is relative to the ring's minimum length.
func TestRingCyclesEveryName(t *testing.T) {
	for _, n := range []int{1, 300, ringMin, 20000} {
		cs, err := Scenario.Variants[0].New(perflab.Params{"names": fmt.Sprint(n)})
		if err != nil {
			t.Fatal(err)
		}
		w := cs.NewWorker(1).(*worker)
		if len(w.ring) < n || len(w.ring)&(len(w.ring)-1) != 0 || w.mask != len(w.ring)-1 {
			t.Errorf("names=%d: ring of %d (mask %#x): want a power of two ≥ %d", n, len(w.ring), w.mask, n)
		}
		seen := make([]bool, n)
		for _, i := range w.ring {
			seen[i] = true
		}
		for i, ok := range seen {
			if !ok {
				t.Errorf("names=%d: name %d is never hashed", n, i)
				break
			}
		}
	}
}

func TestConcurrentWorkers(t *testing.T) {
	// Under -race this checks the sharing of every variant: the mutex, the
	// pool, the clone prototype.
	for _, v := range Scenario.Variants {
		t.Run(v.Name, func(t *testing.T) {
			cs, err := v.New(perflab.Params{"names": "1000"})
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for id := 0; id < 4; id++ {
				wg.Go(func() {
					w := cs.NewWorker(id).(*worker)
					for _, n := range makeNames(200) {
						if w.uuid(n) != want(n) {
							t.Errorf("wrong UUID for %s", n)
						}
					}
					w.Run(1000)
				})
			}
			wg.Wait()
		})
	}
}

// TestAllocations pins down the allocation counts docs/case-studies.md
// explains: md5.New inlines, so the compiler sees the concrete digest and
// keeps it on the stack (only Sum(nil)'s 16-byte result is allocated), and
// so does Clone; google/uuid passes the digest as a hash.Hash to a function
// that is not inlined, so there it escapes. The pool is left out: under
// -race sync.Pool drops items on purpose.
func TestAllocations(t *testing.T) {
	name := makeNames(1)[0]
	for _, tt := range []struct {
		variant string
		allocs  float64
	}{
		{"new", 1}, {"sum", 0}, {"mutex", 0}, {"worker", 0}, {"clone", 0}, {"google-uuid", 3},
	} {
		v, _ := Scenario.Variant(tt.variant)
		cs, _ := v.New(perflab.Params{"names": "1"})
		f := cs.NewWorker(0).(*worker).uuid
		f(name) // grow the sum variant's buffer once
		if got := testing.AllocsPerRun(100, func() { f(name) }); got != tt.allocs {
			t.Errorf("%s: %.0f allocs per UUID, want %.0f (update docs/case-studies.md if the compiler changed)", tt.variant, got, tt.allocs)
		}
	}
}

// BenchmarkUUIDHash runs every default case through the testing.B adapter,
// under the same names as `perflab run uuid-hash`.
func BenchmarkUUIDHash(b *testing.B) { perflabtest.BenchmarkScenario(b, Scenario) }
