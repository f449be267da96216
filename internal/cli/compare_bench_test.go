package cli

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/store"
)

// storeManyCases writes a complete run of n cases, each with 6 repetitions
// of ns/op (scaled by scale) and B/op, named as the runner names them.
func storeManyCases(tb testing.TB, st *store.Store, started time.Time, n int, scale float64) string {
	tb.Helper()
	run := &model.Run{ID: store.NewID(started, "cipher-cache"), Scenario: "cipher-cache", Started: started, Complete: true}
	run.Cases = make([]model.Case, 0, n)
	for i := range n {
		variant := fmt.Sprintf("v%d", i%4)
		keys := fmt.Sprint(i / 4)
		c := model.Case{Name: "variant=" + variant + "/keys=" + keys + "/threads=1", Variant: variant,
			Params: map[string]string{"keys": keys}, Threads: 1, Status: model.StatusOK}
		for r := range 6 {
			c.Reps = append(c.Reps, model.Rep{Ops: 1000, Metrics: map[string]float64{"ns/op": scale * float64(100+r), "B/op": 64}})
		}
		run.Cases = append(run.Cases, c)
	}
	w, err := st.Create(run)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		tb.Fatal(err)
	}
	return run.ID
}

// BenchmarkCompareCases times `perflab compare OLD NEW` of two runs of n
// cases each, loading included: ns/case should stay flat as n grows
// (issue 26: matching cases by a linear search made 2k/8k/30k cases take
// 0.9/10/139 s).
func BenchmarkCompareCases(b *testing.B) {
	for _, n := range []int{2000, 8000, 30000} {
		b.Run(fmt.Sprintf("cases=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			st := store.Open(dir)
			t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
			old := storeManyCases(b, st, t0, n, 1)
			newer := storeManyCases(b, st, t0.Add(time.Hour), n, 1.01)
			b.ResetTimer()
			for b.Loop() {
				var out, errb bytes.Buffer
				root := NewRoot(&IO{Out: &out, Err: &errb})
				root.SetArgs([]string{"compare", old, newer, "-o", dir, "--metric", "time/op"})
				if err := root.ExecuteContext(context.Background()); err != nil {
					b.Fatalf("%v\n%s", err, errb.String())
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/case")
		})
	}
}
