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
