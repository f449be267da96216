package report

import (
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/profiles"
)

func TestStatCell(t *testing.T) {
	inf := math.Inf(1)
	for _, tt := range []struct {
		name      string
		stats     map[string]model.Stat
		text, err string
	}{
		{"not measured", nil, "—", ""},
		{"interval", map[string]model.Stat{"ns/op": {N: 10, Median: 200, MedianLo: 190, MedianHi: 206, Min: 180, Max: 230}}, "200.0ns", "±5%"},
		{"too few for an interval", map[string]model.Stat{"ns/op": {N: 3, Median: 200, MedianLo: -inf, MedianHi: inf, Min: 190, Max: 210}}, "200.0ns", "±∞"},
		{"every repetition the same", map[string]model.Stat{"ns/op": {N: 10, Median: 200, MedianLo: 200, MedianHi: 200, Min: 200, Max: 200}}, "200.0ns", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := StatCell(tt.stats, "ns/op")
			if c.Text != tt.text || c.Err != tt.err {
				t.Errorf("cell %q %q, want %q %q", c.Text, c.Err, tt.text, tt.err)
			}
			if tt.stats != nil && c.Title == "" {
				t.Error("no summary for the tooltip")
			}
		})
	}
}

func TestUnitsOfCases(t *testing.T) {
	st := func(median float64) model.Stat { return model.Stat{N: 1, Median: median, Max: median} }
	cases := []model.Case{
		{Stats: map[string]model.Stat{"hits/op": st(1), "B/op": st(0), "ns/op": st(5), "gc/op": st(1), "allocs/op": st(0)}},
		{Stats: map[string]model.Stat{"ns/op": st(6), "allocs/op": st(2), "ops/s": st(1)}},
	}
	if got, want := Units(cases), []string{"ns/op", "ops/s", "B/op", "allocs/op", "gc/op", "hits/op"}; !slices.Equal(got, want) {
		t.Errorf("Units = %q, want %q", got, want)
	}
	// B/op is zero everywhere, gc/op no headline: neither is a column.
	if got, want := TableUnits(cases), []string{"ns/op", "ops/s", "allocs/op", "hits/op"}; !slices.Equal(got, want) {
		t.Errorf("TableUnits = %q, want %q", got, want)
	}
	if got, want := SharedUnits(&cases[0], &cases[1]), []string{"ns/op", "allocs/op"}; !slices.Equal(got, want) {
		t.Errorf("SharedUnits = %q, want %q", got, want)
	}
}

// TestBudget: a case's budget splits its median time/op, in the
// categories' order with a user's own after, and its text names the two
// largest shares.
func TestBudget(t *testing.T) {
	c := &model.Case{
		Stats:  map[string]model.Stat{"ns/op": {N: 5, Median: 400}},
		Budget: map[string]float64{"lock": 50, "work": 30, "mine": 20, "gc": 0},
	}
	got := Budget(c)
	want := []BudgetPart{{"work", 120, 0.3, 0}, {"lock", 200, 0.5, 0}, {"mine", 80, 0.2, 0}}
	if !slices.Equal(got, want) {
		t.Errorf("Budget = %v, want %v", got, want)
	}
	if got, want := BudgetText(got), "lock 50% · work 30%"; got != want {
		t.Errorf("BudgetText = %q, want %q", got, want)
	}
	if got := Budget(&model.Case{}); got != nil {
		t.Errorf("no budget: %v", got)
	}
}

func TestThroughput(t *testing.T) {
	for _, tt := range []struct {
		name  string
		stats map[string]model.Stat
		want  float64
		ok    bool
	}{
		{"ops/s recorded", map[string]model.Stat{"ops/s": {N: 3, Median: 7}, "ns/op": {N: 3, Median: 1}}, 7, true},
		{"from ns/op", map[string]model.Stat{"ns/op": {N: 3, Median: 250}}, 4e6, true},
		{"from sec/op", map[string]model.Stat{"sec/op": {N: 3, Median: 0.5}}, 2, true},
		{"nothing", nil, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Throughput(&model.Case{Stats: tt.stats})
			if got != tt.want || ok != tt.ok {
				t.Errorf("Throughput = %v %v, want %v %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestWriteCaseText: a case that did not finish says why, and a name or
// message from run.json reaches the terminal without its control
// characters.
func TestWriteCaseText(t *testing.T) {
	c := &model.Case{Name: "variant=evil\x1b[31m/keys=1", Status: model.StatusFailed, Error: "panic: \x1b]0;owned\x07boom\nstack…",
		Warnings: []model.Warning{model.Warn(model.WarnOther, 0, "odd \x1b[2J figure")}}
	var b strings.Builder
	if err := WriteCaseText(&b, &model.Run{ID: "r1"}, BuildCase(c), 80); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("control characters reached the terminal: %q", out)
	}
	for _, want := range []string{"run r1 (incomplete)", "failed: panic:", "boom", "warnings:", "odd"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "stack…") {
		t.Errorf("the error's later lines were printed:\n%s", out)
	}
}

// TestBudgetErrFromAnyRunJSON: a run.json is read as it is found. A
// sampling error beyond any share (1e308 ns/op) is shown as the whole
// range, not as a 300-digit figure that breaks the 80-column table and an
// infinite share that --json cannot write; a negative or NaN one as none,
// not as "±0.0", which reads as exact.
func TestBudgetErrFromAnyRunJSON(t *testing.T) {
	run := fixture()
	run.Cases[0].BudgetErr = map[string]float64{"work": 1e308, "other": -5, "lock": math.Inf(1)}
	run.Cases[1].BudgetErr = map[string]float64{"work": -1, "other": math.NaN()}
	rep := Build(run)
	r0, r1 := rep.Groups[0].Rows[0], rep.Groups[0].Rows[1]
	if r0.Case != &run.Cases[0] || r1.Case != &run.Cases[1] {
		t.Fatal("the fixture's first group no longer starts with its first two cases")
	}
	if !r0.HasErr || r0.ErrMax != 1 || r0.Err[profiles.Other.Index()] != 0 {
		t.Errorf("huge and negative errors: HasErr %v, ErrMax %v, other %v; want true, 1, 0", r0.HasErr, r0.ErrMax, r0.Err[profiles.Other.Index()])
	}
	if r1.HasErr || r1.ErrMax != 0 {
		t.Errorf("no positive error: HasErr %v, ErrMax %v; want none", r1.HasErr, r1.ErrMax)
	}
	var text strings.Builder
	if err := WriteText(&text, rep, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(io.Discard, rep); err != nil {
		t.Errorf("WriteJSON: %v", err)
	}
	rc := BuildCase(&run.Cases[0])
	if err := WriteCaseText(&text, run, rc, 80); err != nil {
		t.Fatal(err)
	}
	if err := WriteCaseJSON(io.Discard, run, rc); err != nil {
		t.Errorf("WriteCaseJSON: %v", err)
	}
	for _, p := range append(rc.Budget, BuildCase(&run.Cases[1]).Budget...) {
		if p.Err < 0 || p.Err > 1 || math.IsNaN(p.Err) {
			t.Errorf("%s's error %v, want 0–1", p.Category, p.Err)
		}
	}
	for _, line := range strings.Split(text.String(), "\n") {
		if utf8.RuneCountInString(line) > 80 {
			t.Errorf("line wider than 80 columns: %q", line)
		}
	}
	if out := text.String(); strings.Contains(out, "±0.0") || !strings.Contains(out, "±100") {
		t.Errorf("want the huge error as ±100 and no ±0.0:\n%s", out)
	}
}

// TestCaseWarningsMarked: which of a case's warnings CaseWarnings leaves
// to its budget's trust mark, which says them already.
func TestCaseWarningsMarked(t *testing.T) {
	few := model.Warn(model.WarnFewSamples, 11, "the split of running time (work, alloc, other…) rests on 11 CPU samples (want 50 or more)")
	drift := model.Warn(model.WarnWindowDrift, 13, "the traced slices' time/op was +13% off the timed median")
	contended := model.Warn(model.WarnWindowContended, 0, "another process on the cores kept the workers' threads from a CPU")
	wide := model.Warn(model.WarnWideCI, 12, "time/op confidence interval ±12% is wide: noisy machine?")
	reason := func(k model.TrustKind, v float64) model.TrustReason {
		return model.TrustReason{Kind: k, Value: v, Limit: 50}
	}
	for _, tt := range []struct {
		name     string
		trust    *model.Trust
		warnings []model.Warning
		want     []model.Warning
	}{
		{"few samples, marked", &model.Trust{Reasons: []model.TrustReason{reason(model.FewSamples, 11)}}, []model.Warning{few, wide}, []model.Warning{wide}},
		{"few samples, marked among others", &model.Trust{Reasons: []model.TrustReason{reason(model.TracedOff, 0.91), reason(model.FewSamples, 11)}}, []model.Warning{few}, nil},
		// The mark counts the helpers' 30 samples, the warning the
		// workers' 11: two things, both said.
		{"few samples, the mark the helpers'", &model.Trust{Reasons: []model.TrustReason{reason(model.FewSamples, 30)}}, []model.Warning{few}, []model.Warning{few}},
		// Running under a fifth of the workers' time: not marked.
		{"few samples, trusted", &model.Trust{}, []model.Warning{few}, []model.Warning{few}},
		{"few samples, not judged", nil, []model.Warning{few, drift}, []model.Warning{few, drift}},
		{"drift, judged", &model.Trust{}, []model.Warning{drift, wide}, []model.Warning{wide}},
		{"contended, marked", &model.Trust{Reasons: []model.TrustReason{reason(model.WindowContended, 0.2)}}, []model.Warning{contended}, nil},
		{"CPU wait, marked", &model.Trust{Reasons: []model.TrustReason{reason(model.WindowCPUWait, 0.2)}}, []model.Warning{contended}, nil},
		{"contended, not marked", &model.Trust{Reasons: []model.TrustReason{reason(model.RecordsLost, 0.2)}}, []model.Warning{contended}, []model.Warning{contended}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := CaseWarnings(&model.Case{BudgetTrust: tt.trust, Warnings: tt.warnings})
			if !slices.Equal(got, tt.want) {
				t.Errorf("CaseWarnings = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestCaseWarningsSaidOnce: the case view (perflab show RUN/CASE, its
// JSON, the web case page) shows the budget's trust mark since it reads
// one report.Case; the warnings the mark says are left out there too, as
// the run's table leaves them out, not said twice.
func TestCaseWarningsSaidOnce(t *testing.T) {
	c := fixture().Cases[0]
	c.BudgetTrust = &model.Trust{Reasons: []model.TrustReason{{Kind: model.WindowContended, Value: 0.2, Limit: 0.1}}}
	c.Warnings = []model.Warning{
		model.Warn(model.WarnWindowDrift, 13, "the traced slices' time/op was +13% off the timed median"),
		model.Warn(model.WarnWindowContended, 0, "another process on the cores kept the workers' threads from a CPU"),
		model.Warn(model.WarnWideCI, 12, "time/op confidence interval ±12% is wide: noisy machine?"),
	}
	rc := BuildCase(&c)
	if len(rc.Warnings) != 1 || rc.Warnings[0].Kind != model.WarnWideCI {
		t.Errorf("report.Case warnings %v, want the wide interval's only", rc.Warnings)
	}
	var text, js strings.Builder
	if err := WriteCaseText(&text, &model.Run{ID: "r1"}, rc, 80); err != nil {
		t.Fatal(err)
	}
	if err := WriteCaseJSON(&js, &model.Run{ID: "r1"}, rc); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "JSON": js.String()} {
		if !strings.Contains(out, "another program had the CPUs 20%") || !strings.Contains(out, "noisy machine?") {
			t.Errorf("%s lacks the trust mark or the wide interval's warning:\n%s", name, out)
		}
		if strings.Contains(out, "another process on the cores") || strings.Contains(out, "+13% off") {
			t.Errorf("%s says what the trust mark says again:\n%s", name, out)
		}
	}
	// The run's table leaves out the same.
	run := fixture()
	run.Cases[0] = c
	var table strings.Builder
	if err := WriteText(&table, Build(run), TextOptions{Verbose: true}); err != nil {
		t.Fatal(err)
	}
	if out := table.String(); strings.Contains(out, "another process on the cores") || strings.Contains(out, "+13% off") {
		t.Errorf("the run's table says what the trust mark says again:\n%s", out)
	}
}
