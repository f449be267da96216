package web

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/store"
)

// runCache keeps decoded run.json files. Decoding them was half the CPU
// time of the load check (every case page lists the store to offer
// comparisons); a committed run does not change, and one that does (a
// checkpointed rewrite) changes its run.json's size or modification time.
// Cached runs are shared between requests and must not be modified.
//
// Each decoded run holds a lease of the server's memory budget (issue 26:
// everything serve holds, in one accounting): a run.json may be 64 MiB,
// and the cache kept every run of the store outside the budget. When the
// budget needs room, the least recently loaded run is dropped (evictOne)
// and decoded again when next asked for.
type runCache struct {
	st    *store.Store
	mem   *memBudget
	mu    sync.Mutex
	items map[string]cachedRun
	tick  int64 // load order, for evictOne
}

type cachedRun struct {
	run   *model.Run
	size  int64
	mtime time.Time
	lease *lease
	used  int64 // c.tick when last loaded
}

func newRunCache(st *store.Store, mem *memBudget) *runCache {
	return &runCache{st: st, mem: mem, items: map[string]cachedRun{}}
}

// runBytes estimates what a decoded run.json of size bytes holds. Maps
// take several times their text: a run of 200,000 cases, each with a
// parameter map, held 111 MB decoded from 31 MB of JSON (3.6×); numbers
// take less than their text. Decoding also holds the file itself.
func runBytes(size int64) int64 { return 4*size + 4<<10 }

// evictOne drops the least recently loaded run, giving its memory back;
// it reports whether there was one (memBudget.evict). A request that holds
// the run keeps it alive until it is done: the budget counts it again when
// it is decoded again.
func (c *runCache) evictOne() bool {
	c.mu.Lock()
	var oldest string
	for id, it := range c.items {
		if oldest == "" || it.used < c.items[oldest].used {
			oldest = id
		}
	}
	it, ok := c.items[oldest]
	delete(c.items, oldest)
	c.mu.Unlock()
	if !ok {
		return false
	}
	it.lease.release()
	return true
}

// load returns run id (a valid id, not "latest").
func (c *runCache) load(id string) (*model.Run, error) {
	fi, err := os.Stat(filepath.Join(c.st.Root, id, "run.json"))
	if err != nil {
		return c.st.Load(id) // for its error message
	}
	c.mu.Lock()
	c.tick++
	it, ok := c.items[id]
	if ok && it.size == fi.Size() && it.mtime.Equal(fi.ModTime()) {
		it.used = c.tick
		c.items[id] = it
		c.mu.Unlock()
		return it.run, nil
	}
	c.mu.Unlock()
	// Charged before the decode, with the file's bytes it reads first.
	l, err := c.mem.acquire(context.Background(), runBytes(fi.Size())+fi.Size())
	if err != nil {
		return nil, err
	}
	run, err := c.st.Load(id)
	if err != nil {
		l.release()
		return nil, err
	}
	l.shrink(runBytes(fi.Size()))
	c.mu.Lock()
	old, had := c.items[id]
	c.items[id] = cachedRun{run: run, size: fi.Size(), mtime: fi.ModTime(), lease: l, used: c.tick}
	c.mu.Unlock()
	if had {
		old.lease.release()
	}
	return run, nil
}

// list returns the runs newest first, as store.List does, decoding only
// the run.json files that changed since the last call.
func (c *runCache) list() (runs []*model.Run, skipped []error, err error) {
	entries, err := os.ReadDir(c.st.Root)
	if os.IsNotExist(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	for _, e := range entries {
		// A symbolic link named like a run is loaded only to be refused
		// by the store, so the page says why it is not listed.
		if !e.IsDir() && e.Type()&fs.ModeSymlink == 0 || !store.ValidID(e.Name()) {
			continue
		}
		seen[e.Name()] = true
		r, err := c.load(e.Name())
		if err != nil {
			skipped = append(skipped, err)
			continue
		}
		runs = append(runs, r)
	}
	var gone []*lease
	c.mu.Lock()
	for id, it := range c.items {
		if !seen[id] {
			delete(c.items, id)
			gone = append(gone, it.lease)
		}
	}
	c.mu.Unlock()
	for _, l := range gone {
		l.release()
	}
	model.SortNewestFirst(runs)
	return runs, skipped, nil
}

// latest returns the run "latest" names, as the CLI resolves it
// (model.LatestOf): the newest that measured something.
func (c *runCache) latest() (*model.Run, error) {
	runs, _, err := c.list()
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return c.st.Load(store.Latest) // for its error message
	}
	return model.LatestOf(runs), nil
}
