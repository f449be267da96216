package web

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/profiles"
)

// TestRulesNameCacheCharged: a stored run's compiled classification is
// kept for every profile of the run drawn while it is cached, and its
// cache of names' classes kept every name of them outside the budget
// (issue 26). Each name is charged to the classification's lease before
// it is kept, refused (classified, not kept) when the budget has no room,
// and given back with the lease; after that nothing more is charged.
func TestRulesNameCacheCharged(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	st := store.Open(t.TempDir())
	run := storeClassified(t, st, t0, "my-own", &model.Classification{Work: []string{`^example\.com/`}})
	names := make([]string, 1000)
	for i := range names {
		names[i] = fmt.Sprintf("example.com/pkg.f%04d%s", i, strings.Repeat("x", 1000))
	}
	perName := int64(profiles.CacheEntryBytes + len(names[0]))
	classify := func(s *Server) (held int64, release func()) {
		t.Helper()
		rr, done, err := s.rulesOfRun(t.Context(), run)
		if err != nil {
			t.Fatal(err)
		}
		before, _ := s.mem.usage()
		for _, n := range names {
			if rr.rules.Frame(n).Category() != profiles.Work {
				t.Fatalf("%.20s…: not work", n)
			}
		}
		after, _ := s.mem.usage()
		return after - before, func() {
			done()
			for s.trees.evictIdle() {
			}
			for _, n := range names { // after its lease is given back
				rr.rules.Frame(n + "y")
			}
		}
	}

	s := New(st.Root, Options{Logf: t.Logf})
	held, release := classify(s)
	if want := int64(len(names)) * perName; held < want {
		t.Errorf("the name cache of 1,000 names of 1 KiB: %d KB charged, want %d KB", held>>10, want>>10)
	}
	release()
	if used, _ := s.mem.usage(); used != 0 {
		t.Errorf("%d bytes held with the classification dropped", used)
	}

	// A budget with room for 100 names besides the compiled rules.
	cost := profiles.CompiledBytes(`^example\.com/`)
	budget := cost + 100*perName
	s2 := New(st.Root, Options{Logf: t.Logf, MemoryBudget: budget})
	held, release = classify(s2)
	if _, peak := s2.mem.usage(); peak > budget || held > 100*perName || held < 90*perName {
		t.Errorf("%d KB charged for names, budget peak %d KB of %d KB: want about 100 names' worth within it", held>>10, peak>>10, budget>>10)
	}
	release()
	if used, _ := s2.mem.usage(); used != 0 {
		t.Errorf("%d bytes held with the classification dropped", used)
	}
}
