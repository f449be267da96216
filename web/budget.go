package web

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// One memory budget per server (issue 14). Parsing a profile was bounded
// (two at a time) but what was built from it was not: the parsed profile
// lived on through the views and trees of a request, flame.svg and /folded
// were rebuilt for every request, and /pyroscope parsed outside the bound
// (8 uploads of 25 KB at once took 4.05 GB; 32 clients of one 200k-stack
// profile, 3 GB). Now every parse reserves bytes of one budget before it
// starts, and the reservation is held, shrunk to what is kept, for as long
// as what was built from it is: a tree in the cache, an upload's views.

// DefaultMemoryBudget is the memory a Server lets profiles and what is
// built from them take at once, unless Options.MemoryBudget says otherwise.
const DefaultMemoryBudget = 2 << 30

// memBudget is a weighted semaphore in bytes.
type memBudget struct {
	mu      sync.Mutex
	limit   int64
	used    int64
	peak    int64
	changed chan struct{} // closed and replaced when used goes down
	// evict, if set, is called (without mu) when a reservation must wait:
	// it drops something idle that holds budget and reports whether it
	// did (the cache of built trees).
	evict func() bool
}

func newMemBudget(limit int64) *memBudget {
	return &memBudget{limit: limit, changed: make(chan struct{})}
}

// errBusy is what a request that waited too long for memory gets.
var errBusy = errors.New("the server is busy with other profiles")

// lease is bytes of the budget held by one profile or what was built from
// it.
type lease struct {
	b        *memBudget
	mu       sync.Mutex
	n        int64
	released bool // by release: tryGrow refuses
}

// maxWait is the longest a request waits for memory before it is told
// the server is busy.
var maxWait = time.Minute

// acquire reserves n bytes (at most the whole budget), waiting until they
// are free, ctx is done or maxWait has passed.
func (b *memBudget) acquire(ctx context.Context, n int64) (*lease, error) {
	n = min(max(n, 0), b.limit)
	ctx, cancel := context.WithTimeout(ctx, maxWait)
	defer cancel()
	for {
		b.mu.Lock()
		if b.used+n <= b.limit {
			b.used += n
			b.peak = max(b.peak, b.used)
			b.mu.Unlock()
			return &lease{b: b, n: n}, nil
		}
		wait := b.changed
		b.mu.Unlock()
		if b.evict != nil && b.evict() {
			continue
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (%v waiting for %d MiB of its %d MiB memory budget)", errBusy, ctx.Err(), n>>20, b.limit>>20)
		}
	}
}

func (b *memBudget) give(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
}

// usage returns the bytes held now and the most ever held.
func (b *memBudget) usage() (used, peak int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used, b.peak
}

// shrink gives back all but n bytes of the lease.
func (l *lease) shrink(n int64) {
	if l == nil {
		return
	}
	l.mu.Lock()
	give := l.n - max(n, 0)
	if give > 0 {
		l.n -= give
	}
	l.mu.Unlock()
	l.b.give(give)
}

// release gives back the whole lease; releasing twice is harmless.
func (l *lease) release() {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.released = true
	l.mu.Unlock()
	l.shrink(0)
}

// size returns the bytes the lease holds.
func (l *lease) size() int64 {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// grow adds n bytes to the lease, waiting for them as acquire does: what
// is read or built a step at a time (an upload's body, its work patterns)
// is charged before each step.
func (l *lease) grow(ctx context.Context, n int64) error {
	more, err := l.b.acquire(ctx, n)
	if err != nil {
		return err
	}
	l.take(more)
	return nil
}

// tryGrow adds n bytes to the lease if the budget has them free now,
// without waiting or evicting: for what grows in the middle of other work
// and can do without (a rules' name cache). A released lease grows no
// more, so a charge that comes after its holder let go is refused.
func (l *lease) tryGrow(n int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return false
	}
	b := l.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if n < 0 || b.used+n > b.limit {
		return false
	}
	b.used += n
	b.peak = max(b.peak, b.used)
	l.n += n
	return true
}

// take moves the bytes of o into l: o holds nothing after.
func (l *lease) take(o *lease) {
	if o == nil {
		return
	}
	o.mu.Lock()
	n := o.n
	o.n = 0
	o.mu.Unlock()
	l.mu.Lock()
	l.n += n
	l.mu.Unlock()
}
