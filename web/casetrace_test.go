package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/store"
)

// TestCaseTraceSource: a case page says where its budget's trace came
// from, as perflab show's legend does. It said "the profiling window's
// execution trace" of every case, though perflab run takes it by default
// in traced slices beside the timed repetitions, and gave the time per op
// as a bare "at 126.0ns".
func TestCaseTraceSource(t *testing.T) {
	for _, tt := range []struct {
		name      string
		window    model.Window
		want, not []string
	}{
		{name: "a window after the rounds", window: model.Window{Seconds: 1.01, NsPerOp: 382.5, CPUSamples: 180},
			want: []string{"in the profiling window's execution trace", "Profiling window: 1.01 s at 382.5ns an op", "busy 0.0% of the window"},
			not:  []string{"traced slices"}},
		{name: "traced slices", window: model.Window{Source: "slices", Slices: 12, Seconds: 0.22, NsPerOp: 126, CPUSamples: 19},
			want: []string{"in the execution trace of the traced slices", "Traced slices: 12, 0.22 s in all, their median 126.0ns an op", "busy 0.0% of the slices"},
			not:  []string{"profiling window", "tracer's own"}},
		{name: "traced slices, the tracer's own time left out", window: model.Window{Source: "slices", Slices: 6, Seconds: 1.2, NsPerOp: 13000, CPUSamples: 200, TracerOwn: 0.055},
			want: []string{"own functions took 5.5% of the workers", "traced time; the budget leaves that out"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := writeFixture(t, t.TempDir())
			st := store.Open(f.root)
			run, err := st.Load(f.full.ID)
			if err != nil {
				t.Fatal(err)
			}
			w := tt.window
			run.Cases[0].Window = &w
			b, err := json.Marshal(run)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(f.root, run.ID, "run.json"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(New(f.root, Options{Logf: t.Logf}))
			defer srv.Close()
			code, _, body := get(t, srv.URL+caseURL(run, 0))
			if code != http.StatusOK {
				t.Fatalf("status %d:\n%s", code, body)
			}
			for _, s := range tt.want {
				if !strings.Contains(body, s) {
					t.Errorf("page lacks %q", s)
				}
			}
			for _, s := range tt.not {
				if strings.Contains(body, s) {
					t.Errorf("page says %q", s)
				}
			}
		})
	}
}
