package pyroscope

import (
	"bytes"
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/store"
)

// testProfile builds a small profile shaped like the kind perflab stores:
// fgprof's sample types for wall, runtime/pprof's for cpu, mutex and block.
// Each stack is leaf first; value is the time in nanoseconds.
func testProfile(kind string, start time.Time, stacks map[string][]string) *profile.Profile {
	p := &profile.Profile{
		TimeNanos:     start.UnixNano(),
		DurationNanos: int64(time.Second),
		Period:        int64(time.Second / 99),
	}
	switch kind {
	case KindWall:
		p.SampleType = []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "time", Unit: "nanoseconds"}}
		p.PeriodType = &profile.ValueType{Type: "wallclock", Unit: "nanoseconds"}
	case KindCPU:
		p.SampleType = []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}
		p.PeriodType = &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}
	case KindMutex, KindBlock:
		p.SampleType = []*profile.ValueType{{Type: "contentions", Unit: "count"}, {Type: "delay", Unit: "nanoseconds"}}
		p.PeriodType = &profile.ValueType{Type: "contentions", Unit: "count"}
		p.Period = 1
	}
	m := &profile.Mapping{ID: 1, HasFunctions: true}
	p.Mapping = []*profile.Mapping{m}
	funcs := map[string]*profile.Function{}
	locs := map[string]*profile.Location{}
	loc := func(name string) *profile.Location {
		if l, ok := locs[name]; ok {
			return l
		}
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name, Filename: "x.go"}
		funcs[name] = f
		p.Function = append(p.Function, f)
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Mapping: m, Line: []profile.Line{{Function: f, Line: 1}}}
		locs[name] = l
		p.Location = append(p.Location, l)
		return l
	}
	for _, ns := range slices.Sorted(maps.Keys(stacks)) {
		var d time.Duration
		var err error
		if d, err = time.ParseDuration(ns); err != nil {
			panic(err)
		}
		s := &profile.Sample{Value: []int64{int64(d) / p.Period, int64(d)}}
		if kind == KindMutex || kind == KindBlock {
			s.Value[0] = 3
		}
		for _, fn := range stacks[ns] {
			s.Location = append(s.Location, loc(fn))
		}
		p.Sample = append(p.Sample, s)
	}
	if err := p.CheckValid(); err != nil {
		panic(err)
	}
	return p
}

// writeTestRun stores a run of scenario "push-test" with two cases whose
// profiles have distinct leaf functions (perflabtest.workA/workB), so a
// read-back can tell the cases apart. Variant b's mutex profile is empty.
func writeTestRun(t *testing.T, id string, start time.Time) (*store.Store, *model.Run) {
	t.Helper()
	st := store.Open(filepath.Join(t.TempDir(), "runs"))
	run := &model.Run{
		ID: id, Scenario: "push-test", Started: start, Finished: start.Add(time.Minute), Complete: true,
		Env: model.Env{GOOS: "linux", GOARCH: "amd64", Commit: "abc123"},
	}
	w, err := st.Create(run)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"a", "b"} {
		c := model.Case{
			Name:    "variant=" + v + "/key-size=16/threads=2",
			Variant: v, Params: map[string]string{"key-size": "16"}, Threads: 2,
			Status: model.StatusOK, Profiles: map[string]string{},
		}
		leaf := "perflabtest.work" + map[string]string{"a": "A", "b": "B"}[v]
		for _, kind := range []string{KindWall, KindCPU, KindMutex, KindBlock} {
			stacks := map[string][]string{
				"700ms": {leaf, "perflabtest.worker", "runtime.goexit"},
				"300ms": {"sync.(*Mutex).lockSlow", "perflabtest.worker", "runtime.goexit"},
			}
			if kind == KindMutex && v == "b" {
				stacks = nil
			}
			p := testProfile(kind, start, stacks)
			var buf bytes.Buffer
			if err := p.Write(&buf); err != nil {
				t.Fatal(err)
			}
			rel := "cases/" + model.Slug(c.Name) + "/" + kind + ".pb.gz"
			if err := w.WriteFile(rel, buf.Bytes()); err != nil {
				t.Fatal(err)
			}
			c.Profiles[kind] = rel
		}
		run.Cases = append(run.Cases, c)
	}
	run.Cases = append(run.Cases, model.Case{Name: "variant=c/key-size=16/threads=2", Variant: "c", Status: model.StatusFailed, Error: "boom"})
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	loaded, err := st.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	return st, loaded
}
