package compare

import (
	"math"
	"sort"

	"github.com/aclements/go-moremath/stats"
)

// The statistics behind a verdict that golang.org/x/perf/benchmath does not
// have: the Wilcoxon signed-rank test for repetitions paired by round, the
// Hodges–Lehmann confidence intervals for a shift (the ones that go with
// the Mann–Whitney and signed-rank tests), and Benjamini–Hochberg
// adjustment. benchmath's Mann–Whitney U test is used as it is; the U
// distribution for the unpaired interval is go-moremath's (benchmath's own
// dependency). Neither library has a signed-rank test or these intervals,
// so they are written here, exact for the sample sizes perflab produces.

// maxExact is the number of paired differences up to which the signed-rank
// distribution is computed exactly; beyond it, the normal approximation.
const maxExact = 200

// signedRank returns the two-sided p-value of the Wilcoxon signed-rank test
// of differences d against a median of zero, and the number of non-zero
// differences it used. Ties in |d| get mid-ranks; the exact null
// distribution is computed over doubled ranks, which are integers.
func signedRank(d []float64) (p float64, n int) {
	var nz []float64
	for _, x := range d {
		if x != 0 && !math.IsNaN(x) {
			nz = append(nz, x)
		}
	}
	n = len(nz)
	if n == 0 {
		return 1, 0
	}
	ranks2 := doubledRanks(nz)
	var t2 int // twice T+
	for i, x := range nz {
		if x > 0 {
			t2 += ranks2[i]
		}
	}
	if n > maxExact {
		return normalSignedRank(ranks2, t2), n
	}
	dist := subsetSums(ranks2)
	total := math.Pow(2, float64(n))
	var lo, hi float64 // P(T2 <= t2), P(T2 >= t2)
	for s, c := range dist {
		if s <= t2 {
			lo += c
		}
		if s >= t2 {
			hi += c
		}
	}
	return math.Min(1, 2*math.Min(lo, hi)/total), n
}

// doubledRanks returns twice the (mid-)rank of each |x|.
func doubledRanks(xs []float64) []int {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return math.Abs(xs[idx[a]]) < math.Abs(xs[idx[b]]) })
	out := make([]int, len(xs))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && math.Abs(xs[idx[j+1]]) == math.Abs(xs[idx[i]]) {
			j++
		}
		// Ranks i+1..j+1 share their mean; doubled, (i+1)+(j+1).
		for k := i; k <= j; k++ {
			out[idx[k]] = i + j + 2
		}
		i = j + 1
	}
	return out
}

// subsetSums returns, for every s, the number of subsets of ws summing to
// s: the null distribution of the signed-rank statistic (every sign
// equally likely), unnormalised.
func subsetSums(ws []int) []float64 {
	total := 0
	for _, w := range ws {
		total += w
	}
	dist := make([]float64, total+1)
	dist[0] = 1
	reach := 0
	for _, w := range ws {
		for s := reach; s >= 0; s-- {
			if dist[s] != 0 {
				dist[s+w] += dist[s]
			}
		}
		reach += w
	}
	return dist
}

func normalSignedRank(ranks2 []int, t2 int) float64 {
	var mean, v float64
	for _, r := range ranks2 {
		x := float64(r) / 2
		mean += x / 2
		v += x * x / 4
	}
	z := (float64(t2)/2 - mean) / math.Sqrt(v)
	return math.Min(1, 2*(1-stats.NormalDist{Mu: 0, Sigma: 1}.CDF(math.Abs(z))))
}

// minSignedRankP is the smallest two-sided p-value the signed-rank test
// can give with n differences: all of one sign.
func minSignedRankP(n int) float64 { return math.Min(1, 2/math.Pow(2, float64(n))) }

// minUP is the smallest two-sided p-value the Mann–Whitney test can give
// with samples of n1 and n2: complete separation.
func minUP(n1, n2 int) float64 {
	return math.Min(1, 2/math.Exp(lchoose(n1+n2, n1)))
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// pairedShiftCI returns the Hodges–Lehmann estimate of the median of d
// (the median of its Walsh averages) and its confidence interval at level
// 1−alpha from the signed-rank distribution; ±Inf bounds when n is too
// small for any interval at that level.
func pairedShiftCI(d []float64, alpha float64) (est, lo, hi float64) {
	n := len(d)
	if n == 0 {
		return math.NaN(), math.Inf(-1), math.Inf(1)
	}
	walsh := make([]float64, 0, n*(n+1)/2)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			walsh = append(walsh, (d[i]+d[j])/2)
		}
	}
	sort.Float64s(walsh)
	est = median(walsh)
	// k-th order statistics, k = the largest t with P(T+ <= t) <= alpha/2
	// plus one, from the untied distribution of T+ over ranks 1..n.
	ranks2 := make([]int, n)
	for i := range ranks2 {
		ranks2[i] = 2 * (i + 1)
	}
	if n > maxExact {
		z := stats.NormalDist{Mu: 0, Sigma: 1}.InvCDF(1 - alpha/2)
		m := float64(n*(n+1)) / 4
		sd := math.Sqrt(float64(n*(n+1)*(2*n+1)) / 24)
		k := int(math.Floor(m - z*sd))
		return est, walsh[clamp(k, 0, len(walsh)-1)], walsh[clamp(len(walsh)-1-k, 0, len(walsh)-1)]
	}
	dist := subsetSums(ranks2)
	total := math.Pow(2, float64(n))
	var cum float64
	k := 0
	for s := 0; s < len(dist); s += 2 {
		cum += dist[s]
		if cum/total > alpha/2 {
			break
		}
		k++
	}
	if k == 0 {
		return est, math.Inf(-1), math.Inf(1)
	}
	return est, walsh[k-1], walsh[len(walsh)-k]
}

// shiftCI returns the Hodges–Lehmann estimate of the shift from x to y
// (the median of all differences y_j − x_i) and its confidence interval at
// level 1−alpha from the Mann–Whitney U distribution.
func shiftCI(x, y []float64, alpha float64) (est, lo, hi float64) {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return math.NaN(), math.Inf(-1), math.Inf(1)
	}
	diffs := make([]float64, 0, n1*n2)
	for _, a := range x {
		for _, b := range y {
			diffs = append(diffs, b-a)
		}
	}
	sort.Float64s(diffs)
	est = median(diffs)
	k := uRank(n1, n2, alpha)
	if k == 0 {
		return est, math.Inf(-1), math.Inf(1)
	}
	return est, diffs[k-1], diffs[len(diffs)-k]
}

// uRank is how many of the n1·n2 sorted differences each end of the
// shift's interval leaves out: the number of u with P(U <= u) <= alpha/2.
// Up to stats.MannWhitneyExactLimit a side, as the U test itself, it is
// exact, found by bisection: each UDist.CDF builds the distribution anew,
// and asking it for every u in turn took 1.6 s a row at 50+50 and minutes
// at 128+128 (a compare of an --until run of 128 rounds ran for over ten
// minutes). Beyond, the normal approximation, as for the signed-rank
// interval above.
func uRank(n1, n2 int, alpha float64) int {
	if n1 > stats.MannWhitneyExactLimit || n2 > stats.MannWhitneyExactLimit {
		z := stats.NormalDist{Mu: 0, Sigma: 1}.InvCDF(1 - alpha/2)
		m := float64(n1*n2) / 2
		sd := math.Sqrt(float64(n1*n2*(n1+n2+1)) / 12)
		return clamp(int(math.Floor(m-z*sd)), 0, n1*n2/2)
	}
	ud := stats.UDist{N1: n1, N2: n2}
	// The CDF rises with u: the count of u at or below alpha/2 is the
	// first u above it.
	return sort.Search(n1*n2+1, func(u int) bool { return ud.CDF(float64(u)) > alpha/2 })
}

func clamp(x, lo, hi int) int { return max(lo, min(hi, x)) }

func median(sorted []float64) float64 {
	n := len(sorted)
	return (sorted[(n-1)/2] + sorted[n/2]) / 2
}

// BenjaminiHochberg returns the adjusted p-values of ps (same order):
// rejecting every hypothesis whose adjusted p is below alpha keeps the
// expected share of false discoveries among them at most alpha.
func BenjaminiHochberg(ps []float64) []float64 {
	m := len(ps)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return ps[idx[a]] < ps[idx[b]] })
	adj := make([]float64, m)
	prev := 1.0
	for r := m - 1; r >= 0; r-- {
		i := idx[r]
		v := math.Min(prev, ps[i]*float64(m)/float64(r+1))
		if math.IsNaN(ps[i]) {
			v = math.NaN()
		} else {
			prev = v
		}
		adj[i] = v
	}
	return adj
}
