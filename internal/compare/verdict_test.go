package compare

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func noisy(rng *rand.Rand, n int, center, sd float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = center * (1 + sd*rng.NormFloat64())
	}
	return out
}

func TestRowVerdicts(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	base := noisy(rng, 10, 100, 0.01)
	for _, tt := range []struct {
		name   string
		b      []float64
		paired bool
		want   Verdict
		sig    bool
	}{
		{"much slower", noisy(rng, 10, 150, 0.01), false, Worse, true},
		{"much faster, paired", noisy(rng, 10, 70, 0.01), true, Better, true},
		{"2% slower: significant, under the threshold", noisy(rng, 10, 102, 0.002), false, Same, true},
		{"same", noisy(rng, 10, 100, 0.01), false, Same, false},
		{"three repetitions", noisy(rng, 3, 150, 0.01), false, CannotTell, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := base
			if len(tt.b) != len(a) {
				a = base[:len(tt.b)]
			}
			c := Test("ns/op", []SamplePair{{Label: "x", A: a, B: tt.b, Paired: tt.paired}}, Options{})
			r := c.Results[0]
			if r.Verdict != tt.want || r.Significant != tt.sig {
				t.Errorf("verdict %s significant %v (p=%.4f change %+.3f [%+.3f, %+.3f]), want %s %v",
					r.Verdict, r.Significant, r.P, r.Change, r.ChangeLo, r.ChangeHi, tt.want, tt.sig)
			}
			if tt.paired && r.Test != TestPaired || !tt.paired && r.Test != TestUnpaired {
				t.Errorf("test %q", r.Test)
			}
		})
	}
}

// TestFalseDiscoveryControl: 48 rows drawn from one distribution, compared
// at 6 repetitions a side as a 48-case compare would be: uncorrected, about
// 4% of rows are flagged (issue 10 measured 3.8–4.5%); corrected, the
// chance that any row of a comparison is flagged is at most alpha.
func TestFalseDiscoveryControl(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const trials = 200
	flaggedAny, flaggedRaw, rows := 0, 0, 0
	for i := 0; i < trials; i++ {
		var pairs []SamplePair
		for j := 0; j < 48; j++ {
			pairs = append(pairs, SamplePair{A: noisy(rng, 6, 100, 0.05), B: noisy(rng, 6, 100, 0.05)})
		}
		c := Test("ns/op", pairs, Options{Threshold: -1})
		any := false
		for _, r := range c.Results {
			rows++
			if r.P < 0.05 {
				flaggedRaw++
			}
			any = any || r.Significant
		}
		if any {
			flaggedAny++
		}
		if i == 0 && (c.Advice == "" || !strings.Contains(c.Advice, "--count")) {
			t.Errorf("48 rows at 6+6 repetitions: advice %q, want what --count would resolve", c.Advice)
		}
	}
	if raw := float64(flaggedRaw) / float64(rows); raw < 0.02 || raw > 0.07 {
		t.Errorf("uncorrected, %.1f%% of rows flagged; expected about 4%%", 100*raw)
	}
	// At most alpha in expectation; 200 trials give a standard error of
	// 1.5 points at 5%.
	if fwe := float64(flaggedAny) / trials; fwe > 0.09 {
		t.Errorf("corrected, %.1f%% of comparisons flagged a row, want at most about 5%%", 100*fwe)
	}
}

// TestAdvice: when the correction cannot resolve one row's change, the
// advice says what --count would, and on which side: a side that already
// has enough repetitions is not asked for more.
func TestAdvice(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tt := range []struct {
		name         string
		rows, n1, n2 int
		paired       bool
		nameA, nameB string
		want, not    []string
	}{
		{"one side short", 4, 10, 2, false, "old", "new",
			[]string{"with n=10+2 ", "among 4 rows", "old has enough (n=10); rerun new (n=2) with --count 3 or more"}, []string{"rerun old", "both"}},
		{"the other side short", 4, 2, 10, false, "old", "new",
			[]string{"new has enough (n=10); rerun old (n=2) with --count 3 or more"}, []string{"rerun new"}},
		{"both short", 4, 3, 3, false, "old", "new",
			[]string{"rerun both old and new with --count 5 or more"}, nil},
		{"paired within a run", 2, 6, 6, true, "mutex", "variant",
			[]string{"n=6+6, paired by round, a change", "use --count 7 or more"}, []string{"rerun"}},
		{"one row", 1, 3, 3, false, "old", "new",
			[]string{"with n=3+3 no difference can be significant", "rerun both old and new with --count 4 or more"}, []string{"among", "rows"}},
		{"one run's cases, unpaired", 4, 10, 2, false, "", "",
			[]string{"use --count 3 or more"}, []string{"rerun", "has enough"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var pairs []SamplePair
			for i := 0; i < tt.rows; i++ {
				pairs = append(pairs, SamplePair{A: noisy(rng, tt.n1, 100, 0.05), B: noisy(rng, tt.n2, 100, 0.05), Paired: tt.paired})
			}
			c := Test("ns/op", pairs, Options{})
			got := c.AdviceFor(tt.nameA, tt.nameB)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("advice %q lacks %q", got, w)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(got, w) {
					t.Errorf("advice %q has %q", got, w)
				}
			}
			if c.Advice != c.AdviceFor("A", "B") {
				t.Errorf("Advice %q is not AdviceFor(A, B) %q", c.Advice, c.AdviceFor("A", "B"))
			}
		})
	}
}

// TestFromZero: a metric up from nothing (0 → 32 B/op, 0 → 1 allocs/op) is
// beyond any relative threshold, not "~ (not beyond 5%)"; down to nothing
// is −100%; nothing to nothing is the same.
func TestFromZero(t *testing.T) {
	rep := func(n int, v float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	for _, tt := range []struct {
		name   string
		a, b   []float64
		paired bool
		want   Verdict
		change float64 // NaN: none can be said
	}{
		{"up from nothing", rep(10, 0), rep(10, 32), false, Worse, math.Inf(1)},
		{"up from nothing, paired", rep(10, 0), rep(10, 1), true, Worse, math.Inf(1)},
		// A pool's crumbs: significant, under the 1 B/op floor.
		{"up from nothing to crumbs", rep(10, 0), rep(10, 0.001), false, Same, math.Inf(1)},
		// Below six repetitions a median has no interval; the rise's
		// own interval still shows it (p = 0.029 and 0.008 unpaired).
		{"up from nothing, four repetitions", rep(4, 0), []float64{1000, 1001, 1002, 1003}, false, Worse, math.Inf(1)},
		{"up from nothing, five repetitions", rep(5, 0), []float64{1000, 1001, 1002, 1003, 1004}, false, Worse, math.Inf(1)},
		{"up from nothing to crumbs, five repetitions", rep(5, 0), []float64{0.001, 0.001, 0.002, 0.001, 0.001}, false, Same, math.Inf(1)},
		// Crumbs to crumbs: a pool's 0.002 B/op to 0.0024 is +20%, and
		// still under the floor (a gate failed on it). From crumbs past
		// the floor, or from above it, the relative threshold judges.
		{"crumbs to crumbs", rep(10, 0.002), rep(10, 0.0024), false, Same, 0.2},
		{"crumbs to crumbs, paired", rep(10, 0.002), rep(10, 0.0024), true, Same, 0.2},
		{"crumbs past the floor", rep(10, 0.5), rep(10, 2), false, Worse, 3},
		{"above the floor", rep(10, 32), rep(10, 40), false, Worse, 0.25},
		{"down to nothing", rep(10, 32), rep(10, 0), false, Better, -1},
		{"nothing to nothing", rep(10, 0), rep(10, 0), false, Same, 0},
		// One repetition in ten allocated: the shift (the median of
		// the pairwise differences) and its interval are 0.
		{"now and then", rep(10, 0), append(rep(9, 0), 1), false, Same, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := Test("B/op", []SamplePair{{Label: "x", A: tt.a, B: tt.b, Paired: tt.paired}}, Options{}).Results[0]
			sameChange := r.Change == tt.change || math.IsNaN(r.Change) && math.IsNaN(tt.change) || math.Abs(r.Change-tt.change) < 1e-9
			if r.Verdict != tt.want || !sameChange {
				t.Errorf("verdict %s change %v [%v, %v] (p=%.4f), want %s change %v", r.Verdict, r.Change, r.ChangeLo, r.ChangeHi, r.P, tt.want, tt.change)
			}
		})
	}
}
