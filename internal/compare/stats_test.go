package compare

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/aclements/go-moremath/stats"
)

func TestSignedRankKnownValue(t *testing.T) {
	// R's ?wilcox.test example (Hollander & Wolfe): depression scores
	// before and after; wilcox.test(x, y, paired = TRUE) gives V = 40,
	// p-value = 0.03906.
	x := []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
	y := []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}
	d := make([]float64, len(x))
	for i := range x {
		d[i] = x[i] - y[i]
	}
	p, n := signedRank(d)
	if n != 9 || math.Abs(p-0.0390625) > 1e-9 {
		t.Errorf("p = %v (n=%d), want 0.0390625 (n=9)", p, n)
	}
	if p, _ := signedRank([]float64{1, 2, 3, 4, 5, 6}); math.Abs(p-minSignedRankP(6)) > 1e-12 {
		t.Errorf("all positive, n=6: p = %v, want %v", p, minSignedRankP(6))
	}
	if p, n := signedRank([]float64{0, 0}); p != 1 || n != 0 {
		t.Errorf("all zero: p = %v n = %d", p, n)
	}
}

func TestMinP(t *testing.T) {
	// benchmath's figure: at 6+6 repetitions the smallest Mann–Whitney p
	// is 0.0022 (2/C(12,6) = 2/924).
	if got := minUP(6, 6); math.Abs(got-2.0/924) > 1e-12 {
		t.Errorf("minUP(6,6) = %v", got)
	}
}

func TestBenjaminiHochberg(t *testing.T) {
	got := BenjaminiHochberg([]float64{0.01, 0.04, 0.03, 0.005})
	want := []float64{0.02, 0.04, 0.04, 0.02}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("adjusted %v, want %v", got, want)
			break
		}
	}
}

// TestIntervalsCover: over many samples with no shift, each 95% interval
// covers zero at about its stated rate. With 2,000 trials the standard
// error of a 95% rate is 0.5 points; the bounds allow for the intervals'
// discreteness (exact order statistics make them a little conservative).
func TestIntervalsCover(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const trials = 2000
	var paired, unpaired int
	for i := 0; i < trials; i++ {
		d := make([]float64, 10)
		x, y := make([]float64, 10), make([]float64, 10)
		for j := range d {
			d[j] = rng.NormFloat64()
			x[j], y[j] = rng.NormFloat64(), rng.NormFloat64()
		}
		if _, lo, hi := pairedShiftCI(d, 0.05); lo <= 0 && 0 <= hi {
			paired++
		}
		if _, lo, hi := shiftCI(x, y, 0.05); lo <= 0 && 0 <= hi {
			unpaired++
		}
	}
	for name, c := range map[string]int{"paired": paired, "unpaired": unpaired} {
		if rate := float64(c) / trials; rate < 0.93 || rate > 0.985 {
			t.Errorf("%s 95%% interval covered zero %.1f%% of the time", name, 100*rate)
		}
	}
	// A real shift is found: +1 sd over 10 pairs.
	d := make([]float64, 10)
	for j := range d {
		d[j] = 1 + 0.3*rng.NormFloat64()
	}
	if est, lo, _ := pairedShiftCI(d, 0.05); lo <= 0 || math.Abs(est-1) > 0.3 {
		t.Errorf("shift of 1: estimate %v, lower bound %v", est, lo)
	}
}

// TestURank: the shift interval's rank is the exact one, found by
// bisection, up to 50 repetitions a side, and the normal approximation's
// beyond, which lands within one rank of the exact at the seam. An
// --until run of 128 rounds asked the exact distribution for every u in
// turn, and its compare ran for over ten minutes.
func TestURank(t *testing.T) {
	// exact counts the u with P(U <= u) <= alpha/2 one by one, as
	// shiftCI did.
	exact := func(n1, n2 int, alpha float64) int {
		ud := stats.UDist{N1: n1, N2: n2}
		k := 0
		for u := 0; u <= n1*n2 && ud.CDF(float64(u)) <= alpha/2; u++ {
			k++
		}
		return k
	}
	for _, tt := range []struct {
		name   string
		n1, n2 int
		alpha  float64
		want   int // -1: exact's
		slack  int
	}{
		// Tables of U: two-sided 5% critical value 5 at 6+6, 23 at 10+10.
		{name: "6+6", n1: 6, n2: 6, alpha: 0.05, want: 6},
		{name: "10+10", n1: 10, n2: 10, alpha: 0.05, want: 24},
		{name: "3+3, too few for any interval", n1: 3, n2: 3, alpha: 0.05, want: 0},
		{name: "20+25", n1: 20, n2: 25, alpha: 0.05, want: -1},
		{name: "50+50, the last exact", n1: 50, n2: 50, alpha: 0.05, want: -1},
		{name: "51+51, approximated", n1: 51, n2: 51, alpha: 0.05, want: -1, slack: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if want < 0 {
				want = exact(tt.n1, tt.n2, tt.alpha)
			}
			if got := uRank(tt.n1, tt.n2, tt.alpha); got < want-tt.slack || got > want+tt.slack {
				t.Errorf("uRank(%d, %d, %v) = %d, want %d (±%d)", tt.n1, tt.n2, tt.alpha, got, want, tt.slack)
			}
		})
	}
	// 128+128 repetitions: an interval at once, around the shift.
	rng := rand.New(rand.NewPCG(3, 4))
	x, y := make([]float64, 128), make([]float64, 128)
	for i := range x {
		x[i], y[i] = rng.NormFloat64(), 1+rng.NormFloat64()
	}
	if est, lo, hi := shiftCI(x, y, 0.05); !(lo < 1 && 1 < hi && lo < est && est < hi) || hi-lo > 1 {
		t.Errorf("128+128, shift 1: %v [%v, %v]", est, lo, hi)
	}
}
