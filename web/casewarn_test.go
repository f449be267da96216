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

// TestCasePageWarningsSaidOnce: the case page shows the budget's trust
// mark (report.Case), so the warning the mark says is not repeated at the
// top of the page, as the run's table does not repeat it; other warnings
// stay.
func TestCasePageWarningsSaidOnce(t *testing.T) {
	root := t.TempDir()
	c := model.Case{Name: "variant=a", Variant: "a", Threads: 1, Status: model.StatusOK,
		Stats:       map[string]model.Stat{"ns/op": {N: 6, Median: 1000, MedianLo: 990, MedianHi: 1010}},
		Budget:      map[string]float64{"work": 700, "sched": 300},
		BudgetTrust: &model.Trust{Reasons: []model.TrustReason{{Kind: model.WindowContended, Value: 0.2, Limit: 0.1}}},
		Window:      &model.Window{NsPerOp: 1000, Running: 0.7, Runnable: 0.3, Occupancy: 1, CPUSamples: 200},
		Warnings: []model.Warning{
			model.Warn(model.WarnWindowContended, 0, "another process on the cores kept the workers' threads from a CPU"),
			model.Warn(model.WarnWideCI, 12, "time/op confidence interval ±12% is wide: noisy machine?"),
		}}
	now := time.Now()
	run := &model.Run{ID: store.NewID(now, "sc"), Scenario: "sc", Started: now, Finished: now, Complete: true, Cases: []model.Case{c}}
	wr, err := store.Open(root).Create(run)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wr.Commit(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(root, Options{Logf: t.Logf}))
	defer srv.Close()
	status, _, body := get(t, srv.URL+"/runs/"+run.ID+"/cases/"+model.Slug(c.Name))
	if status != http.StatusOK {
		t.Fatalf("case page: %d\n%s", status, body)
	}
	if !strings.Contains(body, "another program had the CPUs 20%") || !strings.Contains(body, "noisy machine?") {
		t.Errorf("the page lacks the trust mark or the wide interval's warning:\n%s", body)
	}
	if strings.Contains(body, "another process on the cores") {
		t.Errorf("the page says what the trust mark says again:\n%s", body)
	}
}
