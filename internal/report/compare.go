package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/units"
)

// Comparison is what `perflab compare` says, for every renderer: the
// verdicts per metric (internal/compare: the one place the statistics
// live), and the warnings that decide whether to trust them.
type Comparison struct {
	// A and B name the two sides: run ids, case names or variants.
	A, B string
	// Metrics holds one comparison per unit, each with its own
	// false-discovery control.
	Metrics []compare.Comparison
	// OnlyA and OnlyB are the cases one side has and the other lacks.
	OnlyA, OnlyB []string
	// Warnings: environment differences, contention, failed or n/a
	// cases, incomplete runs, each with its kind (KindEnvDiffers, …).
	Warnings []Warning
	// Unusable says the comparison could not be made (nothing shared,
	// an empty run); Reason says why.
	Unusable bool
	Reason   string
	// Incomplete names an incomplete run the comparison rests on: shown,
	// but not good enough to gate on.
	Incomplete string
	// Gate is compare --fail-on's verdict, nil without it.
	Gate *Gate
}

// Regressed reports whether any metric of any row got worse beyond the
// threshold, significantly after correction.
func (c *Comparison) Regressed() bool { return compare.Regressed(c.Metrics) }

// Load differences worth a word: the rounds' highest one-minute load
// average by half a CPU or more, their highest steal by 2 points (load
// 0.8–1.1 against 1.0–1.1 on two CPUs was a warning, for the same machine
// doing the same thing), or the most CPUs other programs used in a round
// by a quarter of a CPU.
const (
	minLoadDiff   = 0.5
	minStealDiff  = 0.02
	minOthersDiff = 0.25
)

// loadDiffers says whether two runs' machines were busy differently enough
// during their rounds to explain a difference in their times.
func loadDiffers(a, b *model.Run) bool {
	peak := func(r *model.Run) (load, steal float64) {
		for _, rd := range r.Rounds {
			load, steal = math.Max(load, rd.Load1), math.Max(steal, rd.Steal)
		}
		return load, steal
	}
	la, sa := peak(a)
	lb, sb := peak(b)
	oa, okA := PeakOthers(a)
	ob, okB := PeakOthers(b)
	return math.Abs(la-lb) >= minLoadDiff || math.Abs(sa-sb) >= minStealDiff ||
		okA && okB && math.Abs(oa-ob) >= minOthersDiff
}

// EnvWarnings lists how two runs' machines and settings differ, each a
// reason their numbers may differ that is not the code.
func EnvWarnings(a, b *model.Run) []Warning {
	var out []Warning
	add := func(kind model.WarningKind, msg string) {
		out = append(out, Warning{Kind: kind, Severity: Caution, Affects: AffectsRun, Message: msg})
	}
	diff := func(what, x, y string) {
		if x != y {
			add(KindEnvDiffers, fmt.Sprintf("%s differs: %s vs %s", what, orNone(x), orNone(y)))
		}
	}
	diff("Go version", a.Env.GoVersion, b.Env.GoVersion)
	diff("machine", a.Env.Hostname, b.Env.Hostname)
	diff("CPU", a.Env.CPU, b.Env.CPU)
	diff("GOOS/GOARCH", a.Env.GOOS+"/"+a.Env.GOARCH, b.Env.GOOS+"/"+b.Env.GOARCH)
	diff("GOMAXPROCS", fmt.Sprint(a.Env.GOMAXPROCS), fmt.Sprint(b.Env.GOMAXPROCS))
	diff("GOGC", a.Env.GOGC, b.Env.GOGC)
	ca, cb := commitOf(a), commitOf(b)
	if ca != cb {
		out = append(out, Warning{Kind: KindCommit, Severity: Info, Affects: AffectsRun, Message: fmt.Sprintf("commit: %s vs %s", orNone(ca), orNone(cb))})
	}
	ma, _ := Machine(a)
	mb, _ := Machine(b)
	if ma != "" && mb != "" && loadDiffers(a, b) {
		add(KindLoadDiffers, fmt.Sprintf("machine load: %s vs %s", ma, mb))
	}
	for _, r := range []*model.Run{a, b} {
		if !r.Complete {
			add(KindIncomplete, fmt.Sprintf("run %s is incomplete: %s", r.ID, r.Why()))
		}
	}
	return out
}

// ContentionWarnings says, for each of the runs a comparison rests on
// (once each), when other programs used maxOthers or more of its CPUs in
// some round: its wall times are contended, and so is any verdict on them.
func ContentionWarnings(runs ...*model.Run) []Warning {
	var out []Warning
	seen := map[string]bool{}
	for _, r := range runs {
		if r == nil || seen[r.ID] {
			continue
		}
		seen[r.ID] = true
		if w, ok := contention(r); ok {
			out = append(out, Warning{Kind: KindContention, Severity: Caution, Affects: AffectsRun, Message: "run " + r.ID + ": " + w})
		}
	}
	return out
}

// PeakOthers is the most CPUs other programs (or the kernel) used over any
// span of a run's rounds, and whether the run recorded any.
func PeakOthers(r *model.Run) (float64, bool) {
	peak, ok := 0.0, false
	for _, rd := range r.Rounds {
		if rd.Others != nil {
			peak, ok = math.Max(peak, *rd.Others), true
		}
	}
	return peak, ok
}

func commitOf(r *model.Run) string {
	c := r.Env.Commit
	if len(c) > 12 {
		c = c[:12]
	}
	if r.Env.Dirty {
		c += "+dirty"
	}
	return c
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// VerdictText is a row's verdict as every renderer says it.
func VerdictText(r compare.Result, opts compare.Options) string { return verdictText(r, opts) }

// ChangeText is a row's change with its interval, "+12.3% [+9.1%, +15.6%]".
func ChangeText(r compare.Result) string { return changeText(r) }

// verdictText is a row's verdict as the table says it.
func verdictText(r compare.Result, opts compare.Options) string {
	switch r.Verdict {
	case compare.Better, compare.Worse:
		return string(r.Verdict)
	case compare.CannotTell:
		return "cannot tell"
	}
	if r.Significant {
		if r.UnderZeroFloor {
			return "~ (under " + Value(units.ZeroFloor(r.Unit), r.Unit) + " " + r.Unit + ")"
		}
		return fmt.Sprintf("~ (not beyond %s)", pctPlain(opts.Threshold))
	}
	return "~"
}

func pctPlain(f float64) string {
	return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.1f", 100*f), "0"), ".") + "%"
}

// changeText is "+12.3% [+9.1%, +15.6%]".
func changeText(r compare.Result) string {
	if math.IsNaN(r.Change) {
		return "—"
	}
	if math.IsInf(r.Change, 0) && r.ASum.Center == 0 {
		// No relative change from nothing: the new median, as a rise.
		return "+" + Value(r.BSum.Center, r.Unit) + " (from 0)"
	}
	return signedPct(r.Change) + " [" + bound(r.ChangeLo) + ", " + bound(r.ChangeHi) + "]"
}

func signedPct(f float64) string { return fmt.Sprintf("%+.1f%%", 100*f) }

func bound(f float64) string {
	if math.IsInf(f, 0) {
		if f < 0 {
			return "−∞"
		}
		return "+∞"
	}
	return signedPct(f)
}

func sideText(s compare.Result, a bool) string {
	sum := s.BSum
	if a {
		sum = s.ASum
	}
	return Value(sum.Center, s.Unit) + " " + CI(sum.Center, sum.Lo, sum.Hi)
}

// metricTitle is the heading of one metric's block.
func metricTitle(c compare.Comparison) string {
	test := compare.TestUnpaired
	if len(c.Results) > 0 {
		test = c.Results[0].Test
	}
	return fmt.Sprintf("%s: %s; %s; Benjamini–Hochberg at %s; threshold ±%s",
		unitName(c.Unit), Count(c.Tested, "row"), test, pctPlain(c.Options.Alpha), pctPlain(c.Options.Threshold))
}

func unitName(u string) string { return MetricName(u) }

// MetricName is the label tables print for a unit (units.Label).
func MetricName(unit string) string { return units.Label(unit) }

// MetricUnit is the run.json unit of a metric named by its label or unit
// (units.Parse).
func MetricUnit(name string) string { return units.Parse(name) }

// WriteCompareText renders the comparison for a terminal, fitting width
// columns (default 80): a row whose cells do not fit beside its label puts
// the label on a line of its own.
func WriteCompareText(w io.Writer, c *Comparison, cols int) error {
	if cols <= 0 {
		cols = 80
	}
	tw := &textWriter{w: w}
	if c.Unusable {
		tw.wrap("cannot compare: "+c.Reason, cols, "")
	}
	// Long side names (run ids) are given once and the columns say A and B.
	headA, headB := c.A, c.B
	if len(c.Metrics) > 0 && (width(c.A) > 12 || width(c.B) > 12) {
		headA, headB = "A", "B"
		tw.linef("A: %s", c.A)
		tw.linef("B: %s", c.B)
		tw.linef("")
	}
	// Whether a row's verdict needs a line of its own is decided once for
	// every metric, so that the blocks keep one shape: cpu/op's wide
	// "~ (not beyond 5%)" put its verdicts on their own lines where
	// time/op's, one block up, were not.
	split := false
	for _, m := range c.Metrics {
		for _, r := range m.Results {
			one := fmt.Sprintf("    %s → %s  %s  %s  p=%.3g", sideText(r, true), sideText(r, false), changeText(r), verdictText(r, m.Options), r.PAdj)
			split = split || width(one) > cols
		}
	}
	// A note the metric above already gave in full is named, not said
	// again: with too few repetitions the same three lines of --count
	// advice came under each of the four metrics.
	var lastAdv, lastUnit string
	for _, m := range c.Metrics {
		tw.wrap(metricTitle(m), cols, "")
		t := &table{}
		label := t.add("", false, "")
		av := t.add(headA, true, "")
		bv := t.add(headB, true, "")
		ch := t.add("change [95% CI]", true, "")
		ve := t.add("verdict", false, "")
		pv := t.add("p (adj.)", true, "")
		for _, r := range m.Results {
			t.row("")
			label.cells = append(label.cells, r.Label)
			av.cells = append(av.cells, sideText(r, true))
			bv.cells = append(bv.cells, sideText(r, false))
			ch.cells = append(ch.cells, changeText(r))
			ve.cells = append(ve.cells, verdictText(r, m.Options))
			pv.cells = append(pv.cells, fmt.Sprintf("%.3g", r.PAdj))
		}
		if t.total() <= cols {
			t.write(tw, 0)
		} else {
			// Too wide beside its label: each row under its label, and
			// when a row is too wide even so ("~ (not beyond 5%)" with a
			// wide interval), every row's verdict on a line of its own.
			tw.linef("  case")
			if split {
				tw.linef("    %s → %s  change [95%% CI]", headA, headB)
				tw.linef("      verdict  p (adj.)")
			} else {
				tw.linef("    %s → %s  change [95%% CI]  verdict  p (adj.)", headA, headB)
			}
			for i := range t.msgs {
				for _, l := range labelLines(label.cells[i], cols-2) {
					tw.linef("  %s", l)
				}
				if split {
					tw.linef("    %s → %s  %s", av.cells[i], bv.cells[i], ch.cells[i])
					tw.linef("      %s  p=%s", ve.cells[i], pv.cells[i])
				} else {
					tw.linef("    %s → %s  %s  %s  p=%s", av.cells[i], bv.cells[i], ch.cells[i], ve.cells[i], pv.cells[i])
				}
			}
		}
		if adv := m.AdviceFor(c.A, c.B); adv == lastAdv && adv != "" {
			tw.wrap("note: the same as for "+lastUnit, cols, "  ")
		} else if adv != "" {
			tw.wrap("note: "+adv, cols, "  ")
			lastAdv, lastUnit = adv, unitName(m.Unit)
		}
		tw.linef("")
	}
	if len(c.OnlyA) > 0 {
		tw.wrap(fmt.Sprintf("only in %s (%d): %s", c.A, len(c.OnlyA), strings.Join(c.OnlyA, ", ")), cols, "")
	}
	if len(c.OnlyB) > 0 {
		tw.wrap(fmt.Sprintf("only in %s (%d): %s", c.B, len(c.OnlyB), strings.Join(c.OnlyB, ", ")), cols, "")
	}
	if len(c.Warnings) > 0 {
		tw.linef("warnings:")
		for _, wn := range c.Warnings {
			tw.wrap(wn.Message, cols, "  ")
		}
	}
	return tw.err
}

// labelLines is a row's label in lines of at most cols where it can be
// broken: "case-a vs case-b" (two cases compared) as "case-a" and
// "vs case-b". A label without " vs " stays whole.
func labelLines(label string, cols int) []string {
	if width(label) <= cols {
		return []string{label}
	}
	if a, b, ok := strings.Cut(label, " vs "); ok {
		return []string{a, "vs " + b}
	}
	return []string{label}
}

// WriteCompareMarkdown renders the comparison as Markdown a CI job can
// post on a pull request.
func WriteCompareMarkdown(w io.Writer, c *Comparison) error {
	tw := &textWriter{w: w}
	tw.linef("## perflab compare: %s → %s", mdEscape(c.A), mdEscape(c.B))
	tw.linef("")
	if c.Unusable {
		tw.linef("**Cannot compare:** %s", mdEscape(c.Reason))
		tw.linef("")
	}
	for _, m := range c.Metrics {
		tw.linef("### %s", mdEscape(metricTitle(m)))
		tw.linef("")
		tw.linef("| case | %s | %s | change [95%% CI] | verdict | p (adj.) |", mdEscape(c.A), mdEscape(c.B))
		tw.linef("|---|---:|---:|---:|---|---:|")
		for _, r := range m.Results {
			v := mdEscape(verdictText(r, m.Options))
			switch r.Verdict {
			case compare.Worse:
				v = "**worse**"
			case compare.Better:
				v = "**better**"
			}
			tw.linef("| %s | %s | %s | %s | %s | %.3g |", mdEscape(r.Label), sideText(r, true), sideText(r, false), changeText(r), v, r.PAdj)
		}
		if adv := m.AdviceFor(c.A, c.B); adv != "" {
			tw.linef("")
			tw.linef("_Note: %s_", mdEscape(adv))
		}
		tw.linef("")
	}
	for _, s := range []struct {
		side  string
		cases []string
	}{{c.A, c.OnlyA}, {c.B, c.OnlyB}} {
		if len(s.cases) > 0 {
			tw.linef("Only in %s: %s", mdEscape(s.side), mdEscape(strings.Join(s.cases, ", ")))
			tw.linef("")
		}
	}
	for _, wn := range c.Warnings {
		tw.linef("- ⚠ %s", mdEscape(wn.Message))
	}
	return tw.err
}

// mdEscape keeps user text from being read as Markdown or HTML: table
// pipes, emphasis, links and tags are escaped, line breaks flattened.
func mdEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '|', '*', '_', '`', '[', ']', '<', '>', '#', '!':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n', '\r':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// compareJSON is the --json form of a comparison: stable field names for
// tooling.
type compareJSON struct {
	A, B       string       `json:"-"`
	Base       string       `json:"a"`
	New        string       `json:"b"`
	Regressed  bool         `json:"regressed"`
	Unusable   bool         `json:"unusable,omitempty"`
	Incomplete string       `json:"incomplete,omitempty"`
	Reason     string       `json:"reason,omitempty"`
	Metrics    []metricJSON `json:"metrics"`
	OnlyA      []string     `json:"only_a,omitempty"`
	OnlyB      []string     `json:"only_b,omitempty"`
	Warnings   []Warning    `json:"warnings,omitempty"`
	Gate       *Gate        `json:"gate,omitempty"`
}

type metricJSON struct {
	Unit      string    `json:"unit"`
	Rows      int       `json:"rows"`
	Alpha     float64   `json:"alpha"`
	Threshold float64   `json:"threshold"`
	Advice    string    `json:"advice,omitempty"`
	Results   []rowJSON `json:"results"`
}

type rowJSON struct {
	Case     string   `json:"case"`
	A        sideJSON `json:"a"`
	B        sideJSON `json:"b"`
	Change   *float64 `json:"change"`
	ChangeLo *float64 `json:"change_lo"`
	ChangeHi *float64 `json:"change_hi"`
	Test     string   `json:"test"`
	P        float64  `json:"p"`
	PAdj     float64  `json:"p_adjusted"`
	Verdict  string   `json:"verdict"`
}

type sideJSON struct {
	Median float64  `json:"median"`
	Lo     *float64 `json:"lo"`
	Hi     *float64 `json:"hi"`
	N      int      `json:"n"`
}

func finiteOrNil(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

// WriteCompareJSON renders the comparison as JSON (infinite bounds are
// null).
func WriteCompareJSON(w io.Writer, c *Comparison) error {
	out := compareJSON{Base: c.A, New: c.B, Regressed: c.Regressed(), Unusable: c.Unusable, Reason: c.Reason, Incomplete: c.Incomplete,
		OnlyA: c.OnlyA, OnlyB: c.OnlyB, Warnings: c.Warnings, Metrics: []metricJSON{}, Gate: c.Gate}
	for _, m := range c.Metrics {
		mj := metricJSON{Unit: m.Unit, Rows: m.Tested, Alpha: m.Options.Alpha, Threshold: m.Options.Threshold, Advice: m.Advice}
		for _, r := range m.Results {
			mj.Results = append(mj.Results, rowJSON{
				Case:   r.Label,
				A:      sideJSON{Median: r.ASum.Center, Lo: finiteOrNil(r.ASum.Lo), Hi: finiteOrNil(r.ASum.Hi), N: r.N1},
				B:      sideJSON{Median: r.BSum.Center, Lo: finiteOrNil(r.BSum.Lo), Hi: finiteOrNil(r.BSum.Hi), N: r.N2},
				Change: finiteOrNil(r.Change), ChangeLo: finiteOrNil(r.ChangeLo), ChangeHi: finiteOrNil(r.ChangeHi),
				Test: r.Test, P: r.P, PAdj: r.PAdj, Verdict: string(r.Verdict),
			})
		}
		out.Metrics = append(out.Metrics, mj)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
