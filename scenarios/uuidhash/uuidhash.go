// Package uuidhash is the uuid-hash scenario: what does a name-based (v3,
// MD5) UUID cost, and is reusing the digest worth it?
//
// A runtime library built name-based UUIDs with a fresh MD5 digest per call.
// Reviewers proposed a per-thread cached digest, or cloning a prototype
// digest; the clone measured 1.52 → 2.19 ops/µs and 408 → 264 B/op in the
// original (Java, JMH).
//
// Every variant computes the RFC 4122 version-3 UUID of a name in the DNS
// namespace, MD5(namespace || name) with the version and variant bits set,
// exactly what github.com/google/uuid.NewMD5 returns. The variants are the
// original (new), the two proposals in Go form (worker: one digest per
// goroutine, Go's nearest thing to a thread-local; clone: hash.Cloner from a
// prototype that has already absorbed the namespace), and the Go answers an
// expert would try: md5.Sum on a stack array, a sync.Pool, one digest behind
// a mutex, and google/uuid itself.
package uuidhash

import (
	"crypto/md5"
	"fmt"
	"hash"
	"math/rand/v2"
	"sync"

	"github.com/google/uuid"
	"github.com/perflab/perflab"
)

func init() {
	perflab.Register(Scenario)
}

// Scenario is the uuid-hash scenario, registered as "uuid-hash".
var Scenario = &perflab.Scenario{
	Name:              "uuid-hash",
	Benchmark:         "BenchmarkUUIDHash",
	OpsPerMicrosecond: true,
	Doc:               "name-based (v3, MD5) UUIDs: fresh digest vs reused, pooled, cloned, md5.Sum",
	Long: "A runtime library built name-based UUIDs with a fresh MD5 digest per call; reviewers " +
		"proposed a per-thread cached digest or cloning a prototype (Java: 1.52 → 2.19 ops/µs, " +
		"408 → 264 B/op). Which reuse pays in Go? ops/µs = 1000 / (ns/op).",
	Params: []perflab.Param{
		{Name: "names", Doc: "distinct names cycled in random order (22–27 bytes each)", Kind: perflab.IntParam, Default: []string{"20000"}, Min: 1, Max: 1 << 20},
	},
	Threads: []int{1, 4},
	// MD5's block function and the digest methods around it. Allocating a
	// digest (mallocgc) and the mutex are classified as alloc and lock.
	Work: []string{`^crypto/md5\.`},
	Variants: []perflab.Variant{
		{Name: "new", Doc: "md5.New() per call, Sum(nil): the original", New: newCase(newFresh)},
		{Name: "sum", Doc: "md5.Sum over namespace+name copied into a per-goroutine buffer", New: newCase(newSum)},
		{Name: "pool", Doc: "digest from a sync.Pool, Reset before use", New: newCase(newPool)},
		{Name: "mutex", Doc: "one shared digest behind a sync.Mutex", New: newCase(newMutex)},
		{Name: "worker", Doc: "one digest per worker goroutine (the per-thread cache)", New: newCase(newWorker)},
		{Name: "clone", Doc: "hash.Cloner.Clone of a prototype that already hashed the namespace", New: newCase(newClone)},
		{Name: "google-uuid", Doc: "github.com/google/uuid.NewMD5 (md5.New per call inside)", New: newCase(newGoogle)},
	},
}

// namespace is the RFC 4122 DNS namespace, the one google/uuid calls
// NameSpaceDNS.
var namespace = [16]byte(uuid.NameSpaceDNS)

// ringMin is the shortest length of each worker's precomputed sequence of
// name indices, so the timed loop draws a name with one increment, no RNG.
const ringMin = 1 << 13

// v3 turns the first 16 bytes of an MD5 sum into a version-3 UUID.
func v3(sum []byte) (u [16]byte) {
	copy(u[:], sum)
	u[6] = u[6]&0x0f | 0x30
	u[8] = u[8]&0x3f | 0x80
	return u
}

// uuidFunc computes the UUID of one name. Each worker gets its own from a
// variant's constructor, so per-goroutine state lives in the closure.
type uuidFunc func(name []byte) [16]byte

// uuidCase is the shared state: the names and the variant's constructor of
// per-worker functions.
type uuidCase struct {
	names [][]byte
	mk    func() uuidFunc
}

func newCase(mk func() func() uuidFunc) func(perflab.Params) (perflab.Case, error) {
	return func(p perflab.Params) (perflab.Case, error) {
		n := p.Int("names")
		if n < 1 {
			return nil, fmt.Errorf("names=%d: want at least 1", n)
		}
		return &uuidCase{names: makeNames(n), mk: mk()}, nil
	}
}

// makeNames returns n distinct host names of 22 to 27 bytes, each in its
// own allocation as names read from elsewhere would be.
func makeNames(n int) [][]byte {
	rng := rand.New(rand.NewPCG(3, uint64(n)))
	names := make([][]byte, n)
	for i := range names {
		names[i] = fmt.Appendf(nil, "node-%d-%04x.example.org", i, rng.Uint32()&0xffff)
	}
	return names
}

func (c *uuidCase) NewWorker(id int) perflab.Worker {
	rng := rand.New(rand.NewPCG(uint64(id)+1, 0x5eed))
	// A power of two long (the loop masks its position), at least as long
	// as the list, and filled with whole shuffles of it, so that every name
	// is hashed, in random order: 8,192 independent draws visited only
	// about 6,700 of the default 20,000 names.
	size := ringMin
	for size < len(c.names) {
		size *= 2
	}
	ring := make([]uint32, 0, size)
	for len(ring) < size {
		for _, i := range rng.Perm(len(c.names)) {
			if len(ring) == size {
				break
			}
			ring = append(ring, uint32(i))
		}
	}
	return &worker{names: c.names, ring: ring, mask: size - 1, uuid: c.mk()}
}

type worker struct {
	names [][]byte
	ring  []uint32
	mask  int // len(ring) - 1
	pos   int
	uuid  uuidFunc
	sink  byte
}

func (w *worker) Run(n int) {
	names, ring, mask, pos, f := w.names, w.ring, w.mask, w.pos, w.uuid
	var sink byte
	for i := 0; i < n; i++ {
		u := f(names[ring[pos&mask]])
		sink ^= u[0] ^ u[15]
		pos++
	}
	w.pos, w.sink = pos, w.sink^sink
}

func newFresh() func() uuidFunc {
	return func() uuidFunc {
		return func(name []byte) [16]byte {
			h := md5.New()
			h.Write(namespace[:])
			h.Write(name)
			return v3(h.Sum(nil))
		}
	}
}

func newSum() func() uuidFunc {
	return func() uuidFunc {
		var buf []byte
		return func(name []byte) [16]byte {
			buf = append(append(buf[:0], namespace[:]...), name...)
			s := md5.Sum(buf)
			return v3(s[:])
		}
	}
}

func newPool() func() uuidFunc {
	pool := &sync.Pool{New: func() any { return md5.New() }}
	return func() uuidFunc {
		var out [md5.Size]byte
		return func(name []byte) [16]byte {
			h := pool.Get().(hash.Hash)
			h.Reset()
			h.Write(namespace[:])
			h.Write(name)
			u := v3(h.Sum(out[:0]))
			pool.Put(h)
			return u
		}
	}
}

func newMutex() func() uuidFunc {
	var (
		mu  sync.Mutex
		h   = md5.New()
		out [md5.Size]byte
	)
	return func() uuidFunc {
		return func(name []byte) [16]byte {
			mu.Lock()
			h.Reset()
			h.Write(namespace[:])
			h.Write(name)
			u := v3(h.Sum(out[:0]))
			mu.Unlock()
			return u
		}
	}
}

func newWorker() func() uuidFunc {
	return func() uuidFunc {
		h := md5.New()
		var out [md5.Size]byte
		return func(name []byte) [16]byte {
			h.Reset()
			h.Write(namespace[:])
			h.Write(name)
			return v3(h.Sum(out[:0]))
		}
	}
}

func newClone() func() uuidFunc {
	proto := md5.New().(hash.Cloner)
	proto.Write(namespace[:])
	return func() uuidFunc {
		var out [md5.Size]byte
		return func(name []byte) [16]byte {
			// Clone only reads the prototype, so workers share it.
			h, err := proto.Clone()
			if err != nil {
				panic(err) // crypto/md5 always clones
			}
			h.Write(name)
			return v3(h.Sum(out[:0]))
		}
	}
}

func newGoogle() func() uuidFunc {
	return func() uuidFunc {
		return func(name []byte) [16]byte {
			return uuid.NewMD5(uuid.NameSpaceDNS, name)
		}
	}
}
