package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/textsafe"
	"github.com/perflab/perflab/profiles"
)

// TestStoredRulesCharged: the compiled classifications of stored runs were
// cached outside the budget, ~800 MB each within the pattern limits of a
// run.json (issue 26: 6 tampered runs took 4.96 GB). Now one over
// maxRulesBytes compiled is refused with the page's warning, and one under
// it is charged to the budget before it compiles, for as long as it is
// kept, or refused with 503 when the budget has no room.
func TestStoredRulesCharged(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	heavy := strings.Repeat("x{1000}", 585) // 4,095 bytes, 585,000 instructions
	var tampered []string
	for range 15 { // 60 KiB: within model.MaxClassificationBytes
		tampered = append(tampered, heavy)
	}
	var moderate []string // 20 × 10,000 instructions: under maxRulesBytes
	for i := range 20 {
		moderate = append(moderate, strings.Repeat("x{1000}", 10)+string(rune('a'+i)))
	}
	cost := profiles.CompiledBytes(moderate...)
	if cost > maxRulesBytes || cost < 16<<20 {
		t.Fatalf("the moderate patterns cost %d MB, want 16 MB to maxRulesBytes", cost>>20)
	}

	st := store.Open(t.TempDir())
	bad := storeClassified(t, st, t0, "my-own", &model.Classification{Work: tampered})
	ok := storeClassified(t, st, t0.Add(time.Minute), "my-own", &model.Classification{Work: moderate})
	s := New(st.Root, Options{Logf: t.Logf})
	srv := httptest.NewServer(s)
	defer srv.Close()

	code, _, body := get(t, srv.URL+caseURL(bad, 0))
	if code != http.StatusOK || !strings.Contains(body, "would take about") {
		t.Errorf("tampered run's case page: %d, want 200 with the refusal in a warning:\n%s", code, textsafe.Clip(warnings(body), 2000))
	}
	if _, peak := s.mem.usage(); peak >= cost {
		t.Errorf("budget peak %d MB for a refused classification: it was compiled", peak>>20)
	}

	code, _, body = get(t, srv.URL+caseURL(ok, 0))
	if code != http.StatusOK || strings.Contains(body, "was refused") {
		t.Errorf("moderate run's case page: %d:\n%s", code, textsafe.Clip(warnings(body), 2000))
	}
	used, peak := s.mem.usage()
	if peak < cost || used < cost {
		t.Errorf("budget %d MB held, %d MB at most, for a classification of %d MB compiled: not charged", used>>20, peak>>20, cost>>20)
	}
	// Kept while the budget has room; dropped, it gives its bytes back.
	for s.trees.evictIdle() || s.runs.evictOne() {
	}
	if used, _ := s.mem.usage(); used != 0 {
		t.Errorf("%d bytes held with nothing kept", used)
	}

	// No room: the page waits, then answers 503.
	defer func(w time.Duration) { maxWait = w }(maxWait)
	maxWait = 100 * time.Millisecond
	s2 := New(st.Root, Options{Logf: t.Logf, MemoryBudget: 2 * cost})
	small := httptest.NewServer(s2)
	defer small.Close()
	hold, err := s2.mem.acquire(t.Context(), cost+1)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, _ := get(t, small.URL+caseURL(ok, 0)); code != http.StatusServiceUnavailable {
		t.Errorf("classification of %d MB with %d MB of the budget free: %d, want 503", cost>>20, (cost-1)>>20, code)
	}
	hold.release()
	if code, _, _ := get(t, small.URL+caseURL(ok, 0)); code != http.StatusOK {
		t.Errorf("classification of %d MB with the budget free: %d, want 200", cost>>20, code)
	}
}
