// Package ciphercache is the cipher-cache scenario: is a SHA-256 digest
// cache behind a lock worth it?
//
// A P2P node cached SHA-256(routingKey) in an access-ordered LRU map of 128
// entries behind a mutex, and someone proposed a read-write lock instead. In
// the original (Java, JMH, 4 threads) the RW lock was 28–246% slower, and with
// 1024 distinct keys (a 12.5% hit ratio) not caching at all was fastest: the
// locking cost more than the hashing. Keys are 66 bytes (SSK) or 34 bytes
// (CHK).
//
// The variants are the original four (mutex, rwmutex, nocache-pool, nocache)
// and Go answers an expert would try: sha256.Sum256 on the stack, and a
// sharded cache that splits the lock.
package ciphercache

import (
	"crypto/sha256"
	"fmt"
	"hash"
	"math/rand/v2"
	"sync"

	"github.com/perflab/perflab"
)

// Capacity is the number of entries the caches hold, as in the original.
const Capacity = 128

func init() {
	perflab.Register(Scenario)
}

// Scenario is the cipher-cache scenario, registered as "cipher-cache".
var Scenario = &perflab.Scenario{
	Name: "cipher-cache",
	Doc:  "SHA-256 digest cache behind a mutex or RW-lock vs no cache",
	Long: "A P2P node cached SHA-256(routingKey) in a 128-entry LRU behind a mutex; a reviewer " +
		"proposed a read-write lock. In Java the RW lock was 28–246% slower at 4 threads, and with " +
		"1024 keys (12.5% hits) not caching at all was fastest: locking cost more than hashing. " +
		"Does that hold in Go?",
	Params: []perflab.Param{
		{Name: "keys", Doc: "distinct keys drawn uniformly (cache holds 128)", Kind: perflab.IntParam, Default: []string{"128", "1024"}, Min: 1, Max: 1 << 20},
		{Name: "key", Doc: "key type: ssk = 66 bytes, chk = 34 bytes", Default: []string{"ssk"}, Values: []string{"ssk", "chk"}},
	},
	Threads: []int{1, 4},
	Work:    []string{`^crypto/internal/fips140/sha256\.`, `^crypto/sha256\.`},
	Variants: []perflab.Variant{
		{Name: "mutex", Doc: "LRU behind one sync.Mutex; hash on a miss outside the lock", New: newCached(newMutexCache)},
		{Name: "rwmutex", Doc: "LRU behind sync.RWMutex: read lock to look up, write lock to insert", New: newCached(newRWCache)},
		{Name: "sharded", Doc: "16 mutex-guarded LRU shards sharing one 128-entry budget, picked by key byte", New: newCached(newShardedCache)},
		{Name: "nocache-pool", Doc: "no cache; hasher from a sync.Pool", New: newPool},
		{Name: "nocache", Doc: "no cache; a fresh sha256.New() every call", New: newFresh},
		{Name: "sum256", Doc: "no cache; sha256.Sum256 on the stack (no allocation)", New: newSum256},
	},
}

// keyLen returns the key length for the key parameter.
func keyLen(kind string) int {
	if kind == "chk" {
		return 34
	}
	return 66
}

// ringSize is the length of each worker's precomputed sequence of key
// indices: drawing keys costs one increment, no lock and no RNG call in the
// timed loop.
const ringSize = 1 << 13

// workload is the shared, read-only part of a case: the keys.
type workload struct {
	keys [][]byte
}

func newWorkload(p perflab.Params) (*workload, error) {
	n := p.Int("keys")
	if n < 1 {
		return nil, fmt.Errorf("keys=%d: want at least 1", n)
	}
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	w := &workload{keys: make([][]byte, n)}
	size := keyLen(p.String("key"))
	for i := range w.keys {
		k := make([]byte, size)
		for j := range k {
			k[j] = byte(rng.Uint32())
		}
		// Make every key distinct whatever the random bytes.
		k[0], k[1], k[2] = byte(i), byte(i>>8), byte(i>>16)
		w.keys[i] = k
	}
	return w, nil
}

// ring returns worker id's sequence of key indices, drawn uniformly with a
// per-worker seed so goroutines do not share RNG state.
func (w *workload) ring(id int) []uint32 {
	rng := rand.New(rand.NewPCG(uint64(id)+1, 0x5eed))
	r := make([]uint32, ringSize)
	for i := range r {
		r[i] = uint32(rng.IntN(len(w.keys)))
	}
	return r
}

// digestCache is what the cached variants share.
type digestCache interface {
	// get returns the digest of key and whether it was a hit.
	get(key []byte) ([sha256.Size]byte, bool)
}

type cachedCase struct {
	*workload
	cache digestCache
}

func newCached(mk func() digestCache) func(perflab.Params) (perflab.Case, error) {
	return func(p perflab.Params) (perflab.Case, error) {
		w, err := newWorkload(p)
		if err != nil {
			return nil, err
		}
		c := &cachedCase{workload: w, cache: mk()}
		// Warm the cache so timing starts in steady state.
		for _, i := range w.ring(-1) {
			c.cache.get(w.keys[i])
		}
		return c, nil
	}
}

type cachedWorker struct {
	c    *cachedCase
	ring []uint32
	pos  int
	hits int64
	sink byte
}

func (c *cachedCase) NewWorker(id int) perflab.Worker {
	return &cachedWorker{c: c, ring: c.ring(id)}
}

func (w *cachedWorker) Run(n int) {
	keys, ring, pos, cache := w.c.keys, w.ring, w.pos, w.c.cache
	var hits int64
	var sink byte
	for i := 0; i < n; i++ {
		d, hit := cache.get(keys[ring[pos&(ringSize-1)]])
		pos++
		sink ^= d[0]
		if hit {
			hits++
		}
	}
	w.pos, w.hits, w.sink = pos, w.hits+hits, w.sink^sink
}

// Counts reports cache hits; per operation that is the hit ratio.
func (w *cachedWorker) Counts() map[string]int64 { return map[string]int64{"hits": w.hits} }

// uncachedWorker runs digest on every key.
type uncachedWorker struct {
	keys   [][]byte
	ring   []uint32
	pos    int
	sink   byte
	digest func(key []byte) byte
}

func (w *uncachedWorker) Run(n int) {
	keys, ring, pos, digest := w.keys, w.ring, w.pos, w.digest
	var sink byte
	for i := 0; i < n; i++ {
		sink ^= digest(keys[ring[pos&(ringSize-1)]])
		pos++
	}
	w.pos, w.sink = pos, w.sink^sink
}

func uncached(p perflab.Params, mk func() func([]byte) byte) (perflab.Case, error) {
	w, err := newWorkload(p)
	if err != nil {
		return nil, err
	}
	return perflab.CaseFunc(func(id int) perflab.Worker {
		return &uncachedWorker{keys: w.keys, ring: w.ring(id), digest: mk()}
	}), nil
}

func newPool(p perflab.Params) (perflab.Case, error) {
	pool := &sync.Pool{New: func() any { return sha256.New() }}
	return uncached(p, func() func([]byte) byte {
		var buf [sha256.Size]byte
		return func(key []byte) byte {
			h := pool.Get().(hash.Hash)
			h.Reset()
			h.Write(key)
			d := h.Sum(buf[:0])
			pool.Put(h)
			return d[0]
		}
	})
}

func newFresh(p perflab.Params) (perflab.Case, error) {
	return uncached(p, func() func([]byte) byte {
		return func(key []byte) byte {
			h := sha256.New()
			h.Write(key)
			return h.Sum(nil)[0]
		}
	})
}

func newSum256(p perflab.Params) (perflab.Case, error) {
	return uncached(p, func() func([]byte) byte {
		return func(key []byte) byte {
			d := sha256.Sum256(key)
			return d[0]
		}
	})
}
