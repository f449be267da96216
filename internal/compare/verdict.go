package compare

import (
	"fmt"
	"math"
	"strings"

	"golang.org/x/perf/benchmath"

	"github.com/perflab/perflab/internal/units"
)

// Options say when a difference is a finding.
type Options struct {
	// Alpha is the false-discovery rate controlled across the rows of one
	// comparison of one metric (Benjamini–Hochberg). Default 0.05.
	Alpha float64
	// Threshold is the practical threshold: a change is an improvement or
	// a regression only when its confidence interval lies wholly beyond
	// ±Threshold (a fraction: 0.05 is 5%). Default 0.05; negative means
	// zero (any significant change counts).
	Threshold float64
}

func (o Options) withDefaults() Options {
	// NaN compares false with everything: a NaN alpha made nothing
	// significant and a NaN threshold nothing worse (issue 26).
	if !(o.Alpha > 0) || o.Alpha >= 1 {
		o.Alpha = 0.05
	}
	if o.Threshold == 0 || math.IsNaN(o.Threshold) {
		o.Threshold = 0.05
	}
	if o.Threshold < 0 {
		o.Threshold = 0
	}
	return o
}

// SamplePair is one row of a comparison as plain samples of one metric:
// each side's per-repetition values, in measured order, A the baseline.
// The statistics take nothing else; where the values come from (a stored
// case, a benchmark's output, a test) is the caller's business (issue 24:
// they took *model.Case).
type SamplePair struct {
	Label string
	A, B  []float64
	// Paired says the two sides were measured in the same rounds, so
	// their values pair by index (perflab interleaves every case once per
	// round): a paired test resists drift in machine load.
	Paired bool
}

// Verdict is what a row says.
type Verdict string

// The verdicts. Same covers both "no significant difference" and "a
// significant difference smaller than the threshold"; Result.Significant
// tells them apart.
const (
	Better     Verdict = "better"
	Worse      Verdict = "worse"
	Same       Verdict = "~"
	CannotTell Verdict = "cannot tell"
)

// Tests by name, as each row says which it used.
const (
	TestPaired   = "Wilcoxon signed-rank, paired by round"
	TestUnpaired = "Mann–Whitney U"
)

// Result is one row of a comparison: one metric of one pair.
type Result struct {
	Label string
	Unit  string
	// ASum and BSum are each side's median with its 95% interval.
	ASum, BSum benchmath.Summary
	N1, N2     int
	Test       string
	// Change is the relative change from A to B (+0.12 is 12% higher):
	// the Hodges–Lehmann estimate of the ratio, with its confidence
	// interval at 1−Alpha [ChangeLo, ChangeHi]; ±Inf with too few
	// repetitions for one.
	Change, ChangeLo, ChangeHi float64
	// P is the test's p-value, PAdj after Benjamini–Hochberg across the
	// comparison's rows; MinP the smallest p the test could give at these
	// repetition counts.
	P, PAdj, MinP float64
	// Significant says PAdj < Alpha.
	Significant bool
	Verdict     Verdict
	// UnderZeroFloor says the change is a significant rise from a base
	// under the unit's ZeroFloor (internal/units) that is not shown to
	// reach the floor, which keeps it from counting: Verdict is Same.
	UnderZeroFloor bool
	// riseLo is the lower bound of the rise, B less A, in the metric's
	// own units: what the zero floor is held against.
	riseLo float64
}

// Comparison is one metric compared over many pairs.
type Comparison struct {
	Unit    string
	Options Options
	Results []Result
	// Tested is the number of rows the false-discovery control covered.
	Tested int
	// Resolvable is false when the repetitions are too few for any row to
	// be significant at all. Advice, when set, says that a change in one
	// row alone cannot be significant after correction, and what --count
	// would let it be.
	// AdviceFor names the sides where Advice says A and B.
	Resolvable bool
	Advice     string
	advice     *advice
}

// Test compares the sample pairs on one unit, all of them one
// false-discovery control. A pair with no values on a side is left out.
func Test(unit string, pairs []SamplePair, opts Options) Comparison {
	opts = opts.withDefaults()
	c := Comparison{Unit: unit, Options: opts, Resolvable: true}
	for _, p := range pairs {
		if len(p.A) == 0 || len(p.B) == 0 {
			continue
		}
		c.Results = append(c.Results, row(p, unit, opts))
	}
	c.Tested = len(c.Results)
	ps := make([]float64, len(c.Results))
	for i, r := range c.Results {
		ps[i] = r.P
	}
	adj := BenjaminiHochberg(ps)
	best := math.Inf(1)
	for i := range c.Results {
		r := &c.Results[i]
		r.PAdj = adj[i]
		r.Significant = r.PAdj < opts.Alpha
		r.Verdict = verdictOf(r, opts)
		best = math.Min(best, r.MinP)
	}
	// Nothing can ever be significant when the smallest possible p is not
	// below alpha; and one real change among m rows reaches an adjusted p
	// of m×p at best, so say what --count would resolve it.
	if c.Tested > 0 {
		c.Resolvable = best < opts.Alpha
		all := true
		for _, r := range c.Results {
			all = all && r.Significant
		}
		if best*float64(c.Tested) >= opts.Alpha && !all {
			c.advice = newAdvice(c, opts)
			c.Advice = c.advice.text("A", "B")
		}
	}
	return c
}

func row(p SamplePair, unit string, opts Options) Result {
	a, b := p.A, p.B
	thr := benchmath.DefaultThresholds
	sa, sb := benchmath.NewSample(a, &thr), benchmath.NewSample(b, &thr)
	r := Result{Label: p.Label, Unit: unit, N1: len(a), N2: len(b),
		ASum: benchmath.AssumeNothing.Summary(sa, 0.95), BSum: benchmath.AssumeNothing.Summary(sb, 0.95)}
	logs := positive(a) && positive(b)
	tr := func(x float64) float64 {
		if logs {
			return math.Log(x)
		}
		return x
	}
	if p.Paired && len(a) == len(b) {
		r.Test = TestPaired
		d := make([]float64, len(a))
		for i := range a {
			d[i] = tr(b[i]) - tr(a[i])
		}
		var n int
		r.P, n = signedRank(d)
		if n == 0 {
			// No pair differed at all: the test could have resolved a
			// difference of this many pairs, and there was none.
			n = len(d)
		}
		r.MinP = minSignedRankP(n)
		est, lo, hi := pairedShiftCI(d, opts.Alpha)
		r.Change, r.ChangeLo, r.ChangeHi = relative(est, lo, hi, logs, r.ASum.Center)
		r.riseLo = riseLo(lo, logs, r.ASum.Center)
	} else {
		r.Test = TestUnpaired
		cmp := benchmath.AssumeNothing.Compare(sa, sb)
		r.P = cmp.P
		r.MinP = minUP(len(a), len(b))
		ta, tb := make([]float64, len(a)), make([]float64, len(b))
		for i, x := range a {
			ta[i] = tr(x)
		}
		for i, x := range b {
			tb[i] = tr(x)
		}
		est, lo, hi := shiftCI(ta, tb, opts.Alpha)
		r.Change, r.ChangeLo, r.ChangeHi = relative(est, lo, hi, logs, r.ASum.Center)
		r.riseLo = riseLo(lo, logs, r.ASum.Center)
	}
	if math.IsNaN(r.P) {
		r.P = 1
	}
	return r
}

// riseLo is a shift's lower bound lo (of logs, or of values) as a change
// in the metric's own units from base.
func riseLo(lo float64, logs bool, base float64) float64 {
	if logs {
		return base * math.Expm1(lo)
	}
	return lo
}

// relative turns a shift (of logs, or of values) into a relative change.
func relative(est, lo, hi float64, logs bool, base float64) (float64, float64, float64) {
	if logs {
		return math.Expm1(est), math.Expm1(lo), math.Expm1(hi)
	}
	if base == 0 {
		switch {
		case est == 0 && lo == 0 && hi == 0:
			return 0, 0, 0
		case lo > 0:
			// Up from nothing (0 → 32 B/op): beyond any relative
			// threshold, where the whole interval is.
			return math.Inf(1), math.Inf(1), math.Inf(1)
		case hi < 0:
			return math.Inf(-1), math.Inf(-1), math.Inf(-1)
		}
		return math.NaN(), math.Inf(-1), math.Inf(1)
	}
	b := math.Abs(base)
	return est / b, lo / b, hi / b
}

func positive(xs []float64) bool {
	for _, x := range xs {
		if !(x > 0) {
			return false
		}
	}
	return true
}

func verdictOf(r *Result, opts Options) Verdict {
	if !r.Significant {
		if r.MinP >= opts.Alpha {
			return CannotTell
		}
		return Same
	}
	up := r.ChangeLo > opts.Threshold
	down := r.ChangeHi < -opts.Threshold
	// From nothing, or from crumbs, to crumbs: the rise is not shown to
	// reach the floor. A sync.Pool's 0.002 B/op rising to 0.0024 is +20%,
	// beyond any threshold, and a gate failed on it (a new user's trial).
	// The shift's interval, not B's median's: benchmath gives a median no
	// interval below six repetitions (−Inf), which would hide any rise.
	if floor := units.ZeroFloor(r.Unit); up && r.ASum.Center < floor && r.riseLo < floor {
		up, r.UnderZeroFloor = false, true
	}
	if !up && !down {
		return Same // significant, but not beyond the threshold
	}
	if up == units.HigherBetter(r.Unit) {
		return Better
	}
	return Worse
}

// advice says why no row's change can be significant after correction,
// and what --count each side would need, for one comparison.
type advice struct {
	paired bool
	rows   int
	// n1 and n2 are the fewest repetitions a row has on each side; minP
	// the smallest p the best-placed row could give.
	n1, n2 int
	minP   float64
	// need is the --count both sides would need (0: none up to 200);
	// needA and needB what each would need with the other as it is (0:
	// it has enough already).
	need, needA, needB int
}

// maxAdviceCount is the largest --count advice considers.
const maxAdviceCount = 200

func newAdvice(c Comparison, opts Options) *advice {
	a := &advice{paired: true, rows: c.Tested, n1: math.MaxInt, n2: math.MaxInt, minP: 1}
	for _, r := range c.Results {
		a.paired = a.paired && r.Test == TestPaired
		a.n1, a.n2 = min(a.n1, r.N1), min(a.n2, r.N2)
		a.minP = math.Min(a.minP, r.MinP)
	}
	resolves := func(n1, n2 int) bool {
		p := minUP(n1, n2)
		if a.paired {
			p = minSignedRankP(min(n1, n2))
		}
		return p*float64(a.rows) < opts.Alpha
	}
	for n := 2; n <= maxAdviceCount; n++ {
		if resolves(max(n, a.n1), max(n, a.n2)) {
			a.need = n
			break
		}
	}
	if a.need == 0 || a.paired {
		return a
	}
	// Across runs one side may have plenty already: only the other needs
	// rerunning, and it may need fewer with the first as it is.
	if a.n1 < a.need {
		a.needA = a.need
		if a.n2 >= a.need {
			for n := a.n1 + 1; n <= a.need; n++ {
				if resolves(n, a.n2) {
					a.needA = n
					break
				}
			}
		}
	}
	if a.n2 < a.need {
		a.needB = a.need
		if a.n1 >= a.need {
			for n := a.n2 + 1; n <= a.need; n++ {
				if resolves(a.n1, n) {
					a.needB = n
					break
				}
			}
		}
	}
	return a
}

// text says the advice, naming the sides a and b.
func (a *advice) text(nameA, nameB string) string {
	var b strings.Builder
	n := fmt.Sprintf("n=%d+%d", a.n1, a.n2)
	if a.paired {
		n += ", paired by round,"
	}
	if a.rows == 1 {
		fmt.Fprintf(&b, "with %s no difference can be significant (the smallest possible p is %.2g)", n, a.minP)
	} else {
		// Benjamini–Hochberg multiplies the smallest p of one row
		// alone by the number of rows: say both, or the smaller one,
		// under alpha, reads as if it could be significant.
		fmt.Fprintf(&b, "with %s a change in one row alone cannot be significant among %d rows after correction (its smallest possible p, %.2g, is %.2g once corrected)", n, a.rows, a.minP, math.Min(1, a.minP*float64(a.rows)))
	}
	switch {
	case a.need == 0:
	case a.paired || nameA == "" && nameB == "":
		fmt.Fprintf(&b, ": use --count %d or more", a.need)
	case a.needA > 0 && a.needB > 0:
		fmt.Fprintf(&b, ": rerun both %s and %s with --count %d or more", nameA, nameB, a.need)
	case a.needA > 0:
		fmt.Fprintf(&b, ": %s has enough (n=%d); rerun %s (n=%d) with --count %d or more", nameB, a.n2, nameA, a.n1, a.needA)
	case a.needB > 0:
		fmt.Fprintf(&b, ": %s has enough (n=%d); rerun %s (n=%d) with --count %d or more", nameA, a.n1, nameB, a.n2, a.needB)
	}
	return b.String()
}

// AdviceFor is the comparison's Advice with its sides named a and b (run
// ids, variants) where it says which side needs more repetitions, or
// with both names empty, for sides of one run, the --count that run
// needs; "" when there is no advice.
func (c Comparison) AdviceFor(a, b string) string {
	if c.advice == nil {
		return ""
	}
	return c.advice.text(a, b)
}

// Regressed reports whether any row of any comparison is Worse.
func Regressed(cs []Comparison) bool {
	for _, c := range cs {
		for _, r := range c.Results {
			if r.Verdict == Worse {
				return true
			}
		}
	}
	return false
}
