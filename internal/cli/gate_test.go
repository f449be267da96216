package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/store"
)

// reps returns n repetitions around center, spread ±1%.
func reps(n int, center float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = center * (1 + 0.01*float64(i%3-1) + 0.001*float64(i))
	}
	return out
}

// TestGateFailsClosed: compare --fail-on regression exits 1 on a
// regression and 3 on anything it cannot judge, saying why on stderr;
// each row is a shape that exited 0 before (issue 26).
func TestGateFailsClosed(t *testing.T) {
	const (
		mutex  = "variant=mutex/keys=128/threads=1"
		sum256 = "variant=sum256/keys=128/threads=1"
	)
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name string
		// base and head are the two runs' cases (ns/op per repetition);
		// edit, when set, changes the head run as stored.
		base, head map[string][]float64
		edit       func(*model.Run)
		args       []string // more flags; "--base" compares the head run's variants
		code       int
		errs       []string
	}{
		{name: "same, enough repetitions", base: map[string][]float64{mutex: reps(6, 100)}, head: map[string][]float64{mutex: reps(6, 100)}, code: 0},
		{name: "3x slower at count 6", base: map[string][]float64{mutex: reps(6, 100)}, head: map[string][]float64{mutex: reps(6, 300)}, code: 1,
			errs: []string{"regressed beyond the threshold", mutex + " time/op +200.0% ["}},
		{name: "3x slower at count 2", base: map[string][]float64{mutex: reps(2, 100)}, head: map[string][]float64{mutex: reps(2, 300)}, code: 3,
			errs: []string{"cannot judge", "1 of 1 rows cannot be significant", "n=2+2", "use --count 4 or more", "(too few repetitions)"}},
		{name: "3x slower at count 3", base: map[string][]float64{mutex: reps(3, 100)}, head: map[string][]float64{mutex: reps(3, 300)}, code: 3,
			errs: []string{"n=3+3", "smallest possible p is 0.1"}},
		{name: "3x slower at count 3, variants of one run", head: map[string][]float64{mutex: reps(3, 300), sum256: reps(3, 100)},
			args: []string{"--base", "sum256"}, code: 3, errs: []string{"n=3+3, the smallest possible p is 0.25", "use --count 6 or more"}},
		// One regressed row among 30 at n=6+6 reaches p=0.0022×30 at best
		// after correction: it can never be significant, so nothing is judged.
		{name: "one row of 30 cannot be significant after correction", base: manyCases(30, 6, 100, ""), head: manyCases(30, 6, 100, "variant=v0/keys=0/threads=1"),
			code: 3, errs: []string{"a change in one row alone cannot be significant among 30 rows", "--count 7 or more"}},
		{name: "a variant that panicked, run complete", base: map[string][]float64{mutex: reps(6, 100), sum256: reps(6, 100)},
			head: map[string][]float64{mutex: reps(6, 100), sum256: reps(6, 100)},
			edit: func(r *model.Run) {
				setCase(r, sum256, func(c *model.Case) { c.Status, c.Error, c.Reps = model.StatusFailed, "panic: boom\ngoroutine 1", nil })
			},
			code: 3, errs: []string{"case " + sum256 + " of run ", "failed: panic: boom (failed)"}},
		{name: "a new variant that panicked", base: map[string][]float64{mutex: reps(6, 100)},
			head: map[string][]float64{mutex: reps(6, 100), sum256: reps(6, 100)},
			edit: func(r *model.Run) {
				setCase(r, sum256, func(c *model.Case) { c.Status, c.Error, c.Reps = model.StatusFailed, "panic: new", nil })
			},
			code: 3, errs: []string{"failed: panic: new"}},
		{name: "skipped in a complete run", base: map[string][]float64{mutex: reps(6, 100), sum256: reps(6, 100)}, head: map[string][]float64{mutex: reps(6, 100), sum256: reps(6, 100)},
			edit: func(r *model.Run) {
				setCase(r, mutex, func(c *model.Case) { c.Status, c.Reps = model.StatusSkipped, nil })
			},
			code: 3, errs: []string{"was not measured (skipped)"}},
		{name: "a case missing from the new run", base: map[string][]float64{mutex: reps(6, 100), sum256: reps(6, 100)}, head: map[string][]float64{mutex: reps(6, 100)},
			code: 3, errs: []string{"case " + sum256 + ": is in the base run", "but not in the new run (missing)"}},
		{name: "n/a in the new run", base: map[string][]float64{mutex: reps(6, 100), sum256: reps(6, 100)}, head: map[string][]float64{mutex: reps(6, 100), sum256: reps(6, 100)},
			edit: func(r *model.Run) {
				setCase(r, mutex, func(c *model.Case) { c.Status, c.Reps = model.StatusNotApplicable, nil })
			},
			code: 3, errs: []string{"n/a in the new run (missing)"}},
		{name: "a new case only in the new run passes", base: map[string][]float64{mutex: reps(6, 100)}, head: map[string][]float64{mutex: reps(6, 100), sum256: reps(6, 300)}, code: 0},
		{name: "duplicate case names", base: map[string][]float64{mutex: reps(6, 100)}, head: map[string][]float64{mutex: reps(6, 100)},
			edit: func(r *model.Run) {
				// A second case of the same name, three times slower: which
				// of them a row would compare is arbitrary.
				dup := r.Cases[0]
				dup.Reps = nil
				for range 6 {
					dup.Reps = append(dup.Reps, model.Rep{Ops: 1000, Metrics: map[string]float64{"ns/op": 300, "B/op": 64}})
				}
				r.Cases = append(r.Cases, dup)
			},
			code: 3, errs: []string{"case " + mutex + " of run", "occurs more than once (duplicate)"}},
		{name: "unknown status", base: map[string][]float64{mutex: reps(6, 100), sum256: reps(6, 100)}, head: map[string][]float64{mutex: reps(6, 300), sum256: reps(6, 100)},
			edit: func(r *model.Run) { setCase(r, mutex, func(c *model.Case) { c.Status = "OK" }) },
			code: 3, errs: []string{`has status "OK", which perflab does not know`}},
		{name: "no repetitions", base: map[string][]float64{mutex: reps(6, 100), sum256: reps(6, 100)}, head: map[string][]float64{mutex: reps(6, 100), sum256: reps(6, 100)},
			edit: func(r *model.Run) { setCase(r, mutex, func(c *model.Case) { c.Reps = nil }) },
			code: 3, errs: []string{"no repetitions of time/op (n=6+0), B/op (n=6+0) on one side"}},
		{name: "a metric on one side only", base: map[string][]float64{mutex: reps(6, 100)}, head: map[string][]float64{mutex: reps(6, 100)},
			edit: func(r *model.Run) {
				setCase(r, mutex, func(c *model.Case) {
					for _, rep := range c.Reps {
						delete(rep.Metrics, "ns/op")
					}
				})
			},
			code: 3, errs: []string{"no repetitions of time/op (n=6+0) on one side"}},
		{name: "a named metric nobody measured", base: map[string][]float64{mutex: reps(6, 100)}, head: map[string][]float64{mutex: reps(6, 100)},
			args: []string{"--metric", "time/op,cpu/op"}, code: 3, errs: []string{"cpu/op: named by --metric, but no compared case measured it (not measured)"}},
		{name: "a variant with no base case at its parameters", head: map[string][]float64{mutex: reps(10, 100), sum256: reps(10, 100), "variant=mutex/keys=256/threads=1": reps(10, 100)},
			edit: func(r *model.Run) {
				setCase(r, "variant=mutex/keys=256/threads=1", func(c *model.Case) { c.Params = map[string]string{"keys": "256"} })
			},
			args: []string{"--base", "sum256", "--metric", "time/op"}, code: 3, errs: []string{"variant=mutex/keys=256/threads=1 (no sum256 case at keys=256 threads=1): cannot be compared (missing)"}},
		{name: "a regression and a failure: 1, both said", base: map[string][]float64{mutex: reps(6, 100), sum256: reps(6, 100)},
			head: map[string][]float64{mutex: reps(6, 300), sum256: reps(6, 100)},
			edit: func(r *model.Run) {
				setCase(r, sum256, func(c *model.Case) { c.Status, c.Error = model.StatusFailed, "panic: x" })
			},
			code: 1, errs: []string{"regressed beyond the threshold", "and the gate cannot judge 1 thing(s)", "failed: panic: x"}},
		// B/op up from nothing has no relative change: the reason says it
		// as the table does, not "+Inf% [+Inf%, +Inf%]".
		{name: "B/op up from nothing", head: map[string][]float64{mutex: reps(6, 100), sum256: reps(6, 100)},
			edit: func(r *model.Run) {
				setCase(r, sum256, func(c *model.Case) {
					for _, rep := range c.Reps {
						rep.Metrics["B/op"] = 0
					}
				})
			},
			args: []string{"--base", "sum256", "--metric", "B/op"}, code: 1, errs: []string{"mutex B/op +64.0 (from 0)\n"}},
		{name: "threshold NaN", base: map[string][]float64{mutex: reps(6, 100)}, head: map[string][]float64{mutex: reps(6, 300)},
			args: []string{"--threshold", "NaN"}, code: 2, errs: []string{`--threshold "NaN"`}},
		{name: "threshold NaN%", base: map[string][]float64{mutex: reps(6, 100)}, head: map[string][]float64{mutex: reps(6, 300)},
			args: []string{"--threshold", "nan%"}, code: 2, errs: []string{"--threshold"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			st := store.Open(dir)
			head := storeRun(t, st, t0.Add(time.Hour), tt.head)
			if tt.edit != nil {
				rewriteRun(t, st, head, tt.edit)
			}
			args := []string{"compare"}
			if len(tt.base) > 0 {
				args = append(args, storeRun(t, st, t0, tt.base))
			}
			args = append(append(args, head, "-o", dir, "--fail-on", "regression"), tt.args...)
			out, errs, code := execute(t, args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, out, errs)
			}
			for _, w := range tt.errs {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
		})
	}
}

// manyCases is n cases of count repetitions around center; the one named
// slow, if any, three times slower.
func manyCases(n, count int, center float64, slow string) map[string][]float64 {
	m := map[string][]float64{}
	for i := range n {
		name := "variant=v" + string(rune('0'+i%10)) + "/keys=" + string(rune('0'+i/10)) + "/threads=1"
		m[name] = reps(count, center)
		if name == slow {
			m[name] = reps(count, 3*center)
		}
	}
	return m
}

// setCase changes run's case named name.
func setCase(r *model.Run, name string, change func(*model.Case)) {
	for i := range r.Cases {
		if r.Cases[i].Name == name {
			change(&r.Cases[i])
		}
	}
}
