package ciphercache

import (
	"crypto/sha256"
	"sync"
)

// lru is an access-ordered LRU map from key to digest with a fixed
// capacity. It is not safe for concurrent use; the variants wrap it in
// different locks. Entries live in one slice and link by index, so a hit
// allocates nothing.
type lru struct {
	index      map[string]int32
	entries    []entry
	head, tail int32 // most and least recently used; -1 when empty
}

type entry struct {
	key        string
	digest     [sha256.Size]byte
	prev, next int32
}

func newLRU(capacity int) *lru {
	return &lru{index: make(map[string]int32, capacity), entries: make([]entry, 0, capacity), head: -1, tail: -1}
}

// get looks key up; touch moves a hit to the front (access order).
func (c *lru) get(key []byte, touch bool) ([sha256.Size]byte, bool) {
	i, ok := c.index[string(key)] // no allocation: the compiler special-cases this conversion
	if !ok {
		return [sha256.Size]byte{}, false
	}
	if touch {
		c.unlink(i)
		c.pushFront(i)
	}
	return c.entries[i].digest, true
}

// put inserts key, evicting the least recently used entry when full.
func (c *lru) put(key []byte, d [sha256.Size]byte) {
	if i, ok := c.index[string(key)]; ok { // another goroutine inserted it first
		c.entries[i].digest = d
		return
	}
	var i int32
	if len(c.entries) < cap(c.entries) {
		c.entries = append(c.entries, entry{})
		i = int32(len(c.entries) - 1)
	} else {
		i = c.tail
		c.unlink(i)
		delete(c.index, c.entries[i].key)
	}
	c.entries[i].key = string(key)
	c.entries[i].digest = d
	c.index[c.entries[i].key] = i
	c.pushFront(i)
}

func (c *lru) unlink(i int32) {
	e := &c.entries[i]
	if e.prev >= 0 {
		c.entries[e.prev].next = e.next
	} else {
		c.head = e.next
	}
	if e.next >= 0 {
		c.entries[e.next].prev = e.prev
	} else {
		c.tail = e.prev
	}
}

func (c *lru) pushFront(i int32) {
	e := &c.entries[i]
	e.prev, e.next = -1, c.head
	if c.head >= 0 {
		c.entries[c.head].prev = i
	}
	c.head = i
	if c.tail < 0 {
		c.tail = i
	}
}

// mutexCache: one sync.Mutex around the LRU; the digest of a miss is
// computed outside the lock.
type mutexCache struct {
	mu sync.Mutex
	m  *lru
}

func newMutexCache() digestCache { return &mutexCache{m: newLRU(Capacity)} }

func (c *mutexCache) get(key []byte) ([sha256.Size]byte, bool) {
	c.mu.Lock()
	d, ok := c.m.get(key, true)
	c.mu.Unlock()
	if ok {
		return d, true
	}
	d = sha256.Sum256(key)
	c.mu.Lock()
	c.m.put(key, d)
	c.mu.Unlock()
	return d, false
}

// rwCache: lookups under the read lock, inserts under the write lock. A
// read lock cannot reorder the list, so hits do not refresh recency: the
// cache evicts in insertion order. That is the price of the proposal, and
// the same as the original's.
type rwCache struct {
	mu sync.RWMutex
	m  *lru
}

func newRWCache() digestCache { return &rwCache{m: newLRU(Capacity)} }

func (c *rwCache) get(key []byte) ([sha256.Size]byte, bool) {
	c.mu.RLock()
	d, ok := c.m.get(key, false)
	c.mu.RUnlock()
	if ok {
		return d, true
	}
	d = sha256.Sum256(key)
	c.mu.Lock()
	c.m.put(key, d)
	c.mu.Unlock()
	return d, false
}

// shardedCache splits the capacity over 16 independently locked LRUs. The
// shard is picked from a key byte: keys are random, so that spreads evenly
// without hashing the key twice.
type shardedCache struct {
	shards [16]struct {
		mutexCache
		_ [40]byte // keep shards on separate cache lines
	}
}

func newShardedCache() digestCache {
	c := &shardedCache{}
	for i := range c.shards {
		c.shards[i].m = newLRU(Capacity / len(c.shards))
	}
	return c
}

func (c *shardedCache) get(key []byte) ([sha256.Size]byte, bool) {
	return c.shards[key[len(key)-1]&15].get(key)
}
