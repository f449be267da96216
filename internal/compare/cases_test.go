package compare

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/perflab/perflab/internal/model"
)

// TestCaseSamples holds the one place a stored case becomes samples: the
// repetitions in measured order, NaN and missing values left out, nothing
// from a case that was not measured.
func TestCaseSamples(t *testing.T) {
	reps := func(xs ...float64) []model.Rep {
		var out []model.Rep
		for _, x := range xs {
			out = append(out, model.Rep{Ops: 1, Metrics: map[string]float64{"ns/op": x}})
		}
		return out
	}
	nan := model.Rep{Ops: 1, Metrics: map[string]float64{"ns/op": math.NaN()}}
	other := model.Rep{Ops: 1, Metrics: map[string]float64{"B/op": 8}}
	for _, tt := range []struct {
		name string
		c    model.Case
		want []float64
	}{
		{"measured", model.Case{Status: model.StatusOK, Reps: reps(3, 1, 2)}, []float64{3, 1, 2}},
		{"NaN and missing left out", model.Case{Status: model.StatusOK, Reps: append(reps(3), nan, other, reps(4)[0])}, []float64{3, 4}},
		{"failed", model.Case{Status: model.StatusFailed, Reps: reps(3, 1)}, nil},
		{"n/a", model.Case{Status: model.StatusNotApplicable}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Samples(&tt.c, "ns/op"); !slices.Equal(got, tt.want) {
				t.Errorf("Samples = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestOneIsTestOfSamples: the store edge hands the statistics the same
// samples a caller with plain values would, and leaves out a pair with an
// unmeasured side.
func TestOneIsTestOfSamples(t *testing.T) {
	a := []float64{100, 101, 99, 100, 102, 98, 100, 101}
	b := []float64{120, 121, 119, 122, 118, 120, 121, 119}
	caseOf := func(st model.Status, xs []float64) *model.Case {
		c := &model.Case{Status: st}
		for _, x := range xs {
			c.Reps = append(c.Reps, model.Rep{Ops: 1, Metrics: map[string]float64{"ns/op": x}})
		}
		return c
	}
	got := One([]Pair{
		{Label: "x", A: caseOf(model.StatusOK, a), B: caseOf(model.StatusOK, b), Paired: true},
		{Label: "failed", A: caseOf(model.StatusOK, a), B: caseOf(model.StatusFailed, b), Paired: true},
	}, "ns/op", Options{})
	want := Test("ns/op", []SamplePair{{Label: "x", A: a, B: b, Paired: true}}, Options{})
	if len(got.Results) != 1 || fmt.Sprint(got.Results[0]) != fmt.Sprint(want.Results[0]) {
		t.Fatalf("One = %+v\nTest = %+v", got.Results, want.Results)
	}
}

// TestSamplesOfPaired: a paired pair's samples keep index i one round on
// both sides; a round lost on either side (NaN, missing) goes from both.
func TestSamplesOfPaired(t *testing.T) {
	nan := math.NaN()
	miss := math.Inf(-1) // marks a repetition without the unit
	caseOf := func(xs ...float64) *model.Case {
		c := &model.Case{Status: model.StatusOK}
		for _, x := range xs {
			m := map[string]float64{"ns/op": x}
			if x == miss {
				m = map[string]float64{"B/op": 8}
			}
			c.Reps = append(c.Reps, model.Rep{Ops: 1, Metrics: m})
		}
		return c
	}
	for _, tt := range []struct {
		name   string
		a, b   *model.Case
		paired bool
		wantA  []float64
		wantB  []float64
		wantP  bool
	}{
		{"all rounds", caseOf(1, 2, 3), caseOf(11, 12, 13), true, []float64{1, 2, 3}, []float64{11, 12, 13}, true},
		// Each side lost a value, in different rounds: equal lengths
		// either way, but only rounds 0 and 3 are both sides'.
		{"lost in different rounds", caseOf(1, nan, 3, 4), caseOf(11, 12, nan, 14), true, []float64{1, 4}, []float64{11, 14}, true},
		{"missing unit", caseOf(1, miss, 3), caseOf(11, 12, 13), true, []float64{1, 3}, []float64{11, 13}, true},
		{"same round lost", caseOf(1, nan, 3), caseOf(11, nan, 13), true, []float64{1, 3}, []float64{11, 13}, true},
		{"repetition counts differ: unpaired", caseOf(1, 2, 3), caseOf(11, 12), true, []float64{1, 2, 3}, []float64{11, 12}, false},
		{"unpaired drops per side", caseOf(1, nan, 3, 4), caseOf(11, 12, nan, 14), false, []float64{1, 3, 4}, []float64{11, 12, 14}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := SamplesOf([]Pair{{Label: "x", A: tt.a, B: tt.b, Paired: tt.paired}}, "ns/op")[0]
			if !slices.Equal(got.A, tt.wantA) || !slices.Equal(got.B, tt.wantB) || got.Paired != tt.wantP {
				t.Errorf("SamplesOf = A %v B %v paired %v, want A %v B %v paired %v", got.A, got.B, got.Paired, tt.wantA, tt.wantB, tt.wantP)
			}
		})
	}
}
