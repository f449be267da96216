// Package benchfix is the fixture perflab bench is tested on: benchmarks
// whose time is known by construction, each timing its own parts with
// time.Now and reporting them with b.ReportMetric.
package benchfix

import (
	"crypto/sha256"
	"sync"
)

// Hash hashes buf n times, chaining the sums so no call can be skipped.
func Hash(buf []byte, n int) [32]byte {
	var sum [32]byte
	for range n {
		copy(buf, sum[:])
		sum = sha256.Sum256(buf)
	}
	return sum
}

// Cache is a map guarded by one mutex: every op hashes outside the lock,
// then hashes again holding it, so goroutines contend for it.
type Cache struct {
	mu  sync.Mutex
	sum [32]byte
}

// Locked hashes buf n times holding the cache's lock.
func (c *Cache) Locked(buf []byte, n int) {
	c.mu.Lock()
	c.sum = Hash(buf, n)
	c.mu.Unlock()
}
