package flame

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// population is a cipher-cache-like distribution of stacks, with a long
// tail of rare ones as in real profiles.
func population() map[string]float64 {
	pop := map[string]float64{
		"runtime.goexit;main.worker;crypto/sha256.Sum256;crypto/internal/fips140/sha256.blockSHANI":                           40,
		"runtime.goexit;main.worker;sync.(*Mutex).Lock;internal/sync.(*Mutex).lockSlow;internal/sync.runtime_SemacquireMutex": 25,
		"runtime.goexit;main.worker;runtime.makeslice;runtime.mallocgc":                                                       10,
		"runtime.goexit;main.worker;runtime.makeslice;runtime.mallocgc;runtime.gcAssistAlloc;runtime.gcDrainN":                5,
		"runtime.goexit;main.worker;runtime.mapaccess1_fast64":                                                                12,
		"runtime.mcall;runtime.park_m;runtime.schedule;runtime.findRunnable":                                                  2,
	}
	for i := range 120 {
		pop["runtime.goexit;main.worker;main.step"+string(rune('a'+i%26))+";main.tail"+strings.Repeat("x", i/26+1)] = 6.0 / 120
	}
	return pop
}

// draw samples n stacks from pop (a multinomial draw): the profile a run
// of the same program would give.
func draw(rng *rand.Rand, pop map[string]float64, n int) *profile.Profile {
	keys := make([]string, 0, len(pop))
	for k := range pop {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	cum := make([]float64, len(keys))
	sum := 0.0
	for i, k := range keys {
		sum += pop[k]
		cum[i] = sum
	}
	counts := map[string]int64{}
	for range n {
		u := rng.Float64() * sum
		i, _ := slices.BinarySearch(cum, u)
		counts[keys[min(i, len(keys)-1)]]++
	}
	return fake(counts)
}

// TestSameDistributionGrey compares pairs of profiles drawn from one
// distribution: (almost) nothing may be coloured. With the false-discovery
// rate at 5%, under no difference at all a pair has a discovery with
// probability at most 5%.
func TestSameDistributionGrey(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 1))
	pop := population()
	const pairs = 40
	coloured, pairsColoured, cats := 0, 0, 0
	for range pairs {
		tr, err := Diff(draw(rng, pop, 4000), draw(rng, pop, 4000), smallOpts(t))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, s := range tr.stat.sig {
			if s != 0 {
				n++
			}
		}
		coloured += n
		if n > 0 {
			pairsColoured++
		}
		for _, s := range tr.stat.catSig {
			if s != 0 {
				cats++
			}
		}
	}
	t.Logf("%d of %d pairs had a coloured frame (%d frames); %d categories", pairsColoured, pairs, coloured, cats)
	if pairsColoured > 6 || cats > 6 {
		t.Errorf("%d of %d same-distribution pairs coloured frames (%d frames), %d categories: noise is painted", pairsColoured, pairs, coloured, cats)
	}
}

// TestPlantedShift moves 5 points of share from the lock to the hashing:
// both are coloured, the right way, and the legend's interval holds the
// shift.
func TestPlantedShift(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	base := population()
	shifted := population()
	lock := "runtime.goexit;main.worker;sync.(*Mutex).Lock;internal/sync.(*Mutex).lockSlow;internal/sync.runtime_SemacquireMutex"
	hash := "runtime.goexit;main.worker;crypto/sha256.Sum256;crypto/internal/fips140/sha256.blockSHANI"
	shifted[lock] -= 5
	shifted[hash] += 5
	misses := 0
	for range 10 {
		tr, err := Diff(draw(rng, base, 10000), draw(rng, shifted, 10000), smallOpts(t))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int8{}
		for i := int32(1); i < int32(len(tr.name)); i++ {
			if tr.stat.sig[i] != 0 {
				got[tr.nodeName(i)] = tr.stat.sig[i]
			}
		}
		if got["sync.(*Mutex).Lock"] != -1 || got["crypto/sha256.Sum256"] != 1 {
			misses++
			t.Logf("coloured: %v", got)
		}
		for name := range got {
			if name != "sync.(*Mutex).Lock" && name != "internal/sync.(*Mutex).lockSlow" && name != "internal/sync.runtime_SemacquireMutex" &&
				name != "crypto/sha256.Sum256" && name != "crypto/internal/fips140/sha256.blockSHANI" {
				t.Errorf("%s coloured, but did not change", name)
			}
		}
		d, h := tr.stat.catDelta(tr, 1) // lock
		if d-h > -0.05 || d+h < -0.05 || tr.stat.catSig[1] != -1 {
			t.Errorf("lock category %+.2f±%.2f pt, significant %d: the interval should hold -5", 100*d, 100*h, tr.stat.catSig[1])
		}
	}
	// At n=10,000 a side (100 s of CPU at 100 Hz) a 5-point shift of a 40%
	// share is z ≈ 7 on average; the BH threshold here needs about 3.
	if misses > 0 {
		t.Errorf("the planted shift was missed %d times in 10", misses)
	}
}

func TestBHThreshold(t *testing.T) {
	// Benjamini and Hochberg's (1995) example: 15 p-values, q=0.05; the
	// first four are rejected.
	ps := []float64{0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.000}
	if got := bhThreshold(slices.Clone(ps), 0.05); got != 0.0095 {
		t.Errorf("threshold %g, want 0.0095", got)
	}
	if got := bhThreshold([]float64{0.5, 0.9}, 0.05); got != -1 {
		t.Errorf("no discovery: threshold %g, want -1", got)
	}
	if got := bhThreshold(nil, 0.05); got != -1 {
		t.Errorf("empty: %g", got)
	}
}

// TestObservations checks what n is for each kind of profile.
func TestObservations(t *testing.T) {
	cpu := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 10_000_000}
	delay := &profile.Profile{SampleType: []*profile.ValueType{{Type: "contentions", Unit: "count"}, {Type: "delay", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "contentions", Unit: "count"}, Period: 1}
	mutex5 := &profile.Profile{SampleType: []*profile.ValueType{{Type: "contentions", Unit: "count"}, {Type: "delay", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "contentions", Unit: "count"}, Period: 5}
	bare := &profile.Profile{SampleType: []*profile.ValueType{{Type: "time", Unit: "nanoseconds"}}}
	wall := tracedWallProfile()
	for _, tc := range []struct {
		name  string
		p     *profile.Profile
		idx   int
		s     *profile.Sample
		want  float64
		model string
	}{
		{"cpu time", cpu, 1, &profile.Sample{Value: []int64{3, 30_000_000}}, 3, "samples of 10.00 ms"},
		{"cpu samples", cpu, 0, &profile.Sample{Value: []int64{3, 30_000_000}}, 3, "sample counts"},
		{"delay", delay, 1, &profile.Sample{Value: []int64{7, 123456}}, 7, "contentions"},
		{"mutex at rate 5", mutex5, 1, &profile.Sample{Value: []int64{50, 123456}}, 10, "contentions"},
		{"no counts", bare, 0, &profile.Sample{Value: []int64{99}}, 1, "one observation per stack"},
		{"traced wall, running", wall, 0, wall.Sample[0], 3, "traced wall time, one observation per 10.00 ms"},
		{"traced wall, blocked", wall, 0, wall.Sample[2], 0.5, "traced wall time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The sample is the profile's k-th, or added as the last one.
			k := slices.Index(tc.p.Sample, tc.s)
			if k < 0 {
				tc.p.Sample = append(tc.p.Sample, tc.s)
				k = len(tc.p.Sample) - 1
			}
			obs, model := observations(sourceOf(tc.p), tc.idx)
			if got := obs(k, tc.s.Value[tc.idx]); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("observations %g, want %g", got, tc.want)
			}
			if !strings.HasPrefix(model, tc.model) {
				t.Errorf("model %q, want %q…", model, tc.model)
			}
		})
	}
}

// tracedWallProfile is shaped like internal/wallclock's: running time
// spread over CPU samples of 10 ms each, off-CPU intervals exact.
func tracedWallProfile() *profile.Profile {
	p := fake(map[string]int64{"main.worker;main.hash": 3, "main.worker;main.rare": 1, "main.worker;sync.(*Mutex).Lock": 1})
	p.SampleType = []*profile.ValueType{{Type: "wall", Unit: "nanoseconds"}}
	p.PeriodType = &profile.ValueType{Type: "wall", Unit: "nanoseconds"}
	p.Period = 1
	// fake sorts its stacks: hash, rare, Lock.
	vals := []int64{30_000_000, 10_000_000, 5_000_000}
	states := []string{"running", "running", "blocked"}
	for i, s := range p.Sample {
		s.Value = []int64{vals[i]}
		s.Label = map[string][]string{"state": {states[i]}}
	}
	return p
}

// TestWeightedEffectiveN: a delay profile whose time is one huge wait has
// the evidence of one event, however many small ones surround it.
func TestWeightedEffectiveN(t *testing.T) {
	mk := func(big int64) *profile.Profile {
		p := fake(map[string]int64{"main.a;main.big": 1, "main.a;main.small": 1000})
		p.SampleType = []*profile.ValueType{{Type: "contentions", Unit: "count"}, {Type: "delay", Unit: "nanoseconds"}}
		p.Sample[0].Value = []int64{1, big}
		p.Sample[1].Value = []int64{1000, 1000 * 1000}
		return p
	}
	tr, err := Diff(mk(1_000_000), mk(2_000_000), Options{SampleType: "delay"})
	if err != nil {
		t.Fatal(err)
	}
	if tr.stat.n > 10 {
		t.Errorf("effective n %.1f for a profile that is mostly one wait", tr.stat.n)
	}
	for i, s := range tr.stat.sig {
		if s != 0 {
			t.Errorf("%s coloured: one wait twice as long is not evidence", tr.nodeName(int32(i)))
		}
	}
}
