package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/textsafe"
)

// TestCompareManyCases: /compare offered every case of a run in both
// pickers, a 60 MB page for a run of 200,000 cases (issue 26), and the
// default pair's search was quadratic in them. Now a picker offers the
// first maxPickerCases of a run, plus any case picked, and says how to name
// the others; the page stays small and quick, as does a case page's list.
func TestCompareManyCases(t *testing.T) {
	const n = 20_000
	st := store.Open(t.TempDir())
	started := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	run := &model.Run{ID: store.NewID(started, "wide"), Scenario: "wide", Started: started, Finished: started, Complete: true}
	for i := range n {
		// One variant: no pair of variants, the quadratic search's worst.
		run.Cases = append(run.Cases, model.Case{Name: fmt.Sprintf("variant=v/i=%d", i), Variant: "v", Params: map[string]string{"i": fmt.Sprint(i)}, Status: model.StatusOK})
	}
	w, err := st.Create(run)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(st.Root, Options{Logf: t.Logf}))
	defer srv.Close()
	last := run.ID + "/" + model.Slug(run.Cases[n-1].Name)
	for _, u := range []string{"/compare", "/compare?a=" + run.ID + "/" + model.Slug(run.Cases[0].Name) + "&b=" + last, caseURL(run, n-1)} {
		start := time.Now()
		code, _, body := get(t, srv.URL+u)
		took := time.Since(start)
		t.Logf("%s: %d, %d KB in %v", textsafe.Clip(u, 60), code, len(body)>>10, took.Round(time.Millisecond))
		if code != http.StatusOK {
			t.Errorf("%s: %d", u, code)
		}
		if len(body) > 512<<10 {
			t.Errorf("%s: %d KB for a run of %d cases, want the pickers capped (< 512 KB)", u, len(body)>>10, n)
		}
		if strings.HasPrefix(u, "/compare") && !strings.Contains(body, fmt.Sprintf("has %d cases; the pickers offer its first %d", n, maxPickerCases)) {
			t.Errorf("%s: no note that the pickers are capped", u)
		}
		if strings.Contains(u, "&b=") && !strings.Contains(body, `value="`+last+`" selected`) {
			t.Errorf("%s: the picked case past the cap is not offered, selected", u)
		}
	}
}
