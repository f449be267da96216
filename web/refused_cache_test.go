package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/store"
)

// TestRefusedRulesNameTheirRun: two runs recording the same classification
// that this binary refuses when it compiles it (a category of a newer
// perflab, say) share the cached refusal; each case page's warning names
// its own run, not the one first drawn.
func TestRefusedRulesNameTheirRun(t *testing.T) {
	st := store.Open(t.TempDir())
	srv := httptest.NewServer(New(st.Root, Options{Logf: t.Logf}))
	t.Cleanup(srv.Close)
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	c := &model.Classification{Rules: []model.Rule{{Category: "speed", Pattern: "x"}}}
	first := storeClassified(t, st, t0, "my-own", c)
	second := storeClassified(t, st, t0.Add(time.Minute), "my-own", c)
	for _, run := range []*model.Run{first, second} {
		code, _, body := get(t, srv.URL+caseURL(run, 0))
		if code != http.StatusOK {
			t.Fatalf("case page of %s: %d\n%s", run.ID, code, h1(body))
		}
		ws := warnings(body)
		if !strings.Contains(ws, "recorded in run.json is refused") {
			t.Fatalf("case page of %s: no refusal in the warnings:\n%s", run.ID, ws)
		}
		for _, other := range []*model.Run{first, second} {
			if other != run && strings.Contains(ws, other.ID) {
				t.Errorf("case page of %s names run %s:\n%s", run.ID, other.ID, ws)
			}
		}
	}
}
