package report

import (
	"fmt"
	"strings"

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

// MetricRows lays out a comparison of one pair of cases a row per metric,
// as the web's case-against-case page shows it: a row's label is its
// metric's, its P the p-value with the repetitions and the test. Advice
// that holds for several metrics (too few repetitions, typically for all)
// is given once, naming them, "every metric: …"; the comparison's own
// warnings follow.
func (c *Comparison) MetricRows() (rows []CompareRow, warnings []Warning) {
	var msgs []string
	metricsOf := map[string][]string{}
	for _, m := range c.Metrics {
		for _, r := range m.Results {
			row := CompareRow{Label: MetricName(m.Unit), A: sideText(r, true), B: sideText(r, false), Change: changeText(r),
				Verdict: verdictText(r, m.Options), P: fmt.Sprintf("%.3g n=%d+%d, %s", r.P, r.N1, r.N2, r.Test), Class: verdictClass(r.Verdict)}
			rows = append(rows, row)
			if m.Advice == "" && r.Verdict != compare.CannotTell {
				continue
			}
			// The comparison's own advice, which knows the test (paired
			// or not) and what --count each side needs (issue 25).
			msg := m.AdviceFor(c.A, c.B)
			if msg == "" {
				msg = fmt.Sprintf("too few repetitions (n=%d+%d) for any difference to be significant at %s: run with more --count", r.N1, r.N2, pctPlain(m.Options.Alpha))
			}
			if _, ok := metricsOf[msg]; !ok {
				msgs = append(msgs, msg)
			}
			metricsOf[msg] = append(metricsOf[msg], row.Label)
		}
	}
	for _, msg := range msgs {
		who := strings.Join(metricsOf[msg], ", ")
		if len(metricsOf[msg]) == len(rows) && len(rows) > 1 {
			who = "every metric"
		}
		warnings = append(warnings, Warning{Kind: KindCompareReps, Severity: Caution, Affects: AffectsTime, Message: who + ": " + msg})
	}
	return rows, append(warnings, c.Warnings...)
}
