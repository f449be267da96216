package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/runner"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// fixture is a small run with what a table must handle: two groups, a
// budget and a window, a scenario metric, a failed and an n/a case, a
// hostile variant name and grouped warnings.
func fixture() *model.Run {
	run := &model.Run{
		ID: "20261201-120000-cipher-cache", Scenario: "cipher-cache", Complete: true,
		Started:    time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC),
		Env:        model.Env{GoVersion: "go1.26.8", CPU: "AMD EPYC", GOMAXPROCS: 2, GOGC: "100", Commit: "a38ced349bdd0000", Dirty: true},
		Config:     model.Config{Count: 6},
		ParamOrder: []string{"keys", "key"},
	}
	type v struct {
		name      string
		ns        float64
		bop, hits float64
		budget    map[string]float64
		status    model.Status
		err       string
	}
	for _, th := range []int{1, 4} {
		for i, vv := range []v{
			{name: "mutex", ns: 214.7, bop: 70.3, hits: 0.121, budget: map[string]float64{"work": .44, "lock": .04, "alloc": .05, "sched": .01, "other": .46}},
			{name: "rwmutex", status: model.StatusFailed, err: "worker panicked: boom\nstack…"},
			{name: "nocache-pool", ns: 96.5, bop: 0.0004, budget: map[string]float64{"work": .96, "gc": .04}},
			{name: "sum256", ns: 107.6, budget: map[string]float64{"work": .95, "wait": .02, "other": .03}},
			{name: "sharded", status: model.StatusNotApplicable, err: "no sharding below 256 keys"},
		} {
			params := map[string]string{"keys": "1024", "key": "ssk"}
			c := model.Case{Variant: vv.name, Params: params, Threads: th, Status: model.StatusOK}
			c.Name = "variant=" + vv.name + "/keys=1024/key=ssk/threads=" + string(rune('0'+th))
			if vv.status != "" {
				c.Status, c.Error = vv.status, vv.err
				run.Cases = append(run.Cases, c)
				continue
			}
			ns := vv.ns / float64(th) * 1.8
			series := map[string][]float64{}
			for r := 0; r < 6; r++ {
				jitter := 1 + 0.01*float64((r*7+i)%5-2)
				m := map[string]float64{"ns/op": ns * jitter, "cpu-ns/op": ns * float64(th) * 0.9 * jitter,
					"ops/s": 1e9 / (ns * jitter), "B/op": vv.bop, "allocs/op": vv.bop / 80,
					"alloc-MB/s": vv.bop * 1e9 / (ns * jitter) / 1e6}
				if vv.hits > 0 {
					m["hits/op"] = vv.hits
				}
				c.Reps = append(c.Reps, model.Rep{Ops: 1000, Metrics: m})
				for u, x := range m {
					series[u] = append(series[u], x)
				}
			}
			c.Stats = map[string]model.Stat{}
			for u, xs := range series {
				st, warns := runner.Summarise(xs)
				c.Stats[u] = st
				if u == "ns/op" {
					c.Warnings = append(c.Warnings, warns...)
				}
			}
			c.Budget = map[string]float64{}
			for cat, f := range vv.budget {
				c.Budget[cat] = f * c.Stats["ns/op"].Median
			}
			// The CPU samples' error on the shares with running time.
			med := c.Stats["ns/op"].Median
			c.BudgetErr = map[string]float64{"work": .035 * med, "other": .028 * med}
			if vv.name == "nocache-pool" {
				c.BudgetErr = map[string]float64{"work": .006 * med}
			}
			c.Window = &model.Window{Seconds: 1, NsPerOp: ns, BackgroundGCNsPerOp: vv.bop / 8}
			if th == 1 && vv.name == "mutex" {
				// One goroutine's few samples: a split wider than
				// the suite's tolerance, marked.
				c.BudgetErr = map[string]float64{"work": .072 * med, "other": .07 * med}
				c.BudgetTrust = &model.Trust{Reasons: []model.TrustReason{{Kind: model.SampleError, Value: .072, Limit: .05}}}
			}
			if th == 4 {
				c.Warnings = append(c.Warnings, model.Warn(model.WarnWindowDrift, float64(10*(i+1)+2), "the profiling window's time/op was +"+string(rune('1'+i))+"2% off the timed median: the budget's shares come from that window"))
				// Judged budgets: an untrusted one (two reasons, which
				// wrap), a trusted one, and one with sched worth a line.
				switch vv.name {
				case "mutex":
					c.BudgetTrust = &model.Trust{Reasons: []model.TrustReason{{Kind: model.TracedOff, Value: 1.352, Limit: 1.053}, {Kind: model.FewSamples, Value: 27, Limit: 50}}}
				case "nocache-pool":
					c.BudgetTrust = &model.Trust{}
				case "sum256":
					med := c.Stats["ns/op"].Median
					c.Budget = map[string]float64{"work": .80 * med, "wait": .02 * med, "sched": .15 * med, "other": .03 * med}
					c.SchedBy = map[string]float64{"work": .12 * med, "sched": .02 * med, "alloc": .01 * med}
					c.BudgetTrust = &model.Trust{Reasons: []model.TrustReason{{Kind: model.TracerEffect, Value: 1.21, Limit: 1.053}}}
				}
			}
			run.Cases = append(run.Cases, c)
		}
	}
	run.Cases[0].Warnings = append(run.Cases[0].Warnings, model.Warn(model.WarnFewSamples, 27, "the split of running time (work, alloc, other…) rests on 27 CPU samples"))
	run.Env.NumCPU = 2
	run.Rounds = []model.Round{{Load1: 1.2}, {Load1: 3.4, Steal: 0.08}, {Load1: 2.0, Steal: 0.01}}
	return run
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; run go test -update and review the diff\ngot:\n%s", path, got)
	}
}

func TestTextGolden(t *testing.T) {
	slices := func() *model.Run {
		run := fixture()
		run.Config.Trace = "slices"
		// A case whose trace had the tracer busy in its own
		// functions: the legend says that time is left out.
		for _, c := range run.Cases {
			if c.Window != nil {
				c.Window.TracerOwn = 0.05
				break
			}
		}
		return run
	}
	for _, tt := range []struct {
		name string
		opts TextOptions
		max  int
		run  func() *model.Run
	}{
		{"table-80.txt", TextOptions{}, 80, fixture},
		{"table-160.txt", TextOptions{Width: 160}, 160, fixture},
		{"table-wide.txt", TextOptions{Wide: true}, 0, fixture},
		{"table-verbose-80.txt", TextOptions{Verbose: true}, 80, fixture},
		{"table-slices-80.txt", TextOptions{}, 80, slices},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteText(&b, Build(tt.run()), tt.opts); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name, b.Bytes())
			if tt.max > 0 {
				for i, line := range strings.Split(b.String(), "\n") {
					if n := width(line); n > tt.max {
						t.Errorf("line %d is %d columns: %q", i+1, n, line)
					}
				}
			}
		})
	}
}

func TestVerdict(t *testing.T) {
	rep := Build(fixture())
	v := rep.Groups[0].Verdict
	if v == nil || v.Fastest != "nocache-pool" || v.RunnerUp != "sum256" || v.Slowest != "mutex" || !v.Significant {
		t.Fatalf("verdict %+v", v)
	}
	if want := "fastest: nocache-pool, 1.1× faster than sum256 (significant: p=0.0312 n=6+6); 2.2× faster than the slowest, mutex"; v.String() != want {
		t.Errorf("verdict %q, want %q", v.String(), want)
	}
}

// TestVerdictCounts: the verdict's n reads in the sentence's order, the
// fastest's repetitions first.
func TestVerdictCounts(t *testing.T) {
	for _, tt := range []struct {
		name    string
		variant string // whose repetitions are cut to 4
		want    string
	}{
		{"fastest has fewer", "nocache-pool", "n=4+6)"},
		{"runner-up has fewer", "sum256", "n=6+4)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run := fixture()
			for i := range run.Cases {
				if c := &run.Cases[i]; c.Variant == tt.variant {
					c.Reps = c.Reps[:4]
				}
			}
			v := Build(run).Groups[0].Verdict
			if v == nil || v.Fastest != "nocache-pool" || v.RunnerUp != "sum256" {
				t.Fatalf("verdict %+v", v)
			}
			if !strings.Contains(v.String(), tt.want) {
				t.Errorf("verdict %q, want %q", v.String(), tt.want)
			}
		})
	}
}

// compareFixture compares the fixture run with a copy whose mutex is 30%
// slower and whose nocache-pool is 4% slower (significant, but not beyond
// the threshold: the widest verdict), as two runs: what `perflab compare
// OLD NEW` renders.
func compareFixture() *Comparison {
	a := fixture()
	b := fixture()
	b.ID = "20261201-130000-cipher-cache"
	b.Env.Commit = "b1b2b3b4b5b6"
	for i := range b.Cases {
		c := &b.Cases[i]
		slower := map[string]float64{"mutex": 1.3, "nocache-pool": 1.04}[c.Variant]
		if slower == 0 {
			continue
		}
		for j := range c.Reps {
			c.Reps[j].Metrics["ns/op"] *= slower
		}
	}
	b.Cases = b.Cases[:len(b.Cases)-1] // one case only the old run has
	c := &Comparison{A: a.ID, B: b.ID}
	var pairs []compare.Pair
	for i := range a.Cases {
		if cb, ok := b.Case(a.Cases[i].Name); ok {
			pairs = append(pairs, compare.Pair{Label: a.Cases[i].Name, A: &a.Cases[i], B: cb})
		} else {
			c.OnlyA = append(c.OnlyA, a.Cases[i].Name)
		}
	}
	c.Metrics = compare.Metrics(pairs, []string{"ns/op", "B/op"}, compare.Options{})
	c.Warnings = EnvWarnings(a, b)
	return c
}

func TestCompareGolden(t *testing.T) {
	for _, tt := range []struct {
		name  string
		write func(*bytes.Buffer, *Comparison) error
		max   int
	}{
		{"compare-80.txt", func(b *bytes.Buffer, c *Comparison) error { return WriteCompareText(b, c, 80) }, 80},
		{"compare-160.txt", func(b *bytes.Buffer, c *Comparison) error { return WriteCompareText(b, c, 160) }, 160},
		{"compare.md", func(b *bytes.Buffer, c *Comparison) error { return WriteCompareMarkdown(b, c) }, 0},
		{"compare.json", func(b *bytes.Buffer, c *Comparison) error { return WriteCompareJSON(b, c) }, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := compareFixture()
			var b bytes.Buffer
			if err := tt.write(&b, c); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name, b.Bytes())
			if tt.max > 0 {
				for i, line := range strings.Split(b.String(), "\n") {
					if n := width(line); n > tt.max {
						t.Errorf("line %d is %d columns: %q", i+1, n, line)
					}
				}
			}
			if !c.Regressed() {
				t.Error("a 30% slower mutex is not a regression")
			}
		})
	}
}

// TestTextIncomplete: an incomplete run's header fits 80 columns, with a
// note stored now or the long one older runs have, and the legend says
// when the run itself is why cases have no budget.
func TestTextIncomplete(t *testing.T) {
	const legacy = "interrupted: the rounds measured so far are saved and the run is marked incomplete (by SIGINT)"
	for _, tt := range []struct {
		name    string
		note    string
		profile []string
		budgets int // cases that keep their budget, -1 all
		golden  string
		head    string   // the output's first line or lines
		want    []string // in the output, with spaces and line breaks as one space
	}{
		{"legacy note, before profiling", legacy, []string{"wall", "cpu"}, 0, "table-interrupted-80.txt",
			"20261201-120000-cipher-cache  go1.26.8  INCOMPLETE: interrupted by SIGINT\ncpu:",
			[]string{"No time budget: the run was interrupted before profiling."}},
		{"short note", "interrupted by SIGINT in round 3/10", []string{"wall"}, -1, "",
			"20261201-120000-cipher-cache  go1.26.8  INCOMPLETE:\n  interrupted by SIGINT in round 3/10\ncpu:", nil},
		{"while profiling", "interrupted by SIGTERM while profiling case 3/6", []string{"wall"}, 2, "",
			"20261201-120000-cipher-cache  go1.26.8  INCOMPLETE:\n  interrupted by SIGTERM while profiling case 3/6\ncpu:",
			[]string{"Time budget for 2 of 6 cases: the run was interrupted while profiling."}},
		{"profile none", "interrupted by SIGINT in round 2/6", nil, 0, "", "",
			[]string{"No time budget: the run was made with --profile none."}},
		{"lost profiles", "incomplete: the profiles of 1 of 6 profiled cases were not all saved: variant=mutex/keys=1024/key=ssk/threads=1: no space left on device", []string{"wall"}, -1, "",
			"20261201-120000-cipher-cache  go1.26.8  INCOMPLETE:\n  incomplete: the profiles of 1 of 6 profiled cases were not all saved:\n    variant=mutex/keys=1024/key=ssk/threads=1: no space left on device\ncpu:", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run := fixture()
			run.Complete, run.Note, run.Config.Profile = false, tt.note, tt.profile
			kept := 0
			for i := range run.Cases {
				c := &run.Cases[i]
				if c.Status != model.StatusOK {
					continue
				}
				if tt.budgets >= 0 && kept >= tt.budgets {
					c.Budget, c.Window = nil, nil
				}
				kept++
			}
			var b bytes.Buffer
			if err := WriteText(&b, Build(run), TextOptions{}); err != nil {
				t.Fatal(err)
			}
			if tt.golden != "" {
				golden(t, tt.golden, b.Bytes())
			}
			if !strings.HasPrefix(b.String(), tt.head) {
				t.Errorf("output does not begin with %q:\n%s", tt.head, b.String())
			}
			words := strings.Join(strings.Fields(b.String()), " ")
			for _, w := range tt.want {
				if !strings.Contains(words, w) {
					t.Errorf("output lacks %q:\n%s", w, b.String())
				}
			}
			for i, line := range strings.Split(b.String(), "\n") {
				if n := width(line); n > 80 {
					t.Errorf("line %d is %d columns: %q", i+1, n, line)
				}
			}
		})
	}
}

// TestCompareNoteOnce: the --count advice that two metrics share is given
// in full under the first and named under the second.
func TestCompareNoteOnce(t *testing.T) {
	a, b := fixture(), fixture()
	b.ID = "20261201-130000-cipher-cache"
	var pairs []compare.Pair
	for i := range a.Cases {
		a.Cases[i].Reps = a.Cases[i].Reps[:min(3, len(a.Cases[i].Reps))]
		b.Cases[i].Reps = b.Cases[i].Reps[:min(3, len(b.Cases[i].Reps))]
		pairs = append(pairs, compare.Pair{Label: a.Cases[i].Name, A: &a.Cases[i], B: &b.Cases[i]})
	}
	c := &Comparison{A: a.ID, B: b.ID}
	c.Metrics = compare.Metrics(pairs, []string{"ns/op", "cpu-ns/op"}, compare.Options{})
	adv := c.Metrics[0].AdviceFor(c.A, c.B)
	if adv == "" || c.Metrics[1].AdviceFor(c.A, c.B) != adv {
		t.Fatalf("fixture: want the same advice for both metrics, got %q and %q", adv, c.Metrics[1].AdviceFor(c.A, c.B))
	}
	var buf bytes.Buffer
	if err := WriteCompareText(&buf, c, 80); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if n := strings.Count(out, "  note: "); n != 2 {
		t.Errorf("%d notes, want 2:\n%s", n, out)
	}
	if !strings.Contains(out, "  note: the same as for time/op\n") || strings.Count(out, "--count") != 1 {
		t.Errorf("the second metric's note should name time/op's, not repeat it:\n%s", out)
	}
}
