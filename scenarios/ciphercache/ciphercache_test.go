package ciphercache

import (
	"crypto/sha256"
	"testing"

	"github.com/perflab/perflab"
)

func TestVariantsComputeSHA256(t *testing.T) {
	for _, v := range Scenario.Variants {
		for _, key := range []string{"ssk", "chk"} {
			t.Run(v.Name+"/"+key, func(t *testing.T) {
				p := perflab.Params{"keys": "200", "key": key}
				cs, err := v.New(p)
				if err != nil {
					t.Fatal(err)
				}
				w, _ := newWorkload(p)
				if got, want := len(w.keys[0]), keyLen(key); got != want {
					t.Fatalf("key length %d, want %d", got, want)
				}
				// Drive the worker's digest path directly and check it.
				switch c := cs.(type) {
				case *cachedCase:
					for round := 0; round < 2; round++ {
						for _, k := range w.keys {
							d, _ := c.cache.get(k)
							if d != sha256.Sum256(k) {
								t.Fatalf("wrong digest for key %x", k[:4])
							}
						}
					}
				default:
					wk := cs.NewWorker(0).(*uncachedWorker)
					for _, k := range w.keys {
						if got, want := wk.digest(k), sha256.Sum256(k); got != want[0] {
							t.Fatalf("digest byte %x, want %x", got, want[0])
						}
					}
				}
			})
		}
	}
}

func TestHitRatio(t *testing.T) {
	tests := []struct {
		name     string
		variant  string
		keys     string
		min, max float64
	}{
		{"all keys fit", "mutex", "128", 1, 1},
		{"all keys fit rw", "rwmutex", "128", 1, 1},
		{"one in eight fit", "mutex", "1024", 0.10, 0.15},
		{"one in eight fit rw", "rwmutex", "1024", 0.10, 0.15},
		{"sharded", "sharded", "1024", 0.08, 0.17},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, _ := Scenario.Variant(tt.variant)
			cs, err := v.New(perflab.Params{"keys": tt.keys, "key": "ssk"})
			if err != nil {
				t.Fatal(err)
			}
			w := cs.NewWorker(0)
			const n = 50000
			w.Run(n)
			ratio := float64(w.(perflab.Counter).Counts()["hits"]) / n
			if ratio < tt.min || ratio > tt.max {
				t.Errorf("hit ratio %.3f, want [%.2f, %.2f]", ratio, tt.min, tt.max)
			}
		})
	}
}

func TestLRUEvictsLeastRecentlyUsed(t *testing.T) {
	c := newLRU(2)
	a, b, d := []byte("a"), []byte("b"), []byte("d")
	c.put(a, sha256.Sum256(a))
	c.put(b, sha256.Sum256(b))
	c.get(a, true) // a is now most recent
	c.put(d, sha256.Sum256(d))
	if _, ok := c.get(b, false); ok {
		t.Error("b should have been evicted")
	}
	for _, k := range [][]byte{a, d} {
		if got, ok := c.get(k, false); !ok || got != sha256.Sum256(k) {
			t.Errorf("%s missing or wrong", k)
		}
	}
	if len(c.index) != 2 {
		t.Errorf("index has %d entries, want 2", len(c.index))
	}
}

func TestConcurrentWorkers(t *testing.T) {
	// Under -race this checks the locking of every variant.
	for _, v := range Scenario.Variants {
		t.Run(v.Name, func(t *testing.T) {
			cs, err := v.New(perflab.Params{"keys": "1024", "key": "chk"})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan bool)
			for id := 0; id < 4; id++ {
				go func() { cs.NewWorker(id).Run(2000); done <- true }()
			}
			for i := 0; i < 4; i++ {
				<-done
			}
		})
	}
}

// BenchmarkCipherCache runs every default case through the testing.B
// adapter, under the same names as `perflab run cipher-cache`.
func BenchmarkCipherCache(b *testing.B) { perflab.BenchmarkScenario(b, Scenario) }
