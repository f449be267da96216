package report

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/model"
)

// TestErrCell: a share's sampling error is never shown as a false zero
// ("±0.0" for 0.04 points) nor as a whole number under one point.
func TestErrCell(t *testing.T) {
	for _, tt := range []struct {
		name string
		f    float64
		want string
	}{
		{"points", 0.031, "±3"},
		{"one point", 0.012, "±1"},
		{"under one point", 0.004, "±0.4"},
		{"rounds to a tenth", 0.0006, "±0.1"},
		{"under a twentieth of a point", 0.0004, "±<0.1"},
		{"tiny", 1e-9, "±<0.1"},
		{"none", 0, "±0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ErrCell(tt.f); got != tt.want {
				t.Errorf("ErrCell(%g) = %q, want %q", tt.f, got, tt.want)
			}
		})
	}
}

func TestCount(t *testing.T) {
	for _, tt := range []struct {
		name string
		n    int
		noun string
		want string
	}{
		{"zero is plural", 0, "row", "0 rows"},
		{"one is singular", 1, "case", "1 case"},
		{"two is plural", 2, "repetition", "2 repetitions"},
		{"many", 12, "round", "12 rounds"},
		{"one CPU", 1, "CPU", "1 CPU"},
		{"CPUs", 2, "CPU", "2 CPUs"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Count(tt.n, tt.noun); got != tt.want {
				t.Errorf("Count(%d, %q) = %q, want %q", tt.n, tt.noun, got, tt.want)
			}
		})
	}
}

// TestTextSingular: a run of one repetition on one CPU says so in the
// singular, and a routine warning most cases share is one line that
// counts them.
func TestTextSingular(t *testing.T) {
	run := fixture()
	run.Config.Count, run.Env.NumCPU = 1, 1
	for i := range run.Cases {
		if st, ok := run.Cases[i].Stats["ns/op"]; ok {
			st.N = 1
			run.Cases[i].Stats["ns/op"] = st
			run.Cases[i].Warnings = append(run.Cases[i].Warnings, model.Warn(model.WarnWideCI, float64(10+i), "wide"))
		}
	}
	var b strings.Builder
	if err := WriteText(&b, Build(run), TextOptions{Width: 200}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, text string
		want       bool
	}{
		{"one repetition", "median of 1 repetition ±", true},
		{"one CPU", "on 1 CPU (", true},
		{"grouped warning", "in all 6 cases: time/op's 95% interval is wide (±10–18%)", true},
		{"no plural after one", "1 repetitions", false},
		{"no CPUs after one", "1 CPUs", false},
	} {
		if got := strings.Contains(b.String(), tt.text); got != tt.want {
			t.Errorf("%s: contains %q = %v, want %v:\n%s", tt.name, tt.text, got, tt.want, b.String())
		}
	}
}

func TestMetricNames(t *testing.T) {
	for _, tt := range []struct {
		name, unit, shown string
	}{
		{"time", "ns/op", "time/op"},
		{"cpu", "cpu-ns/op", "cpu/op"},
		{"bytes", "B/op", "B/op"},
		{"scenario metric", "hits/op", "hits/op"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := MetricName(tt.unit); got != tt.shown {
				t.Errorf("MetricName(%q) = %q, want %q", tt.unit, got, tt.shown)
			}
			if got := MetricUnit(tt.shown); got != tt.unit {
				t.Errorf("MetricUnit(%q) = %q, want %q", tt.shown, got, tt.unit)
			}
			if got := MetricUnit(tt.unit); got != tt.unit {
				t.Errorf("MetricUnit(%q) = %q, want it unchanged", tt.unit, got)
			}
		})
	}
}

func TestListStatus(t *testing.T) {
	ok := model.Case{Status: model.StatusOK, Reps: []model.Rep{{Ops: 1}}}
	failed := model.Case{Status: model.StatusFailed}
	skipped := model.Case{Status: model.StatusSkipped}
	for _, tt := range []struct {
		name       string
		complete   bool
		cases      []model.Case
		status     string
		unmeasured string
	}{
		{"complete", true, []model.Case{ok, ok}, "complete", ""},
		{"one failed", true, []model.Case{ok, failed}, "complete, 1 failed", ""},
		{"all failed", true, []model.Case{failed, failed, failed}, "failed (all 3 cases)", "all 3 cases failed"},
		{"its one case failed", true, []model.Case{failed}, "failed", "its one case failed"},
		{"interrupted", false, []model.Case{ok, skipped}, "incomplete", ""},
		{"interrupted before measuring", false, []model.Case{skipped, skipped}, "incomplete, empty", "interrupted before any case was measured"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &model.Run{Complete: tt.complete, Cases: tt.cases}
			if got := ListStatus(r); got != tt.status {
				t.Errorf("ListStatus = %q, want %q", got, tt.status)
			}
			if got := Unmeasured(r); got != tt.unmeasured {
				t.Errorf("Unmeasured = %q, want %q", got, tt.unmeasured)
			}
		})
	}
}

// TestValue: each unit's way, and a value no measurement has (a tampered
// run.json) short, never hundreds of digits.
func TestValue(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		unit string
		want string
	}{
		{214.7, "ns/op", "214.7ns"},
		{1234, "ns/op", "1.234µs"},
		{0.004, "ns/op", "<0.01ns"},
		{4.03e6, "ops/s", "4.030M"},
		{0.876, "allocs/op", "0.876"},
		{1e308, "ns/op", "1e+308ns"},
		{-1e300, "cpu-ns/op", "-1e+300ns"},
		{1e300, "B/op", "1e+300"},
		{math.NaN(), "B/op", "—"},
	} {
		if got := Value(tt.v, tt.unit); got != tt.want {
			t.Errorf("Value(%g, %s) = %q, want %q", tt.v, tt.unit, got, tt.want)
		}
	}
}

// TestLabelLines: two cases' label breaks before " vs " when too wide.
func TestLabelLines(t *testing.T) {
	long := "variant=mutex/keys=128/key=ssk/threads=1 vs variant=rwmutex/keys=128/key=ssk/threads=1"
	for _, tt := range []struct {
		in   string
		cols int
		want []string
	}{
		{"variant=mutex/keys=128", 78, []string{"variant=mutex/keys=128"}},
		{long, 78, []string{"variant=mutex/keys=128/key=ssk/threads=1", "vs variant=rwmutex/keys=128/key=ssk/threads=1"}},
		{long, 100, []string{long}},
	} {
		if got := labelLines(tt.in, tt.cols); !slices.Equal(got, tt.want) {
			t.Errorf("labelLines(%q, %d) = %q, want %q", tt.in, tt.cols, got, tt.want)
		}
	}
}
