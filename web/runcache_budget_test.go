package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/store"
)

// TestRunCacheCharged: the decoded run.json files were cached outside the
// budget, every run of the store, up to 64 MiB of JSON each (issue 26: one
// accounting for everything serve holds). Each is charged before it is
// decoded; when the budget needs room the least recently loaded is
// dropped, and decoded again when asked for.
func TestRunCacheCharged(t *testing.T) {
	st := store.Open(t.TempDir())
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var runs []*model.Run
	for r := range 3 {
		run := &model.Run{ID: store.NewID(t0.Add(time.Duration(r)*time.Minute), "wide"), Scenario: "wide", Started: t0, Finished: t0, Complete: true}
		for i := range 5000 {
			run.Cases = append(run.Cases, model.Case{Name: fmt.Sprintf("variant=v/i=%d", i), Variant: "v", Params: map[string]string{"i": fmt.Sprint(i)}, Status: model.StatusSkipped})
		}
		w, err := st.Create(run)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run)
	}
	fi, err := os.Stat(filepath.Join(st.Root, runs[0].ID, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	one := runBytes(fi.Size())
	// Room for two decoded runs, not three.
	budget := 2*one + fi.Size() + one/2
	s := New(st.Root, Options{Logf: t.Logf, MemoryBudget: budget})
	srv := httptest.NewServer(s)
	defer srv.Close()

	code, _, body := get(t, srv.URL+"/")
	if code != http.StatusOK {
		t.Fatalf("runs page: %d", code)
	}
	for _, r := range runs {
		if !strings.Contains(body, r.ID) {
			t.Errorf("runs page lacks %s", r.ID)
		}
		if code, _, _ := get(t, srv.URL+"/runs/"+r.ID); code != http.StatusOK {
			t.Errorf("run %s: %d", r.ID, code)
		}
	}
	used, peak := s.mem.usage()
	t.Logf("3 runs of %d KB of JSON under a budget of %d KB: %d KB held, %d KB at most", fi.Size()>>10, budget>>10, used>>10, peak>>10)
	if used < one {
		t.Errorf("%d KB held with runs cached, want at least one run's %d KB: not charged", used>>10, one>>10)
	}
	if peak > budget {
		t.Errorf("budget peak %d KB, over its %d KB", peak>>10, budget>>10)
	}
	for s.runs.evictOne() {
	}
	if used, _ := s.mem.usage(); used != 0 {
		t.Errorf("%d bytes held with no run cached", used)
	}
}
