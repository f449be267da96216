package lab

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/suggest"
)

// ErrMixedRefs is CompareRefs's error for a run compared with a case.
var ErrMixedRefs = errors.New("compare a run with a run, or a case with a case")

// CompareRefs builds the comparison of two resolved references, as
// `perflab compare A B` and the web's compare page make it: two runs (every
// case they share, by name) or two cases. refs are the references as the
// user wrote them, for the message when both name the same. The metrics
// are left to Measure.
func CompareRefs(ra, rb *store.Ref, refs [2]string) (*report.Comparison, compare.Pairing, error) {
	c := &report.Comparison{}
	var pr compare.Pairing
	same := ra.Run.ID == rb.Run.ID && sameStore(ra, rb)
	c.A, c.B = ra.Run.ID, rb.Run.ID
	if same && (ra.Case == nil) == (rb.Case == nil) && (ra.Case == nil || ra.Case.Name == rb.Case.Name) {
		// Refused, not shown: every row would be +0.0% by construction,
		// which reads as "no change" and passes a gate. In CI it is
		// usually a script whose base and head picked the same run.
		return selfComparison(c, refs, ra), pr, nil
	}
	switch {
	case ra.Case != nil && rb.Case != nil:
		label := ra.Case.Name
		if ra.Case.Name != rb.Case.Name {
			label = ra.Case.Name + " vs " + rb.Case.Name
		}
		if same {
			c.A, c.B = ra.Case.Variant, rb.Case.Variant
		}
		pr.Pairs = []compare.Pair{{Label: label, A: ra.Case, B: rb.Case, Paired: same}}
		pr.Involved = []compare.RunCase{{Run: ra.Run.ID, Case: ra.Case}, {Run: rb.Run.ID, Case: rb.Case}}
	case ra.Case == nil && rb.Case == nil:
		pr = compare.PairRuns(ra.Run, rb.Run, same)
		c.OnlyA, c.OnlyB = pr.OnlyA, pr.OnlyB
		if len(pr.Pairs) == 0 {
			c.Unusable, c.Reason = true, fmt.Sprintf("runs %s and %s share no case names (compare two cases with RUN/CASE RUN/CASE)", ra.Run.ID, rb.Run.ID)
		}
	default:
		return nil, pr, ErrMixedRefs
	}
	if !same {
		c.Warnings = report.EnvWarnings(ra.Run, rb.Run)
	}
	c.Warnings = append(c.Warnings, report.ContentionWarnings(ra.Run, rb.Run)...)
	c.Warnings = append(c.Warnings, caseWarnings(ra.Run, pr.Pairs)...)
	if !same {
		c.Warnings = append(c.Warnings, caseWarnings(rb.Run, pr.Pairs)...)
	}
	judge(c, ra.Run)
	judge(c, rb.Run)
	return c, pr, nil
}

func sameStore(a, b *store.Ref) bool {
	if a.Store == nil || b.Store == nil {
		return a.Store == b.Store
	}
	return a.Store.Root == b.Store.Root
}

// CompareVariants builds the comparison of each variant of run with the
// base variant at the same parameters and goroutine count (`perflab
// compare RUN --base VARIANT`). The repetitions pair by round. An unknown
// base is an error that names the run's variants. cmd is how the user
// runs perflab, for the command a run of one variant is told to use
// instead ("" is perflab, as the web says it).
func CompareVariants(run *model.Run, base, cmd string) (*report.Comparison, compare.Pairing, error) {
	pr, err := variantPairs(run, base)
	if err != nil {
		return nil, pr, err
	}
	c := &report.Comparison{A: base, B: "variant"}
	c.Warnings = caseWarnings(run, nil)
	for _, u := range pr.Unmatched {
		c.Warnings = append(c.Warnings, report.Warning{Kind: report.KindNotCompared, Severity: report.Caution, Affects: report.AffectsRun, Message: u + " (not compared)", Cases: []string{u}})
	}
	c.Warnings = append(c.Warnings, report.ContentionWarnings(run)...)
	if !run.Complete {
		c.Warnings = append(c.Warnings, report.Warning{Kind: report.KindIncomplete, Severity: report.Caution, Affects: report.AffectsRun, Message: fmt.Sprintf("run %s is incomplete: %s", run.ID, run.Why())})
	}
	judge(c, run)
	if only := onlyVariant(run); !c.Unusable && only == base {
		// Else "no shared case measured any of time/op, …", which blames
		// the metrics for what is the run's having nothing to compare.
		c.Unusable, c.Reason = true, fmt.Sprintf("run %s has no variant but %s to compare with it: compare the run with another (%s)", run.ID, base, CommandLine(cmd, "compare OLD NEW"))
	}
	if !c.Unusable && len(pr.Pairs) == 0 {
		// The same blame: the other variants were measured, only never
		// where the base was (a bench run's benchmarks pair by their
		// sub-benchmark names and -cpu, and Get/hit and Put/new share
		// none).
		c.Unusable, c.Reason = true, noPairs(run, base)
	}
	return c, pr, nil
}

// noPairs says why no case of run pairs with one of base's: where base was
// measured, and that no other variant was measured there.
func noPairs(run *model.Run, base string) string {
	var keys []string
	for i := range run.Cases {
		if c := &run.Cases[i]; c.Variant == base {
			if k := report.GroupKey(run, c); !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	const most = 3
	if len(keys) > most {
		keys = append(keys[:most], fmt.Sprintf("and %d more", len(keys)-most))
	}
	other, at := "variant", "parameters and goroutine count"
	if run.Package != "" {
		other, at = "benchmark", "sub-benchmark names and -cpu"
	}
	return fmt.Sprintf("no case pairs with one of %s's: run %s measured no other %s at their %s (%s at %s)",
		base, run.ID, other, at, base, strings.Join(keys, "; "))
}

// onlyVariant is the one variant all of run's cases have, or "" when they
// have several.
func onlyVariant(run *model.Run) string {
	only := ""
	for _, c := range run.Cases {
		if only != "" && c.Variant != only {
			return ""
		}
		only = c.Variant
	}
	return only
}

// Measure compares the pairs of pr metric by metric (units, run.json
// names) at threshold thr (negative: none; 0: the default) into c, and
// makes c unusable when no pair measured any of them. It returns the units
// no compared case measured.
func Measure(c *report.Comparison, pr compare.Pairing, units []string, thr float64) (unmeasured []string) {
	c.Metrics = compare.Metrics(pr.Pairs, units, compare.Options{Threshold: thr})
	measured := map[string]bool{}
	for _, m := range c.Metrics {
		measured[m.Unit] = true
	}
	var names []string
	for _, u := range units {
		names = append(names, report.MetricName(u))
		if !measured[u] {
			unmeasured = append(unmeasured, u)
		}
	}
	if !c.Unusable && len(c.Metrics) == 0 {
		c.Unusable, c.Reason = true, "no shared case measured any of "+strings.Join(names, ", ")
	}
	return unmeasured
}

// selfComparison is the unusable comparison of a run, or a case, with
// itself.
func selfComparison(c *report.Comparison, refs [2]string, r *store.Ref) *report.Comparison {
	what := "run " + r.Run.ID
	if r.Case != nil {
		what = "case " + r.Case.Name + " of run " + r.Run.ID
	}
	c.Unusable = true
	c.Reason = fmt.Sprintf("both sides are %s", what)
	if refs[0] != refs[1] && refs[0] != "" && refs[1] != "" {
		c.Reason += fmt.Sprintf(" (%q and %q name the same)", refs[0], refs[1])
	}
	c.Reason += ": compared with itself every change is 0 by construction; compare it with another run, or its variants with --base VARIANT"
	return c
}

// judge records what run r's state does to comparison c: the first
// incomplete run named makes it incomplete, a run that measured nothing
// makes it unusable.
func judge(c *report.Comparison, r *model.Run) {
	if !r.Complete && c.Incomplete == "" {
		c.Incomplete = fmt.Sprintf("run %s (%s)", r.ID, orWhy(r.Why()))
	}
	if !r.Measured() {
		c.Unusable, c.Reason = true, fmt.Sprintf("run %s measured nothing (%s)", r.ID, orWhy(r.Why()))
	}
}

func orWhy(note string) string {
	if note == "" {
		return "no repetitions"
	}
	return note
}

// caseWarnings lists the cases of run that were not measured: all of
// them, or only those in pairs when pairs is not nil.
func caseWarnings(run *model.Run, pairs []compare.Pair) []report.Warning {
	in := map[*model.Case]bool{}
	for _, p := range pairs {
		in[p.A], in[p.B] = true, true
	}
	var out []report.Warning
	for i := range run.Cases {
		cs := &run.Cases[i]
		if pairs != nil && !in[cs] || cs.Status == model.StatusOK {
			continue
		}
		msg := fmt.Sprintf("%s in %s: %s", cs.Name, run.ID, cs.Status)
		if cs.Error != "" {
			msg += ": " + firstLine(cs.Error)
		}
		out = append(out, report.Warning{Kind: report.KindNotCompared, Severity: report.Caution, Affects: report.AffectsRun, Message: msg + " (not compared)", Cases: []string{cs.Name}})
	}
	return out
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// variantPairs pairs every case of run with the base variant's case at the
// same parameters and goroutine count, or says which variants run has.
func variantPairs(run *model.Run, base string) (compare.Pairing, error) {
	pr := compare.PairVariants(run, base, func(c *model.Case) string { return report.GroupKey(run, c) })
	for i := range run.Cases {
		if run.Cases[i].Variant == base {
			return pr, nil
		}
	}
	var names []string
	seen := map[string]bool{}
	for _, c := range run.Cases {
		if !seen[c.Variant] {
			seen[c.Variant] = true
			names = append(names, c.Variant)
		}
	}
	dym := ""
	if s := suggest.DidYouMean(base, names); s != "" {
		dym = ": " + s
	}
	return pr, fmt.Errorf("run %s has no variant %q%s (it has %s)", run.ID, base, dym, strings.Join(names, ", "))
}
