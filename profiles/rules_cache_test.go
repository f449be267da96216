package profiles

import (
	"fmt"
	"strings"
	"testing"
)

// TestChargeCache: a Rules with a charge asks it before its name cache
// keeps a name, for the name's bytes and the entry's; a name refused is
// classified all the same and not kept (issue 26: a server's cached
// rules held every name of the profiles drawn with them, uncounted).
func TestChargeCache(t *testing.T) {
	r, err := DefaultRules().WithWork(`^example\.com/`)
	if err != nil {
		t.Fatal(err)
	}
	var charged int64
	const room = 10 * (CacheEntryBytes + 1024)
	r.ChargeCache(func(n int64) bool {
		if charged+n > room {
			return false
		}
		charged += n
		return true
	})
	for i := range 20 { // 20 names of 1 KiB and more; room for 10
		name := fmt.Sprintf("example.com/pkg.f%02d%s", i, strings.Repeat("x", 1000))
		for range 2 { // the second time from the cache, if kept
			if got := r.Frame(name).Category(); got != Work {
				t.Fatalf("%s…: %s, want work", name[:20], got)
			}
		}
		if got := r.Frame("runtime.mallocgc").Category(); got != Alloc {
			t.Fatalf("runtime.mallocgc: %s", got)
		}
	}
	if kept := r.cached.Load(); charged > room || kept == 0 || kept >= 20 {
		t.Errorf("%d of 21 names kept for %d bytes charged, of %d: want some, within the room", kept, charged, room)
	}
}
