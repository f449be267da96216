package report

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/perflab/perflab/internal/model"
)

func cw(g, r int, name string, kind model.WarningKind, fig float64, msg string) caseWarning {
	return caseWarning{group: g, row: r, name: name, w: model.Warn(kind, fig, msg)}
}

// TestGroupWarnings: a routine kind most cases share is one run line with
// its figures' range; the rest stay on their rows, in the kind's short
// wording with the case's sentence as the detail.
func TestGroupWarnings(t *testing.T) {
	all := []caseWarning{
		cw(0, 0, "a", model.WarnWideCI, 16, "time/op confidence interval ±16% is wide: noisy"),
		cw(0, 1, "b", model.WarnWideCI, 128, "time/op confidence interval ±128% is wide: noisy"),
		cw(1, 0, "c", model.WarnWideCI, 40, "time/op confidence interval ±40% is wide: noisy"),
		cw(1, 0, "c", model.WarnWindowDrift, -45, "the profiling window's time/op was -45% off"),
		cw(1, 1, "d", model.WarnWindowDrift, 12, "the profiling window's time/op was +12% off"),
		cw(1, 1, "d", model.WarnOther, 0, "something new\nsecond line"),
	}
	run, perRow := groupWarnings(all, 5)
	if len(run) != 1 {
		t.Fatalf("run warnings %+v, want the wide intervals only", run)
	}
	if got, want := run[0].String(), "in 3 of 5 cases (marked !): time/op's 95% interval is wide (±16–128%): the machine is noisy or the case unstable; use more --count, a quieter machine, or compare cpu/op"; got != want {
		t.Errorf("run warning\n got %q\nwant %q", got, want)
	}
	// Row c has the run's grouped warning (marked, no line of its own)
	// and its own.
	c := perRow[[2]int{1, 0}]
	if len(c) != 2 || !c[0].Grouped || c[0].Kind != model.WarnWideCI || c[1].Grouped || c[1].Kind != model.WarnWindowDrift || c[1].Affects != AffectsBudget {
		t.Fatalf("row c: %+v", c)
	}
	c = c[1:]
	if want := "budget from a profiling window -45% off the timed time/op"; c[0].Message != want {
		t.Errorf("row c message %q, want %q", c[0].Message, want)
	}
	if c[0].Detail != "the profiling window's time/op was -45% off" {
		t.Errorf("row c detail %q", c[0].Detail)
	}
	d := perRow[[2]int{1, 1}]
	if len(d) != 2 || d[1].Message != "something new" || d[1].Detail != "" {
		t.Errorf("row d: %+v", d)
	}
}

// TestGroupWarningsFewCases: a routine kind in under half the cases stays
// on its rows: it is about those cases, not the machine.
func TestGroupWarningsFewCases(t *testing.T) {
	all := []caseWarning{
		cw(0, 0, "a", model.WarnWideCI, 16, "x"),
		cw(0, 1, "b", model.WarnWideCI, 20, "y"),
	}
	run, perRow := groupWarnings(all, 6)
	if len(run) != 0 || len(perRow) != 2 {
		t.Errorf("run %+v, rows %+v", run, perRow)
	}
}

func TestRangeOf(t *testing.T) {
	for _, tt := range []struct {
		lo, hi float64
		signed bool
		want   string
	}{
		{12, 12, false, "12"},
		{12, 37, false, "12–37"},
		{-45, 12, true, "-45 to +12"},
		{-45, -44, true, "-45 to -44"},
		{3, 3, true, "+3"},
	} {
		if got := rangeOf(tt.lo, tt.hi, tt.signed); got != tt.want {
			t.Errorf("rangeOf(%v, %v, %v) = %q, want %q", tt.lo, tt.hi, tt.signed, got, tt.want)
		}
	}
}

// TestWarningNamesItsCases: a warning names every case it is about, up to
// maxNamed, so that the table's rows it concerns can be found.
func TestWarningNamesItsCases(t *testing.T) {
	names := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, string(rune('a'+i)))
		}
		return out
	}
	for _, tt := range []struct {
		n, of int
		want  string
	}{
		{2, 0, "in each of 2 cases: m (a, b)"},
		{7, 7, "in all 7 cases: m"},
		{12, 20, "in 12 of 20 cases: m (a, b, c, d, e, f, g, h, i, j, k, l)"},
		{14, 0, "in each of 14 cases: m (a, b, c, d, e, f, g, h, i, j, k, l, and 2 more)"},
	} {
		if got := (Warning{Message: "m", Cases: names(tt.n), Of: tt.of}).String(); got != tt.want {
			t.Errorf("%d cases: %q, want %q", tt.n, got, tt.want)
		}
	}
}

// TestLegacyWarnings: a run stored before warnings had kinds wrote each as
// its sentence; read back, each gets its kind and figure, so old runs
// group as new ones do.
func TestLegacyWarnings(t *testing.T) {
	var c model.Case
	in := `{"warnings":["time/op confidence interval ±37% is wide: x","the profiling window's time/op was -44% off the timed median: y","time/op ±9% after 30 rounds: did not reach --until","time/op ran at two speeds: 4 repetitions near 45ns","who knows",{"kind":"starved","figure":0.8,"message":"got 0.80 CPUs"}]}`
	if err := json.Unmarshal([]byte(in), &c); err != nil {
		t.Fatal(err)
	}
	var got []model.Warning
	for _, w := range c.Warnings {
		got = append(got, model.Warning{Kind: w.Kind, Figure: w.Figure})
	}
	want := []model.Warning{
		{Kind: model.WarnWideCI, Figure: 37},
		{Kind: model.WarnWindowDrift, Figure: -44},
		{Kind: model.WarnUntil, Figure: 9},
		{Kind: model.WarnTwoSpeeds},
		{Kind: model.WarnOther},
		{Kind: model.WarnStarved, Figure: 0.8},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	// A legacy two-speeds warning keeps its sentence: its figure is unknown.
	run, perRow := groupWarnings([]caseWarning{{name: "a", w: c.Warnings[3]}}, 4)
	if len(run) != 0 || perRow[[2]int{0, 0}][0].Message != "time/op ran at two speeds: 4 repetitions near 45ns" {
		t.Errorf("legacy two speeds: %+v %+v", run, perRow)
	}
}
