package web

import (
	"bytes"
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/profiles"
	"github.com/perflab/perflab/profiles/flame"
)

// built is what the server keeps of one profile (or a diff of two), for
// one sample type and set of rules: the tree flame.svg and /folded stream
// from, the JSON the interactive graph draws, and the top-functions view.
// It is shared between requests and must not be modified.
type built struct {
	tree    *flame.Tree // nil for a diff, which keeps its JSON only
	json    []byte
	jsonErr error
	view    *profileView // without its URLs, which depend on the request
	samples int
	types   []profile.ValueType
	idx     int // the sample type drawn
	// rules, in an entry of its own, is a stored run's compiled
	// classification (Server.rulesOfRun), kept under its lease like a tree.
	rules *runRules
}

// builtCache keeps built trees, the most recently used first, each with
// the lease of memory budget it holds: at most max of them, and fewer when
// the budget needs room for a parse (memBudget.evict). Concurrent requests
// for one key build it once (the others wait for it); a failed build is
// not kept.
type builtCache struct {
	builds atomic.Int64 // builds started, for tests
	mu     sync.Mutex
	max    int
	items  map[string]*builtEntry
	lru    *list.List // of *builtEntry, front most recent
}

type builtEntry struct {
	key   string
	ready chan struct{}
	v     *built
	err   error
	lease *lease
	refs  int  // requests using it
	gone  bool // out of the cache: the last request releases the lease
	elem  *list.Element
}

func newBuiltCache(max int) *builtCache {
	return &builtCache{max: max, items: map[string]*builtEntry{}, lru: list.New()}
}

// get returns the value built for key, building it with build if absent,
// and a function to call when done with it: until then its memory stays
// charged even if the cache drops it.
func (c *builtCache) get(ctx context.Context, key string, build func(context.Context) (*built, *lease, error)) (*built, func(), error) {
	c.mu.Lock()
	e, ok := c.items[key]
	if ok {
		e.refs++
		if e.elem != nil {
			c.lru.MoveToFront(e.elem)
		}
		c.mu.Unlock()
		select {
		case <-e.ready:
		case <-ctx.Done():
			c.done(e)
			return nil, nil, ctx.Err()
		}
		if e.err != nil {
			c.done(e)
			return nil, nil, e.err
		}
		return e.v, func() { c.done(e) }, nil
	}
	e = &builtEntry{key: key, ready: make(chan struct{}), refs: 1}
	c.items[key] = e
	e.elem = c.lru.PushFront(e)
	c.mu.Unlock()

	c.builds.Add(1)
	func() {
		defer func() {
			if v := recover(); v != nil {
				e.v, e.err = nil, fmt.Errorf("internal error building the flame graph: %v", v)
			}
		}()
		e.v, e.lease, e.err = build(ctx)
	}()
	var drop []*lease
	c.mu.Lock()
	if e.err != nil {
		c.remove(e)
	}
	close(e.ready)
	for c.lru.Len() > c.max {
		l, ok := c.evictLocked()
		if !ok {
			break
		}
		drop = append(drop, l)
	}
	c.mu.Unlock()
	for _, l := range drop {
		l.release()
	}
	if e.err != nil {
		c.done(e)
		return nil, nil, e.err
	}
	return e.v, func() { c.done(e) }, nil
}

// done ends one request's use of e.
func (c *builtCache) done(e *builtEntry) {
	c.mu.Lock()
	e.refs--
	var l *lease
	if e.refs == 0 && e.gone {
		l = e.lease
	}
	c.mu.Unlock()
	l.release()
}

// remove takes e out of the cache (mu held).
func (c *builtCache) remove(e *builtEntry) {
	if c.items[e.key] == e {
		delete(c.items, e.key)
	}
	if e.elem != nil {
		c.lru.Remove(e.elem)
		e.elem = nil
	}
	e.gone = true
}

// evictLocked drops the least recently used entry that is built, and
// returns its lease if no request holds it (the caller releases it
// outside mu; otherwise its last request does); ok is false if there was
// none to drop.
func (c *builtCache) evictLocked() (l *lease, ok bool) {
	for el := c.lru.Back(); el != nil; el = el.Prev() {
		e := el.Value.(*builtEntry)
		select {
		case <-e.ready:
		default:
			continue // being built
		}
		c.remove(e)
		if e.refs == 0 {
			return e.lease, true
		}
		return nil, true
	}
	return nil, false
}

// evictIdle drops the least recently used entry no request holds, giving
// its memory back; it reports whether there was one (memBudget.evict).
func (c *builtCache) evictIdle() bool {
	c.mu.Lock()
	var l *lease
	for el := c.lru.Back(); el != nil; el = el.Prev() {
		e := el.Value.(*builtEntry)
		select {
		case <-e.ready:
		default:
			continue
		}
		if e.refs == 0 && e.lease.size() > 0 {
			c.remove(e)
			l = e.lease
			break
		}
	}
	c.mu.Unlock()
	if l == nil {
		return false
	}
	l.release()
	return true
}

// parseReserve is the most a parse may take: the limit on every path,
// profiles.MaxMemory, within half the server's budget. Half, because the
// uploads held in memory keep up to a quarter of it for as long as they
// are kept (uploadCache), and a reservation of the whole budget would
// then wait for ever.
func (s *Server) parseReserve() int64 { return min(maxProfileMemory, s.mem.limit/2) }

// parse decodes a profile of size compressed bytes for drawing, under the
// server's memory budget. It first reserves what a real profile of that
// size takes (a generous 32 bytes decoded per compressed byte: a profile
// of a million stacks takes 17), so that real profiles are read in
// parallel; one that needs more (a crafted file of tiny samples) is read
// again under the whole reservation, which only one or two parses can hold
// at once. The lease returned holds what was reserved; the caller shrinks
// it to what it keeps.
func (s *Server) parse(ctx context.Context, size int64, open func() (io.Reader, error)) (*flame.Source, *lease, error) {
	full := s.parseReserve()
	tries := []int64{min(full, 32*size+32<<20), full}
	if tries[0] == full {
		tries = tries[1:]
	}
	for i, n := range tries {
		l, err := s.mem.acquire(ctx, n)
		if err != nil {
			return nil, nil, err
		}
		r, err := open()
		if err != nil {
			l.release()
			return nil, nil, err
		}
		src, err := flame.ReadSource(r, profiles.Limits{Compressed: max(size, 1), Uncompressed: maxProfileBytes, Memory: l.size()})
		if err != nil {
			l.release()
			if errors.Is(err, profiles.ErrMemoryLimit) && i+1 < len(tries) {
				continue
			}
			return nil, nil, err
		}
		return src, l, nil
	}
	panic("unreachable")
}

// parseFile is parse of an open regular file (through the store's door).
func (s *Server) parseFile(ctx context.Context, f *os.File, size int64) (*flame.Source, *lease, error) {
	return s.parse(ctx, size, func() (io.Reader, error) {
		_, err := f.Seek(0, io.SeekStart)
		return f, err
	})
}

// parseData is parse of bytes in memory (an upload).
func (s *Server) parseData(ctx context.Context, data []byte) (*flame.Source, *lease, error) {
	return s.parse(ctx, int64(len(data)), func() (io.Reader, error) { return bytes.NewReader(data), nil })
}

// errNoType marks a request for a sample type the profile does not have.
type errNoType struct{ err error }

func (e errNoType) Error() string { return e.err.Error() }

// buildTree builds src's tree of sample type typ and what the pages show
// of it, and shrinks l to what the result keeps.
func buildTree(src *flame.Source, opts flame.Options, l *lease) (*built, error) {
	idx, err := src.SampleIndex(opts.SampleType)
	if err != nil {
		if opts.SampleType != "" {
			return nil, errNoType{err}
		}
		idx = len(src.SampleTypes()) - 1
	}
	opts.SampleType = src.SampleTypes()[idx].Type
	t, err := flame.BuildSource(src, opts)
	if err != nil {
		return nil, err
	}
	b := &built{tree: t, samples: src.Samples(), types: src.SampleTypes(), idx: idx}
	var buf bytes.Buffer
	b.jsonErr = t.WriteJSON(&buf)
	b.json = safePage(buf.Bytes()) // names reach the canvas: no bidi overrides
	b.view = treeView(t, b.samples, "")
	l.shrink(t.Bytes() + int64(cap(b.json)) + viewBytes)
	return b, nil
}

// viewBytes is about what a top-functions view takes (40 rows).
const viewBytes = 64 << 10
