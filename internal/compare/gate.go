package compare

import (
	"fmt"
	"math"
	"strings"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/units"
)

// ProblemKind says why a gate could not judge a case or a metric.
type ProblemKind string

// The kinds of problem. Each is a reason a gate fails closed: what it
// cannot judge is not a pass (issue 26).
const (
	// ProblemFailed: a case failed, was skipped, or has a status perflab
	// does not know (a run stored as complete can still hold a variant
	// that panicked).
	ProblemFailed ProblemKind = "failed"
	// ProblemMissing: a case of the base has no counterpart to compare
	// with (gone from the new run, n/a there, or no base variant case at
	// its parameters).
	ProblemMissing ProblemKind = "missing"
	// ProblemDuplicate: a name occurs twice on a side, so which case a
	// row compares would be arbitrary.
	ProblemDuplicate ProblemKind = "duplicate"
	// ProblemNoSamples: a pair of measured cases has no repetitions of a
	// metric on one side (or of any compared metric), so it has no row.
	ProblemNoSamples ProblemKind = "no repetitions"
	// ProblemTooFew: the repetitions are too few for a change to be
	// significant at all, or for a change in one row alone once
	// corrected for the number of rows: a 3× slowdown at --count 3 reads
	// "cannot tell", never "worse".
	ProblemTooFew ProblemKind = "too few repetitions"
	// ProblemUnmeasured: a metric named for the gate that no compared
	// case measured.
	ProblemUnmeasured ProblemKind = "not measured"
)

// Problem is one thing a gate could not judge.
type Problem struct {
	Kind ProblemKind
	// What names the case or metric; Detail says what is wrong with it
	// and, where it can, what to do.
	What, Detail string
	// Case is the case's name when the problem is one case's, Metric the
	// unit when it is one metric's: for machine-readable output.
	Case, Metric string
}

// String says the problem in one line.
func (p Problem) String() string { return p.What + ": " + p.Detail }

// Gate is what a CI gate makes of a comparison: the rows that regressed
// and what it could not judge. It passes only with neither.
type Gate struct {
	Regressions []Result
	Problems    []Problem
}

// Pass reports whether nothing regressed and everything was judged.
func (g Gate) Pass() bool { return len(g.Regressions) == 0 && len(g.Problems) == 0 }

// known are the statuses a run can give a case.
var known = map[model.Status]bool{model.StatusOK: true, model.StatusFailed: true, model.StatusSkipped: true, model.StatusNotApplicable: true}

// Judge judges the comparisons cs of pairing p on the units us for a gate.
// nameA and nameB name the sides in advice (run ids), or are empty for
// the variants of one run.
func Judge(p Pairing, cs []Comparison, us []string, nameA, nameB string) Gate {
	var g Gate
	for _, c := range cs {
		for _, r := range c.Results {
			if r.Verdict == Worse {
				g.Regressions = append(g.Regressions, r)
			}
		}
	}
	add := func(k ProblemKind, what, cs, format string, args ...any) {
		g.Problems = append(g.Problems, Problem{Kind: k, What: what, Case: cs, Detail: fmt.Sprintf(format, args...)})
	}
	for _, d := range p.Duplicates {
		add(ProblemDuplicate, d, "", "occurs more than once") // d says which run or variant
	}
	for _, rc := range p.Involved {
		c, what := rc.Case, "case "+rc.Case.Name+" of run "+rc.Run
		switch {
		case c.Status == model.StatusFailed:
			add(ProblemFailed, what, c.Name, "failed: %s", firstLine(c.Error))
		case c.Status == model.StatusSkipped:
			add(ProblemFailed, what, c.Name, "was not measured (skipped)")
		case !known[c.Status]:
			add(ProblemFailed, what, c.Name, "has status %q, which perflab does not know", c.Status)
		}
	}
	for _, name := range p.OnlyA {
		add(ProblemMissing, "case "+name, name, "is in the base %s but not in the new run", orRun(nameA))
	}
	for _, u := range p.Unmatched {
		add(ProblemMissing, "case "+u, "", "cannot be compared") // u says why in words
	}
	for _, pr := range p.Pairs {
		if pr.A.Status == model.StatusOK && pr.B.Status == model.StatusNotApplicable {
			add(ProblemMissing, "case "+pr.Label, pr.Label, "was measured in the base but is n/a in the new run")
		}
		if pr.A.Status != model.StatusOK || pr.B.Status != model.StatusOK {
			continue
		}
		if d := missingSamples(pr, us); d != "" {
			add(ProblemNoSamples, "case "+pr.Label, pr.Label, "%s", d)
		}
	}
	for _, c := range cs {
		if d := unresolvable(c, nameA, nameB); d != "" {
			add(ProblemTooFew, units.Label(c.Unit), "", "%s", d)
			g.Problems[len(g.Problems)-1].Metric = c.Unit
		}
	}
	return g
}

// labels are units as the tables name them (time/op for ns/op): what a
// gate's reasons say, so that they read as the table above them.
func labels(us []string) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = units.Label(u)
	}
	return out
}

// missingSamples says which of the units us a pair of measured cases has on one
// side only, or that it has none of them on either: "" when every metric
// either side measured has a row.
func missingSamples(p Pair, us []string) string {
	var one []string
	any := false
	for _, u := range us {
		a, b := len(Samples(p.A, u)), len(Samples(p.B, u))
		any = any || a > 0 || b > 0
		if (a == 0) != (b == 0) {
			one = append(one, fmt.Sprintf("%s (n=%d+%d)", units.Label(u), a, b))
		}
	}
	switch {
	case len(one) > 0:
		return "no repetitions of " + strings.Join(one, ", ") + " on one side"
	case !any:
		return fmt.Sprintf("no repetitions of %s (n=%d+%d repetitions)", strings.Join(labels(us), ", "), len(p.A.Reps), len(p.B.Reps))
	}
	return ""
}

// designMinP is the smallest p-value row r's test could give at its
// repetition counts, ties aside: what --count decides. (Result.MinP also
// counts the pairs that tied, which says nothing about too few
// repetitions: identical B/op in 5 of 6 pairs is not a reason to rerun.)
func designMinP(r Result) float64 {
	if r.Test == TestPaired {
		return minSignedRankP(min(r.N1, r.N2))
	}
	return minUP(r.N1, r.N2)
}

// unresolvable says why comparison c cannot show a change in its rows:
// some row's repetitions are too few for any p below alpha, or one row
// alone cannot be significant after the correction for c's rows. "" when
// it can, or when every row is significant anyway.
func unresolvable(c Comparison, nameA, nameB string) string {
	alpha := c.Options.Alpha
	var few []Result
	best, all := math.Inf(1), true
	for _, r := range c.Results {
		p := designMinP(r)
		best = math.Min(best, p)
		all = all && r.Significant
		if p >= alpha {
			few = append(few, r)
		}
	}
	if len(few) > 0 {
		r := few[0]
		s := fmt.Sprintf("%d of %d rows cannot be significant with their repetitions (%s: n=%d+%d, the smallest possible p is %.2g, not below %.2g)",
			len(few), c.Tested, r.Label, r.N1, r.N2, designMinP(r), alpha)
		if n := countFor(r.Test == TestPaired, 1, alpha); n > 0 {
			s += fmt.Sprintf(": use --count %d or more", n)
		}
		return s
	}
	if all || best*float64(c.Tested) < alpha {
		return ""
	}
	if adv := c.AdviceFor(nameA, nameB); adv != "" {
		return adv
	}
	return fmt.Sprintf("a change in one row alone cannot be significant among %d rows", c.Tested)
}

// countFor is the smallest count, both sides alike, at which one row
// among rows can be significant (0: none up to maxAdviceCount).
func countFor(paired bool, rows int, alpha float64) int {
	for n := 2; n <= maxAdviceCount; n++ {
		p := minUP(n, n)
		if paired {
			p = minSignedRankP(n)
		}
		if p*float64(rows) < alpha {
			return n
		}
	}
	return 0
}

func orRun(id string) string {
	if id == "" {
		return "run"
	}
	return "run " + id
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return "(no error recorded)"
	}
	return s
}
