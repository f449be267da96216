package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/store"
)

// TestGateJSON: compare --fail-on regression --json carries the gate's
// verdict, exit code, its meaning and every reason, per case or metric,
// for each way a gate ends (issue 26: the reasons were on stderr only).
// The gate objects of all shapes are one golden file.
func TestGateJSON(t *testing.T) {
	const (
		mutex  = "variant=mutex/keys=128/threads=1"
		sum256 = "variant=sum256/keys=128/threads=1"
	)
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	var want strings.Builder
	for _, tt := range []struct {
		name       string
		base, head map[string][]float64
		edit       func(*model.Run)
		args       []string
		code       int
	}{
		{name: "pass", base: map[string][]float64{mutex: reps(6, 100)}, head: map[string][]float64{mutex: reps(6, 100)}, code: 0},
		{name: "a regression and a failure", base: map[string][]float64{mutex: reps(6, 100), sum256: reps(6, 100)},
			head: map[string][]float64{mutex: reps(6, 300), sum256: reps(6, 100)},
			edit: func(r *model.Run) {
				setCase(r, sum256, func(c *model.Case) { c.Status, c.Error = model.StatusFailed, "panic: x\ngoroutine 1" })
			}, code: 1},
		{name: "too few repetitions", base: map[string][]float64{mutex: reps(2, 100)}, head: map[string][]float64{mutex: reps(2, 300)}, code: 3},
		{name: "missing, duplicate, no repetitions, unmeasured", base: map[string][]float64{mutex: reps(6, 100), sum256: reps(6, 100), "variant=gone/keys=128/threads=1": reps(6, 100)},
			head: map[string][]float64{mutex: reps(6, 100), sum256: reps(6, 100)},
			edit: func(r *model.Run) {
				setCase(r, sum256, func(c *model.Case) { c.Reps = nil })
				for _, c := range r.Cases { // storeRun's order is a map's
					if c.Name == mutex {
						r.Cases = append(r.Cases, c)
						break
					}
				}
			}, args: []string{"--metric", "time/op,cpu/op"}, code: 3},
		{name: "nothing in common", base: map[string][]float64{mutex: reps(6, 100)}, head: map[string][]float64{sum256: reps(6, 100)}, code: 3},
		{name: "incomplete run", base: map[string][]float64{mutex: reps(6, 100)}, head: map[string][]float64{mutex: reps(6, 100)},
			edit: func(r *model.Run) { r.Complete, r.Note = false, "interrupted" }, code: 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			st := store.Open(dir)
			base := storeRun(t, st, t0, tt.base)
			head := storeRun(t, st, t0.Add(time.Hour), tt.head)
			if tt.edit != nil {
				rewriteRun(t, st, head, tt.edit)
			}
			args := append([]string{"compare", base, head, "-o", dir, "--json"}, tt.args...)
			out, _, _ := execute(t, args...)
			var plain struct{ Gate json.RawMessage }
			if err := json.Unmarshal([]byte(out), &plain); err != nil || plain.Gate != nil {
				t.Errorf("without --fail-on: %v, gate %s (want none)", err, plain.Gate)
			}
			out, errs, code := execute(t, append(args, "--fail-on", "regression")...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s", code, tt.code, errs)
			}
			var raw struct{ Gate json.RawMessage }
			var got struct {
				Gate *struct {
					Verdict string
					Exit    int
					Meaning string
					Reasons []map[string]string
				}
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil || got.Gate == nil {
				t.Fatalf("%v: no gate in\n%s", err, out)
			}
			json.Unmarshal([]byte(out), &raw)
			if got.Gate.Exit != code || (code == 0) != (len(got.Gate.Reasons) == 0) {
				t.Errorf("gate says exit %d with %d reasons; the process exited %d", got.Gate.Exit, len(got.Gate.Reasons), code)
			}
			// Every reason stderr gives is in the JSON.
			for _, r := range got.Gate.Reasons {
				if !strings.Contains(errs, r["detail"]) && r["kind"] != "regressed" {
					t.Errorf("stderr lacks the JSON's reason %q:\n%s", r["detail"], errs)
				}
			}
			var b bytes.Buffer
			json.Indent(&b, raw.Gate, "", "  ")
			fmt.Fprintf(&want, "# %s\n%s\n", tt.name, strings.NewReplacer(base, "BASE", head, "HEAD").Replace(b.String()))
		})
	}
	golden(t, "gate-json.golden", want.String())
}
