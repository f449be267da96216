package report

import (
	"fmt"

	"github.com/perflab/perflab/internal/compare"
)

// CompareBlock is one metric of a comparison as a table: its heading, a
// row per compared pair, and the advice on repetitions. The web's compare
// pages render it; the words and figures are the CLI table's.
type CompareBlock struct {
	Title  string
	Rows   []CompareRow
	Advice string
}

// CompareRow is one compared pair of a metric.
type CompareRow struct {
	Label, A, B, Change, Verdict, P string
	// Class is the verdict's kind for styling: better, worse, same or
	// unknown (cannot tell).
	Class string
}

// Blocks is the comparison as one block per metric.
func (c *Comparison) Blocks() []CompareBlock {
	var out []CompareBlock
	for _, m := range c.Metrics {
		b := CompareBlock{Title: metricTitle(m), Advice: m.AdviceFor(c.A, c.B)}
		for _, r := range m.Results {
			b.Rows = append(b.Rows, CompareRow{Label: r.Label, A: sideText(r, true), B: sideText(r, false),
				Change: changeText(r), Verdict: verdictText(r, m.Options), P: fmt.Sprintf("%.3g", r.PAdj), Class: verdictClass(r.Verdict)})
		}
		out = append(out, b)
	}
	return out
}

func verdictClass(v compare.Verdict) string {
	switch v {
	case compare.Better:
		return "better"
	case compare.Worse:
		return "worse"
	case compare.CannotTell:
		return "unknown"
	}
	return "same"
}
