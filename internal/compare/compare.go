// Package compare decides whether measured cases differ, metric by metric:
// each side's median with its 95% confidence interval (benchmath), a test
// on the per-repetition samples — Wilcoxon's signed-rank paired by round
// within one run, benchmath's Mann–Whitney U across runs — the change with
// its Hodges–Lehmann interval, Benjamini–Hochberg across the rows of one
// comparison, and a practical threshold.
//
// The statistics (Test, stats.go) take plain samples, []float64 per side;
// stored runs meet them at the edge (cases.go: One and Metrics take
// model.Case pairs and hand their repetitions over; pairs.go and gate.go
// pair and judge stored runs). The CLI's `perflab
// compare`, the web UI's compare page and the run table's verdicts all call
// it; internal/report renders its results.
package compare
