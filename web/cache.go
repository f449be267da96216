package web

import "sync"

// cache keeps the max most recently added values by key, dropping the
// oldest first. Values are shared between requests and must not be
// modified. Builds of one key may run twice at once; the first to finish
// wins, which is cheaper than making every request wait on one lock.
type cache[V any] struct {
	mu    sync.Mutex
	max   int
	items map[string]V
	order []string
}

func newCache[V any](max int) *cache[V] {
	return &cache[V]{max: max, items: map[string]V{}}
}

// get returns the value of key, building and keeping it if absent.
func (c *cache[V]) get(key string, build func() (V, error)) (V, error) {
	c.mu.Lock()
	v, ok := c.items[key]
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := build()
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.items[key]; ok {
		return old, nil
	}
	c.items[key] = v
	c.order = append(c.order, key)
	if len(c.order) > c.max {
		delete(c.items, c.order[0])
		c.order = c.order[1:]
	}
	return v, nil
}
