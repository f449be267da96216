// Package report is the one model of what a stored run says — its groups
// of cases, rows, cells with units, verdicts, allocation notes and grouped
// warnings — and of what a case and a comparison say (cases.go,
// compare.go), for every renderer: the CLI's tables (WriteText,
// WriteCompareText), Markdown, JSON and every page of the web UI. Renderers decide layout; what a number is, how it is
// written and what a warning says are decided here once, as
// golang.org/x/perf's benchtab builds one table that ToText and ToCSV
// render.
package report

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/units"
	"github.com/perflab/perflab/profiles"
)

// Run is the report of one stored run.
type Run struct {
	Run *model.Run
	// Status is "complete" or "INCOMPLETE: <why>" (model.Run.Why).
	Status string
	// NoBudget says why some or all cases have no time budget when the
	// reason is the run's, not the case's: "--profile none", or an
	// interrupt before or during profiling ("" otherwise).
	NoBudget string
	// Reps says how many repetitions a median is of: "10 repetitions",
	// or "up to 10 repetitions" for an incomplete run.
	Reps string
	// Groups hold the cases of one parameter combination and goroutine
	// count, in the order the run measured them.
	Groups []Group
	// Metrics are the per-op metrics a scenario reported beyond the
	// standard ones (hits/op, …), sorted.
	Metrics []string
	// HasMB says whether any case reported MB/s (perflab.Byteser).
	HasMB bool
	// HasWindow says whether any case has a profiling window (and so a
	// budget from the execution trace and a background GC figure).
	HasWindow bool
	// TracerLeftOut says whether any case's budget left out time in the
	// execution tracer's own functions (model.Window.TracerOwn).
	TracerLeftOut bool
	// HasBudget says whether any case has a time budget; HasErr whether
	// any has its sampling error (Row.Err).
	HasBudget, HasErr bool
	// Notes compare allocation rate and bytes per operation where they
	// tell different stories.
	Notes []string
	// Warnings are the run's own warnings: the machine's, and a routine
	// kind most cases share (a noisy machine), given once. A case's other
	// warnings are on its row (Row.Warnings). Severe first.
	Warnings []Warning
	// Machine says how loaded the machine was during the timed rounds:
	// "load 1.2–4.5 on 2 CPUs, steal 0–3%" ("" when not recorded).
	Machine string
}

// maxSteal is the CPU steal above which a run gets a warning: the
// hypervisor gave that share of the CPUs to other guests.
const maxSteal = 0.05

// maxOthers is the CPUs other programs may use in a round before a run gets
// a warning. On the 2-core VM a quiet round reads 0.00–0.02, one spinning
// program 0.92, two 1.22–1.32; with two, identical variants in TestAA read
// up to 1.66× apart (their medians of eight 10 ms repetitions) and were
// called different on time/op in 1 to 4 of 12 trials in four runs, never
// on cpu/op; quiet, in none.
const maxOthers = 0.5

// MaxOthers is maxOthers for the tests that hold a claim only where the
// report does not call the rounds contended (runner's TestAA).
const MaxOthers = maxOthers

// Machine summarises the machine's load over a run's rounds, and warns
// about steal and about other programs' use of the CPUs.
func Machine(run *model.Run) (summary string, warnings []Warning) {
	if len(run.Rounds) == 0 {
		return "", nil
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	var steal float64
	for _, r := range run.Rounds {
		lo, hi = math.Min(lo, r.Load1), math.Max(hi, r.Load1)
		steal = math.Max(steal, r.Steal)
	}
	others, _ := PeakOthers(run)
	load := fmt.Sprintf("%.1f", lo)
	if hi-lo >= 0.05 {
		load += fmt.Sprintf("–%.1f", hi)
	}
	summary = fmt.Sprintf("load %s on %s (perflab's workers included), steal up to %.0f%%", load, Count(run.Env.NumCPU, "CPU"), 100*steal)
	if others >= 0.05 {
		summary += fmt.Sprintf(", other programs up to %.1f CPUs", others)
	}
	if steal > maxSteal {
		warnings = append(warnings, Warning{Kind: KindSteal, Severity: Caution, Affects: AffectsRun, Hi: math.Round(100 * steal),
			Message: fmt.Sprintf("the hypervisor stole up to %.0f%% of the CPUs during the rounds: other guests share this machine, so times are inflated and noisy", 100*steal)})
	}
	if w, ok := contention(run); ok {
		warnings = append(warnings, Warning{Kind: KindContention, Severity: Caution, Affects: AffectsRun, Hi: others, Message: w})
	}
	return summary, warnings
}

// contention is the warning for a run whose rounds had other programs on
// maxOthers or more of its CPUs, in some span, and whether there is one.
func contention(run *model.Run) (string, bool) {
	others, _ := PeakOthers(run)
	if others < maxOthers {
		return "", false
	}
	return fmt.Sprintf("other programs or the kernel used up to %.1f of %s during the rounds: the workers shared the CPUs with them, so time/op, and any verdict on it, is contended (two spinning programs made identical variants read up to 1.7× apart); compare cpu/op, which contention disturbs less, or run on a quieter machine", others, Count(run.Env.NumCPU, "CPU")), true
}

// Group is the cases of one parameter combination and goroutine count.
type Group struct {
	// Params are the parameters in the scenario's order.
	Params []Param
	// Threads is the number of worker goroutines.
	Threads int
	Rows    []Row
	// Verdict says which variant was fastest and whether by a significant
	// margin; nil with fewer than two measured variants.
	Verdict *Verdict
	// Advice, on the last group, says when the repetitions were too few
	// for the verdicts' correction to resolve one change, and what
	// --count would.
	Advice string
}

// Param is one parameter of a group.
type Param struct{ Name, Value string }

// Title is the group's heading: "keys=1024 key=ssk threads=4".
func (g *Group) Title() string {
	parts := make([]string, 0, len(g.Params)+1)
	for _, p := range g.Params {
		parts = append(parts, p.Name+"="+p.Value)
	}
	if g.Threads > 0 {
		parts = append(parts, fmt.Sprintf("threads=%d", g.Threads))
	}
	return strings.Join(parts, " ")
}

// Row is one case of a group.
type Row struct {
	Case *model.Case
	// OK is false for a failed, skipped or n/a case; Message then says
	// why ("failed: …", "n/a: …").
	OK      bool
	Message string
	// Budget is the case's time budget as shares of time/op, one per
	// profiles.Categories entry (all zero without a budget).
	Budget    []float64
	HasBudget bool
	// Err is, per category as Budget, the half-width of a 95% interval on
	// its share from the CPU samples that split running time; ErrMax the
	// widest (what the tables show); HasErr says the run recorded it.
	Err    []float64
	ErrMax float64
	HasErr bool
	// Untrusted says the budget cannot be trusted; Trust is why, short
	// (TrustReason). Both are zero for a trusted budget and for one from
	// a run made before budgets were judged.
	Untrusted bool
	Trust     string
	// SchedBy says what the goroutines were doing when they lost their
	// CPU ("sched 23 pts, of which work 20"; see SchedBy). SchedNote is
	// it where the sched share is large enough to be shown under the row.
	SchedBy, SchedNote string
	// Warnings are the case's own warnings (those not given once for the
	// run), severe first: each says whether it is about the timing row or
	// the budget row.
	Warnings []Warning
}

// Marked says whether the row has a warning about what affects (the
// timing row or the budget row) at severity min or above: renderers put a
// mark on that row.
func (r *Row) Marked(affects Affects, min Severity) bool {
	for _, w := range r.Warnings {
		if w.Affects == affects && w.Severity >= min {
			return true
		}
	}
	return false
}

// Stat returns the summary of unit, and whether the case measured it.
func (r *Row) Stat(unit string) (model.Stat, bool) {
	st, ok := r.Case.Stats[unit]
	return st, ok
}

// Cell formats the median of unit: "214.7ns", "" when not measured.
func (r *Row) Cell(unit string) string {
	st, ok := r.Stat(unit)
	if !ok {
		return ""
	}
	return Value(st.Median, unit)
}

// Verdict is the fastest variant of a group against the runner-up, by the
// same statistics as `perflab compare` (internal/compare): the Wilcoxon
// signed-rank test on time/op paired by round, the p-value adjusted across
// the run's groups (Benjamini–Hochberg), and the practical threshold.
type Verdict struct {
	Fastest, RunnerUp, Slowest string
	// Speedup is the runner-up's median time/op over the fastest's;
	// OverSlowest the slowest's over the fastest's.
	Speedup, OverSlowest float64
	// P is the adjusted p-value; Significant says the fastest is faster
	// beyond the threshold; CannotTell says there were too few repetitions
	// for any difference to be significant.
	P float64
	// N1 and N2 are the fastest's and the runner-up's repetitions, in
	// the sentence's order: "fastest: X, … than Y (… n=N1+N2)".
	N1, N2                  int
	Significant, CannotTell bool
	// Below says the difference was significant but under the threshold.
	Below     bool
	Threshold float64
}

// String is the verdict's sentence.
func (v *Verdict) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "fastest: %s, %s faster than %s", v.Fastest, speed(v.Speedup), v.RunnerUp)
	switch {
	case v.Significant:
		fmt.Fprintf(&b, " (significant: p=%.3g n=%d+%d)", v.P, v.N1, v.N2)
	case v.CannotTell:
		fmt.Fprintf(&b, " (cannot tell: too few repetitions, n=%d+%d)", v.N1, v.N2)
	case v.Below:
		fmt.Fprintf(&b, " (significant, but its interval reaches inside ±%s: p=%.3g n=%d+%d)", pctPlain(v.Threshold), v.P, v.N1, v.N2)
	default:
		fmt.Fprintf(&b, " (not significant: p=%.2g n=%d+%d)", v.P, v.N1, v.N2)
	}
	if v.Slowest != "" && v.Slowest != v.RunnerUp {
		fmt.Fprintf(&b, "; %s faster than the slowest, %s", speed(v.OverSlowest), v.Slowest)
	}
	return b.String()
}

func speed(r float64) string {
	if r >= 10 {
		return fmt.Sprintf("%.0f×", r)
	}
	if r >= 1.1 {
		return fmt.Sprintf("%.2g×", r)
	}
	if r < 1.01 {
		return fmt.Sprintf("%.1f%%", 100*(r-1))
	}
	return fmt.Sprintf("%.0f%%", 100*(r-1))
}

// Build makes the report of run.
func Build(run *model.Run) *Run {
	rep := &Run{Run: run, Status: "complete", Reps: Count(run.Config.Count, "repetition")}
	// --until adds rounds: say how many the cases got.
	most := 0
	for _, c := range run.Cases {
		most = max(most, c.Stats["ns/op"].N)
	}
	if most > run.Config.Count {
		rep.Reps = "up to " + Count(most, "repetition") + " (--until)"
	}
	if !run.Complete {
		rep.Status = "INCOMPLETE"
		if why := run.Why(); why != "" {
			rep.Status += ": " + why
		}
		// As many as the best-measured case got, not the --count it
		// did not reach.
		if most == 0 {
			most = run.Config.Count
		}
		rep.Reps = "up to " + Count(most, "repetition")
	}
	byKey := map[string]int{}
	var warnings []caseWarning
	measured := 0
	extra := map[string]bool{}
	for i := range run.Cases {
		c := &run.Cases[i]
		params := Params(run, c)
		g := Group{Params: params, Threads: c.Threads}
		key := g.Title()
		gi, ok := byKey[key]
		if !ok {
			gi = len(rep.Groups)
			byKey[key] = gi
			rep.Groups = append(rep.Groups, g)
		}
		row := Row{Case: c, OK: c.Status == model.StatusOK}
		if !row.OK {
			row.Message = string(c.Status)
			if c.Error != "" {
				row.Message += ": " + firstLine(c.Error)
			}
		}
		var total float64
		for _, v := range c.Budget {
			total += v
		}
		if total > 0 {
			row.HasBudget, rep.HasBudget = true, true
			row.Budget = make([]float64, len(profiles.Categories))
			for _, cat := range profiles.Categories {
				row.Budget[cat.Index()] = c.Budget[string(cat)] / total
			}
			if c.BudgetErr != nil {
				row.Err = make([]float64, len(profiles.Categories))
				for _, cat := range profiles.Categories {
					row.Err[cat.Index()] = shareErr(c.BudgetErr[string(cat)], total)
					row.ErrMax = max(row.ErrMax, row.Err[cat.Index()])
				}
				// Not said to be exact where no share has a figure.
				if row.HasErr = row.ErrMax > 0; row.HasErr {
					rep.HasErr = true
				} else {
					row.Err = nil
				}
			}
			row.Untrusted, row.Trust = c.BudgetTrust.Untrusted(), TrustReason(c.BudgetTrust)
			row.SchedBy = SchedBy(c)
			if row.Budget[profiles.Sched.Index()] >= minSchedNote {
				row.SchedNote = row.SchedBy
			}
		}
		if row.OK {
			measured++
		}
		for _, w := range CaseWarnings(c) {
			warnings = append(warnings, caseWarning{group: gi, row: len(rep.Groups[gi].Rows), name: c.Name, w: w})
		}
		rep.Groups[gi].Rows = append(rep.Groups[gi].Rows, row)
		for u := range c.Stats {
			if _, known := units.Lookup(u); !known {
				extra[u] = true
			}
		}
		if _, ok := c.Stats["MB/s"]; ok {
			rep.HasMB = true
		}
		if c.Window != nil {
			rep.HasWindow = true
			_, own := tracerOwn(c.Window)
			rep.TracerLeftOut = rep.TracerLeftOut || own
		}
	}
	for u := range extra {
		rep.Metrics = append(rep.Metrics, u)
	}
	sort.Strings(rep.Metrics)
	verdicts(rep.Groups)
	for i := range rep.Groups {
		g := &rep.Groups[i]
		cases := make([]*model.Case, len(g.Rows))
		for j := range g.Rows {
			cases[j] = g.Rows[j].Case
		}
		rep.Notes = append(rep.Notes, allocNotes(g.Title(), cases)...)
	}
	rep.NoBudget = noBudget(run)
	var perRow map[[2]int][]Warning
	rep.Warnings, perRow = groupWarnings(warnings, measured)
	for pos, ws := range perRow {
		sortWarnings(ws)
		rep.Groups[pos[0]].Rows[pos[1]].Warnings = ws
	}
	var machine []Warning
	rep.Machine, machine = Machine(run)
	rep.Warnings = append(machine, rep.Warnings...)
	sortWarnings(rep.Warnings)
	return rep
}

// noBudget says why a run's measured cases lack a time budget, when the
// run is the reason.
func noBudget(run *model.Run) string {
	measured, budgets := 0, 0
	for _, c := range run.Cases {
		if c.Status != model.StatusOK || len(c.Reps) == 0 {
			continue
		}
		measured++
		if len(c.Budget) > 0 {
			budgets++
		}
	}
	switch {
	case measured == 0 || budgets == measured:
		return ""
	case len(run.Config.Profile) == 0:
		return "No time budget: the run was made with --profile none."
	case run.Complete:
		return ""
	case budgets == 0:
		return "No time budget: the run was interrupted before profiling."
	}
	return fmt.Sprintf("Time budget for %d of %s: the run was interrupted while profiling.", budgets, Count(measured, "case"))
}

// verdicts compares each group's fastest measured variant with its
// runner-up, all groups one comparison (one false-discovery control).
func verdicts(groups []Group) {
	var pairs []compare.Pair
	var of []*Verdict
	for i := range groups {
		g := &groups[i]
		var ok []*model.Case
		for _, r := range g.Rows {
			if st, has := r.Case.Stats["ns/op"]; r.OK && has && st.Median > 0 {
				ok = append(ok, r.Case)
			}
		}
		if len(ok) < 2 {
			continue
		}
		sort.SliceStable(ok, func(i, j int) bool { return ok[i].Stats["ns/op"].Median < ok[j].Stats["ns/op"].Median })
		fast, next, slow := ok[0], ok[1], ok[len(ok)-1]
		g.Verdict = &Verdict{
			Fastest: fast.Variant, RunnerUp: next.Variant, Slowest: slow.Variant,
			Speedup:     next.Stats["ns/op"].Median / fast.Stats["ns/op"].Median,
			OverSlowest: slow.Stats["ns/op"].Median / fast.Stats["ns/op"].Median,
		}
		// The cases of one run ran in the same rounds: paired.
		pairs = append(pairs, compare.Pair{Label: g.Title(), A: next, B: fast, Paired: true})
		of = append(of, g.Verdict)
	}
	c := compare.One(pairs, "ns/op", compare.Options{})
	if len(groups) > 0 && c.Advice != "" {
		// Both sides are cases of this run: one --count for the run.
		groups[len(groups)-1].Advice = "verdicts: " + c.AdviceFor("", "")
	}
	for i, r := range c.Results {
		v := of[i]
		// The pair is (runner-up, fastest): the change is the fastest's
		// against the runner-up. The sentence names the fastest first.
		v.P, v.N1, v.N2, v.Threshold = r.PAdj, r.N2, r.N1, c.Options.Threshold
		v.Significant = r.Verdict == compare.Better
		v.CannotTell = r.Verdict == compare.CannotTell
		v.Below = r.Verdict == compare.Same && r.Significant
	}
}

// GroupKey is the title of the group c belongs to in run: its parameters
// in the scenario's order and its goroutine count.
func GroupKey(run *model.Run, c *model.Case) string {
	g := Group{Params: Params(run, c), Threads: c.Threads}
	return g.Title()
}

// Params returns a case's parameters in the scenario's order: the order
// run.json records (model.Run.ParamOrder) or, for runs stored before it
// did, the order of the case name's segments, checked against the case's
// Params so that a variant name containing '/' cannot forge parameters.
// Parameters neither names follow, sorted.
func Params(run *model.Run, c *model.Case) []Param {
	var out []Param
	used := map[string]bool{}
	take := func(k string) {
		if v, ok := c.Params[k]; ok && !used[k] {
			out = append(out, Param{k, v})
			used[k] = true
		}
	}
	if run != nil && len(run.ParamOrder) > 0 {
		for _, k := range run.ParamOrder {
			take(k)
		}
	} else {
		for _, seg := range strings.Split(c.Name, "/") {
			if k, v, ok := strings.Cut(seg, "="); ok && c.Params[k] == v {
				take(k)
			}
		}
	}
	var rest []string
	for k := range c.Params {
		if !used[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		take(k)
	}
	return out
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// ListStatus is a run's status in a listing: "complete", "complete, 2
// failed", "failed (all 12 cases)", "incomplete" or "incomplete, empty".
// A run whose every case failed is not "complete": it measured nothing,
// and `latest` passes it by.
func ListStatus(r *model.Run) string {
	failed := 0
	for _, c := range r.Cases {
		if c.Status == model.StatusFailed {
			failed++
		}
	}
	switch {
	case !r.Complete && !r.Measured():
		return "incomplete, empty"
	case !r.Complete:
		return "incomplete"
	case !r.Measured() && failed == 1 && len(r.Cases) == 1:
		return "failed"
	case !r.Measured() && failed == len(r.Cases) && failed > 0:
		return fmt.Sprintf("failed (all %d cases)", failed)
	case !r.Measured():
		return "complete, nothing measured"
	case failed > 0:
		return fmt.Sprintf("complete, %d failed", failed)
	}
	return "complete"
}

// Unmeasured says why a run measured nothing: "all 12 cases failed",
// "interrupted before any case was measured"; "" when it measured
// something.
func Unmeasured(r *model.Run) string {
	if r.Measured() {
		return ""
	}
	failed := 0
	for _, c := range r.Cases {
		if c.Status == model.StatusFailed {
			failed++
		}
	}
	switch {
	case !r.Complete:
		return "interrupted before any case was measured"
	case failed == len(r.Cases) && failed > 0:
		return AllFailed(failed)
	}
	return "no case was measured"
}

// AllFailed says that every one of a run's n cases failed: "its one case
// failed", "all 3 cases failed".
func AllFailed(n int) string {
	if n == 1 {
		return "its one case failed"
	}
	return "all " + Count(n, "case") + " failed"
}
