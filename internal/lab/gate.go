package lab

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/units"
)

// GateVerdict is what a CI gate makes of a comparison.
type GateVerdict string

// The verdicts, as compare --json names them; a caller gives each its exit
// code.
const (
	// GatePass: nothing compared regressed, and everything was judged.
	GatePass GateVerdict = "pass"
	// GateRegression: a compared metric regressed beyond the threshold.
	GateRegression GateVerdict = "regression"
	// GateCannotJudge: the gate cannot judge something it compares, or
	// the whole comparison, so it does not pass (issue 26: it fails
	// closed).
	GateCannotJudge GateVerdict = "cannot judge"
)

// The kinds of a Refusal: why a gate judged no row at all.
const (
	RefusedUnusable   = "unusable"
	RefusedIncomplete = "incomplete"
	RefusedLatest     = "latest"
)

// Refusal is why a gate judged nothing: Kind is one of the Refused
// constants, Details the reasons (the comparison's, or each newer run
// "latest" passed by).
type Refusal struct {
	Kind    string
	Details []string
}

// GateRequest is what a gate judges besides the comparison.
type GateRequest struct {
	// Units are the compared metrics (run.json units).
	Units []string
	// Unmeasured are units the user named that no compared case measured:
	// each is a problem, not a metric quietly left out of the gate.
	Unmeasured []string
	// Passed are notes of newer runs that resolving "latest" passed by
	// (it failed, or cannot be read): the gate would judge the run before
	// it, so it refuses.
	Passed []string
}

// Gate is a gate's verdict on a comparison and every reason for it.
type Gate struct {
	Verdict GateVerdict
	// Refusal is set when the gate judged nothing (Regressions and
	// Problems are then empty).
	Refusal *Refusal
	// Regressions are the rows that regressed beyond the threshold;
	// Problems what the gate could not judge.
	Regressions []compare.Result
	Problems    []compare.Problem
}

// JudgeGate is `perflab compare --fail-on regression`'s gate on c, whose
// pairs are pr and whose metrics Measure filled in. It judges nothing of
// an unusable comparison, an incomplete run or a "latest" that passed by
// newer runs; otherwise every row and every case involved.
func JudgeGate(c *report.Comparison, pr compare.Pairing, req GateRequest) *Gate {
	switch {
	case c.Unusable:
		return refused(RefusedUnusable, c.Reason)
	case c.Incomplete != "":
		// Shown, but a gate must not pass on a run that did not finish.
		return refused(RefusedIncomplete, c.Incomplete)
	case len(req.Passed) > 0:
		// Nor on an older run that "latest" fell back to.
		return refused(RefusedLatest, req.Passed...)
	}
	a, b := c.A, c.B
	if len(pr.Pairs) > 0 && pr.Pairs[0].Paired {
		a, b = "", "" // one run: advice names no side
	}
	cg := compare.Judge(pr, c.Metrics, req.Units, a, b)
	for _, u := range req.Unmeasured {
		n := report.MetricName(u)
		cg.Problems = append(cg.Problems, compare.Problem{Kind: compare.ProblemUnmeasured, What: n, Metric: n, Detail: "named by --metric, but no compared case measured it"})
	}
	g := &Gate{Verdict: GatePass, Regressions: cg.Regressions, Problems: cg.Problems}
	switch {
	case len(g.Regressions) > 0:
		g.Verdict = GateRegression
	case len(g.Problems) > 0:
		g.Verdict = GateCannotJudge
	}
	return g
}

func refused(kind string, details ...string) *Gate {
	return &Gate{Verdict: GateCannotJudge, Refusal: &Refusal{Kind: kind, Details: details}}
}

// Reasons are every reason the gate did not pass, as compare --json gives
// them: a regressed row's change and interval, each problem, or the
// refusal's reasons.
func (g *Gate) Reasons() []report.GateReason {
	rs := []report.GateReason{}
	if g.Refusal != nil {
		for _, d := range g.Refusal.Details {
			rs = append(rs, report.GateReason{Kind: g.Refusal.Kind, Detail: d})
		}
		return rs
	}
	for _, r := range g.Regressions {
		rs = append(rs, report.GateReason{Kind: "regressed", Case: r.Label, Metric: r.Unit,
			Detail: report.ChangeText(r) + ", beyond the threshold"})
	}
	for _, p := range g.Problems {
		d := p.Detail
		if p.Case == "" && p.Metric == "" {
			d = p.String() // the metric or thing it is about is in What only
		}
		rs = append(rs, report.GateReason{Kind: string(p.Kind), Case: p.Case, Metric: p.Metric, Detail: d})
	}
	return rs
}

// MetricUnits turns metric names as a user types them (--metric) into
// run.json units: the names the tables print, time/op and cpu/op, are
// aliases of ns/op and cpu-ns/op. A name that is neither a unit perflab
// knows (internal/units) nor measured by any compared case is an error,
// not a silently empty row: in a CI gate a typo would drop the metric
// from the gate.
func MetricUnits(names []string, pairs []compare.Pair) ([]string, error) {
	known := map[string]bool{}
	valid := []string{}
	addUnit := func(u string) {
		if !known[u] {
			known[u] = true
			valid = append(valid, report.MetricName(u))
		}
	}
	labels := map[string]bool{}
	for _, u := range units.Known() {
		// sec/op and cpu-sec/op share time/op's and cpu/op's labels: one
		// name each.
		if !labels[u.Label] {
			labels[u.Label] = true
			addUnit(u.Name)
		}
	}
	var extra []string
	for _, p := range pairs {
		for _, cs := range []*model.Case{p.A, p.B} {
			for _, r := range cs.Reps {
				for u := range r.Metrics {
					if !known[u] && !slices.Contains(extra, u) {
						extra = append(extra, u)
					}
				}
			}
		}
	}
	sort.Strings(extra)
	for _, u := range extra {
		addUnit(u)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("--metric: name at least one metric: %s", strings.Join(valid, ", "))
	}
	var us []string
	for _, n := range names {
		u := report.MetricUnit(strings.TrimSpace(n))
		if !known[u] {
			return nil, fmt.Errorf("--metric %s: unknown metric %q (want one of %s; ns/op and cpu-ns/op are time/op and cpu/op)", strings.Join(names, ","), n, strings.Join(valid, ", "))
		}
		if !slices.Contains(us, u) {
			us = append(us, u)
		}
	}
	return us, nil
}
