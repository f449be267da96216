package report

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/units"
	"github.com/perflab/perflab/profiles"
)

// What a case says, metric by metric, for every renderer: the web's run
// table and case page lay these out and compute nothing of their own
// (issue 24: the web had its own cells, unit lists and budgets).

// Cell is one metric of a case as a table writes it.
type Cell struct {
	// Text is the median in its unit, "—" when the case did not measure
	// the metric.
	Text string
	// Err is the median's 95% interval beside it, "±3%"; "±∞" with too
	// few repetitions for one (benchmath needs 6 at 95%); "" when every
	// repetition measured the same, or there is no figure.
	Err string
	// Title is the whole summary, for a tooltip: median and interval,
	// mean and its 99.9% interval, min, max and n.
	Title string
}

// StatCell is the cell of unit in stats.
func StatCell(stats map[string]model.Stat, unit string) Cell {
	st, ok := stats[unit]
	if !ok || st.N == 0 {
		return Cell{Text: "—"}
	}
	c := Cell{Text: Value(st.Median, unit)}
	switch {
	case st.Min == st.Max:
		// Every repetition measured the same: nothing to qualify.
	case !HasCI(st):
		c.Err = "±∞"
	case st.Median != 0:
		c.Err = CI(st.Median, st.MedianLo, st.MedianHi)
	}
	c.Title = fmt.Sprintf("median %s, 95%% CI [%s, %s]; mean %s, 99.9%% CI [%s, %s]; min %s, max %s; n=%d",
		Value(st.Median, unit), Value(st.MedianLo, unit), Value(st.MedianHi, unit),
		Value(st.Mean, unit), Value(st.MeanLo, unit), Value(st.MeanHi, unit),
		Value(st.Min, unit), Value(st.Max, unit), st.N)
	return c
}

// HasCI reports whether a stat has a confidence interval for its median;
// the store reads an unknown bound as ±Inf.
func HasCI(st model.Stat) bool {
	return !math.IsInf(st.MedianLo, 0) && !math.IsInf(st.MedianHi, 0) && !math.IsNaN(st.MedianLo) && !math.IsNaN(st.MedianHi)
}

// TimeStat returns a case's time per operation and its unit: ns/op from
// the runner, or sec/op from older or imported runs.
func TimeStat(c *model.Case) (model.Stat, string, bool) {
	for _, u := range []string{"ns/op", "sec/op"} {
		if st, ok := c.Stats[u]; ok && st.N > 0 {
			return st, u, true
		}
	}
	return model.Stat{}, "", false
}

// Throughput is a case's operations per second: the runner's ops/s if it
// recorded one, else the inverse of the median time/op.
func Throughput(c *model.Case) (float64, bool) {
	if st, ok := c.Stats["ops/s"]; ok && st.N > 0 {
		return st.Median, true
	}
	if st, u, ok := TimeStat(c); ok && st.Median > 0 {
		if u == "ns/op" {
			return 1e9 / st.Median, true
		}
		return 1 / st.Median, true
	}
	return 0, false
}

// Units is every unit the cases measured, in the unit table's order.
func Units(cases []model.Case) []string {
	set := map[string]bool{}
	var out []string
	for _, c := range cases {
		for u := range c.Stats {
			if !set[u] {
				set[u] = true
				out = append(out, u)
			}
		}
	}
	return units.Sort(out)
}

// TableUnits are a run table's columns: the headline units of the unit
// table that some case measured, then a scenario's own, without the
// metrics that are zero in every case (no allocations anywhere, say):
// columns of zeros hide the ones that differ. A case's page lists them
// all (Units).
func TableUnits(cases []model.Case) []string {
	var out []string
	for _, u := range Units(cases) {
		if known, ok := units.Lookup(u); ok && !known.Headline {
			continue
		}
		for _, c := range cases {
			if st, ok := c.Stats[u]; ok && (st.Median != 0 || st.Max != 0) {
				out = append(out, u)
				break
			}
		}
	}
	return out
}

// SharedUnits are the units two cases both measured that a comparison of
// them tests: all but ops/s and the allocation rate, which are time/op
// and B/op again (testing them would be the same test twice).
func SharedUnits(a, b *model.Case) []string {
	var out []string
	for _, u := range Units([]model.Case{*a, *b}) {
		if u == "ops/s" || u == "alloc-MB/s" {
			continue
		}
		_, okA := a.Stats[u]
		_, okB := b.Stats[u]
		if okA && okB {
			out = append(out, u)
		}
	}
	return out
}

// BudgetPart is one category's share of a case's time per op.
type BudgetPart struct {
	Category string
	// NS is the category's time per op, Share its fraction of the budget;
	// Err is the half-width of a 95% interval on Share from the CPU
	// samples that split running time (0: exact, or not recorded).
	NS, Share, Err float64
}

// Budget is a case's time budget by category: perflab's categories in
// their display order, then any others (a user's rules), sorted; nil
// without a budget. The shares split the case's median time/op: the
// runner scales the budget to it, and every page says so.
func Budget(c *model.Case) []BudgetPart {
	parts := BudgetOf(c.Budget)
	if st, ok := c.Stats["ns/op"]; ok {
		for i := range parts {
			parts[i].NS = parts[i].Share * st.Median
		}
	}
	var total float64
	for _, ns := range c.Budget {
		total += ns
	}
	for i := range parts {
		parts[i].Err = shareErr(c.BudgetErr[parts[i].Category], total)
	}
	return parts
}

// shareErr is a category's sampling error e (ns/op) as a share of a budget
// of total ns/op: 0 where it is no positive figure, and at most 1. The
// runner writes neither, but a run.json is read as it is found: a negative
// error showed as "±0.0" (exact), and one of 1e308 as a 300-digit number
// that broke the table and an infinite share that made --json fail. A share
// lies within 0–100%: an interval wider than that says no more.
func shareErr(e, total float64) float64 {
	if !(total > 0) {
		return 0
	}
	f := e / total
	if !(f > 0) { // also NaN
		return 0
	}
	return min(f, 1)
}

// BudgetOf is a budget given as time per category (of an op, or of a
// profile's samples) as Budget lays it out.
func BudgetOf(b map[string]float64) []BudgetPart {
	var total float64
	for _, ns := range b {
		total += ns
	}
	if total <= 0 {
		return nil
	}
	var parts []BudgetPart
	for _, cat := range CategoryOrder(b) {
		if ns := b[cat]; ns > 0 {
			parts = append(parts, BudgetPart{Category: cat, NS: ns, Share: ns / total})
		}
	}
	return parts
}

// CategoryOrder is the keys of set in display order: perflab's categories
// first, as profiles.Categories lists them, unknown ones (from user rules)
// after, sorted.
func CategoryOrder[V any](set map[string]V) []string {
	var out, rest []string
	for _, c := range profiles.Categories {
		if _, ok := set[string(c)]; ok {
			out = append(out, string(c))
		}
	}
	for c := range set {
		if !profiles.Category(c).Valid() {
			rest = append(rest, c)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// BudgetText names a budget's two largest shares, "lock 71% · work 13%":
// where the time goes, in a table cell.
func BudgetText(parts []BudgetPart) string {
	top := append([]BudgetPart(nil), parts...)
	sort.SliceStable(top, func(i, j int) bool { return top[i].Share > top[j].Share })
	var names []string
	for _, p := range top {
		if len(names) == 2 || p.Share < 0.005 {
			break
		}
		names = append(names, p.Category+" "+Share(p.Share))
	}
	return strings.Join(names, " · ")
}

// Metric is one row of a case's results: a unit, its label and its cell.
type Metric struct {
	Unit, Label string
	Cell        Cell
}

// Case is what one case says: every metric it measured and its time
// budget. The web's case page lays it out.
type Case struct {
	Case    *model.Case
	Metrics []Metric
	Budget  []BudgetPart
	// Untrusted marks a budget that cannot be trusted and Trust says why,
	// as the run's table says it (Row); SchedBy says what the preempted
	// goroutines were doing. Zero without a budget.
	Untrusted      bool
	Trust, SchedBy string
	// TracerLeftOut says how much of the traced time, in the tracer's
	// own functions, the budget left out ("" for none).
	TracerLeftOut string
	// Warnings are the case's warnings but those its budget's trust mark
	// says (CaseWarnings).
	Warnings []model.Warning
}

// CaseWarnings are c's warnings but those its budget's trust mark says,
// which the run's table and the case view show once, as the mark:
// the traced executions' drift from the timed median once the budget was
// judged (the mark gives it with the tracer's own effect taken out),
// another program's hold on the CPUs in the traced executions, or the
// workers' wait for them, where the mark names it, and too few CPU samples where the mark counts the same
// samples ("11 CPU samples (want 50)" under the budget, then "rests on 11
// CPU samples" among the warnings). The mark may count the helpers'
// samples where the warning counts the workers': then both are said.
func CaseWarnings(c *model.Case) []model.Warning {
	var out []model.Warning
	for _, w := range c.Warnings {
		switch {
		case w.Kind == model.WarnWindowDrift && c.BudgetTrust != nil:
		case w.Kind == model.WarnWindowContended && (c.BudgetTrust.Has(model.WindowContended) || c.BudgetTrust.Has(model.WindowCPUWait)):
		case w.Kind == model.WarnFewSamples && markedFewSamples(c.BudgetTrust, w.Figure):
		default:
			out = append(out, w)
		}
	}
	return out
}

// markedFewSamples says whether t is marked for too few CPU samples, n
// of them.
func markedFewSamples(t *model.Trust, n float64) bool {
	if t == nil {
		return false
	}
	for _, r := range t.Reasons {
		if r.Kind == model.FewSamples && r.Value == n {
			return true
		}
	}
	return false
}

// HasErr says a share of the budget has its sampling error.
func (rc *Case) HasErr() bool {
	for _, p := range rc.Budget {
		if p.Err > 0 {
			return true
		}
	}
	return false
}

// BuildCase makes the report of one case.
func BuildCase(c *model.Case) *Case {
	rc := &Case{Case: c, Budget: Budget(c), Warnings: CaseWarnings(c)}
	if len(rc.Budget) > 0 {
		rc.Untrusted, rc.Trust, rc.SchedBy = c.BudgetTrust.Untrusted(), TrustReason(c.BudgetTrust), SchedBy(c)
		if own, ok := tracerOwn(c.Window); ok {
			rc.TracerLeftOut = fmt.Sprintf("The execution tracer's own functions took %.1f%% of the workers' traced time; the budget leaves that out, as the timed repetitions did not spend it.", 100*own)
		}
	}
	for _, u := range Units([]model.Case{*c}) {
		rc.Metrics = append(rc.Metrics, Metric{Unit: u, Label: MetricName(u), Cell: StatCell(c.Stats, u)})
	}
	return rc
}
