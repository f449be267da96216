package cli

import (
	"bytes"
	"errors"
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

const evil = "\x1b]0;pwned\x07\x1b[2J"

// TestTerminalEscapes: an ESC sequence in a stored run (variant, scenario,
// commit, warning) or in a Pyroscope server's error reaches no terminal
// raw: show, show --list, compare, the push summary and the error line all
// escape it. (issue 14, part 7)
func TestTerminalEscapes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs")
	st := store.Open(dir)
	stat := model.Stat{N: 3, Median: 100, MedianLo: 90, MedianHi: 110, Mean: 100, MeanLo: 90, MeanHi: 110}
	mk := func(v string) model.Case {
		return model.Case{Name: "variant=" + v + "/threads=1", Variant: v, Threads: 1, Status: model.StatusOK, Params: map[string]string{},
			Stats: map[string]model.Stat{"ns/op": stat}, Warnings: []model.Warning{model.Warn(model.WarnOther, 0, "w"+evil)},
			Reps:     []model.Rep{{Ops: 1, Metrics: map[string]float64{"ns/op": 90}}, {Ops: 1, Metrics: map[string]float64{"ns/op": 100}}, {Ops: 1, Metrics: map[string]float64{"ns/op": 110}}},
			Profiles: map[string]string{"wall": "cases/x/wall.pb.gz"}}
	}
	started := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	run := &model.Run{ID: "20261201-090000-evil", Scenario: "s" + evil, Started: started, Complete: true,
		Env: model.Env{Commit: "c" + evil, CPU: evil}, Config: model.Config{Count: 3}, Cases: []model.Case{mk("a"), mk("b" + evil)}}
	w, err := st.Create(run)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(realCPU)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteFile("cases/x/wall.pb.gz", data)
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "refused "+evil, http.StatusBadRequest)
	}))
	defer srv.Close()
	for _, args := range [][]string{
		{"show", "-o", dir},
		{"show", "--list", "-o", dir},
		{"compare", run.ID, "--base", "a", "-o", dir},
		{"push", run.ID, "-o", dir, "--url", srv.URL},
	} {
		out, errs, _ := executeWithin(t, time.Minute, args...)
		if strings.ContainsAny(out, "\x1b\x07") || strings.ContainsAny(errs, "\x1b\x07") {
			t.Errorf("%v: raw control characters:\n%q\n%q", args, out, errs)
		}
		if !strings.Contains(out+errs, `\x1b]0;pwned\x07`) {
			t.Errorf("%v: the escaped text is missing:\n%s\n%s", args, out, errs)
		}
	}
	var buf bytes.Buffer
	printError(&buf, nil, errors.New("server said "+evil+"\nsecond line http://u:pw@h/"))
	if got := buf.String(); strings.ContainsAny(got, "\x1b\x07") || strings.Contains(got, "pw@") || !strings.Contains(got, "\nsecond line") {
		t.Errorf("printError wrote %q", got)
	}
}
