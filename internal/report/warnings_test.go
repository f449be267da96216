package report

import (
	"reflect"
	"testing"
)

func TestWarningsGroupAcrossCases(t *testing.T) {
	var l warningList
	l.add("a", "time/op confidence interval ±16% is wide: noisy")
	l.add("b", "time/op confidence interval ±128% is wide: noisy")
	l.add("c", "need >= 6 samples for confidence interval at level 0.95")
	l.add("d", "budget rests on 52 wall-clock samples (want 200 or more)")
	l.add("e", "budget rests on 186 wall-clock samples (want 200 or more)")
	var got []string
	for _, w := range l.list() {
		got = append(got, w.String())
	}
	want := []string{
		"in each of 2 cases: time/op confidence interval ±16–128% is wide: noisy (a, b)",
		"c: need >= 6 samples for confidence interval at level 0.95",
		"in each of 2 cases: budget rests on 52–186 wall-clock samples (want 200 or more) (d, e)",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got:\n%q\nwant:\n%q", got, want)
	}
}

func TestWarningsSignedRange(t *testing.T) {
	var l warningList
	l.add("a", "the window's time/op was -44% off the timed median")
	l.add("b", "the window's time/op was -45% off the timed median")
	l.add("c", "the window's time/op was +12% off the timed median")
	got := l.list()
	if len(got) != 1 || got[0].Message != "the window's time/op was -45 to +12% off the timed median" {
		t.Errorf("got %+v", got)
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
		n    int
		want string
	}{
		{2, "in each of 2 cases: m (a, b)"},
		{7, "in each of 7 cases: m (a, b, c, d, e, f, g)"},
		{12, "in each of 12 cases: m (a, b, c, d, e, f, g, h, i, j, k, l)"},
		{14, "in each of 14 cases: m (a, b, c, d, e, f, g, h, i, j, k, l, and 2 more)"},
	} {
		if got := (Warning{Message: "m", Cases: names(tt.n)}).String(); got != tt.want {
			t.Errorf("%d cases: %q, want %q", tt.n, got, tt.want)
		}
	}
}
