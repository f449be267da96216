package web

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/store"
)

// runCache keeps decoded run.json files. Decoding them was half the CPU
// time of the load check (every case page lists the store to offer
// comparisons); a committed run does not change, and one that does (a
// checkpointed rewrite) changes its run.json's size or modification time.
// Cached runs are shared between requests and must not be modified.
type runCache struct {
	st    *store.Store
	mu    sync.Mutex
	items map[string]cachedRun
}

type cachedRun struct {
	run   *store.Run
	size  int64
	mtime time.Time
}

func newRunCache(st *store.Store) *runCache {
	return &runCache{st: st, items: map[string]cachedRun{}}
}

// load returns run id (a valid id, not "latest").
func (c *runCache) load(id string) (*store.Run, error) {
	fi, err := os.Stat(filepath.Join(c.st.Root, id, "run.json"))
	if err != nil {
		return c.st.Load(id) // for its error message
	}
	c.mu.Lock()
	it, ok := c.items[id]
	c.mu.Unlock()
	if ok && it.size == fi.Size() && it.mtime.Equal(fi.ModTime()) {
		return it.run, nil
	}
	run, err := c.st.Load(id)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.items[id] = cachedRun{run: run, size: fi.Size(), mtime: fi.ModTime()}
	c.mu.Unlock()
	return run, nil
}

// list returns the runs newest first, as store.List does, decoding only
// the run.json files that changed since the last call.
func (c *runCache) list() (runs []*store.Run, skipped []error, err error) {
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
	c.mu.Lock()
	for id := range c.items {
		if !seen[id] {
			delete(c.items, id)
		}
	}
	c.mu.Unlock()
	store.SortNewestFirst(runs)
	return runs, skipped, nil
}

// latest returns the run "latest" names, as the CLI resolves it
// (store.LatestOf): the newest that measured something.
func (c *runCache) latest() (*store.Run, error) {
	runs, _, err := c.list()
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return c.st.Load(store.Latest) // for its error message
	}
	return store.LatestOf(runs), nil
}
