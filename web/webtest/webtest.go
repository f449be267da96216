// Package webtest builds the run stores the web UI's tests read: a store
// written the way the runner writes one (store.Create, WriteFile, Commit),
// with small real pprof profiles and a hostile name in every place a page
// shows one. The web package's own tests and the browser tests (their own
// module, browsertests/, so that chromedp is no dependency of perflab's)
// both use it.
package webtest

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/store"
)

// Hostile is a function and variant name that would run script if any
// page, SVG or JSON output failed to escape it.
const Hostile = `</script><img src=x onerror="alert(1)">&'`

// Fixture describes the run store the tests build.
type Fixture struct {
	Root   string
	Full   *model.Run // complete run: 3 variants × keys × threads 1,4
	Small  *model.Run // incomplete run with a hostile variant name
	Broken string     // id of a run whose profile is corrupt
}

// WriteFixture builds a run store under root the way the runner would
// (store.Create, WriteFile, Commit), with small real pprof profiles.
func WriteFixture(t testing.TB, root string) *Fixture {
	t.Helper()
	st := store.Open(root)
	f := &Fixture{Root: root}
	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

	f.Full = makeRun(t, st, rng, base, "cipher-cache", []string{"mutex", "rwmutex", "nocache"}, []string{"128", "1024"}, []int{1, 4}, true)
	f.Small = makeRun(t, st, rng, base.Add(time.Hour), "cipher-cache", []string{"mutex", Hostile}, []string{"128"}, []int{4}, false)

	// A run whose profile is not a profile.
	r := &model.Run{ID: store.NewID(base.Add(-time.Hour), "broken"), Scenario: "broken", Started: base.Add(-time.Hour), Complete: true,
		Cases: []model.Case{{Name: "variant=x", Variant: "x", Status: model.StatusOK, Profiles: map[string]string{"wall": "cases/variant=x/wall.pb.gz"}}}}
	w, err := st.Create(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile("cases/variant=x/wall.pb.gz", []byte("\x1f\x8bnot really gzip")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	f.Broken = r.ID
	return f
}

func makeRun(t testing.TB, st *store.Store, rng *rand.Rand, started time.Time, scenario string, variants, keys []string, threads []int, complete bool) *model.Run {
	t.Helper()
	r := &model.Run{
		ID: store.NewID(started, scenario), Scenario: scenario, Started: started, Finished: started.Add(2 * time.Minute),
		Complete: complete,
		Env: model.Env{GoVersion: "go1.26.8", GOOS: "linux", GOARCH: "amd64", CPU: "Test CPU @ 2.0GHz", NumCPU: 2, GOMAXPROCS: 2,
			GOGC: "100", Hostname: "lab-1", Commit: "0123456789abcdef0123456789abcdef01234567"},
		Config: model.Config{Args: []string{"run", scenario, "--count", "6"}, Variants: variants, Threads: threads, Count: 6,
			Time: model.Duration(50 * time.Millisecond), Profile: []string{"wall", "cpu", "mutex", "block"}},
	}
	if !complete {
		r.Note = "interrupted"
	}
	w, err := st.Create(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		for _, th := range threads {
			for vi, v := range variants {
				name := fmt.Sprintf("variant=%s/keys=%s/key=ssk/threads=%d", v, k, th)
				slug := model.Slug(name)
				// Time per op grows with lock contention for the caches.
				ns := 300.0 + 150*float64(vi)
				if v != "nocache" && th > 1 {
					ns *= 1.8 + 0.6*float64(vi)
				}
				ns /= float64(th) * 0.8
				c := model.Case{Name: name, Variant: v, Params: map[string]string{"keys": k, "key": "ssk"}, Threads: th, Status: model.StatusOK,
					Profiles: map[string]string{}, Flame: "cases/" + slug + "/wall.svg"}
				reps := 6
				if !complete {
					reps = 4 // too few for a confidence interval
				}
				for i := 0; i < reps; i++ {
					x := ns * (1 + 0.05*rng.NormFloat64())
					c.Reps = append(c.Reps, model.Rep{Ops: 100000, Metrics: map[string]float64{
						"ns/op": x, "cpu-ns/op": x * 1.1 * float64(th), "ops/s": 1e9 / x, "B/op": 96, "allocs/op": 2, "hits/op": 0.87, "gc-cpu-%": 1.5,
					}})
				}
				c.Stats = Stats(c.Reps)
				c.Budget = map[string]float64{"work": ns * 0.4, "lock": ns * 0.3 * float64(vi), "wait": ns * 0.02, "alloc": ns * 0.1, "gc": ns * 0.08, "sched": ns * 0.05, "other": ns * 0.07}
				// Running 0.6 of the time, split by 180 CPU samples.
				c.BudgetErr = map[string]float64{"work": ns * 0.042, "alloc": ns * 0.028, "gc": ns * 0.025, "other": ns * 0.023}
				c.Window = &model.Window{Seconds: 1.01, Ops: 1e6, NsPerOp: ns * 1.02, Running: 0.6, Runnable: 0.1, Blocked: 0.3, Occupancy: 0.97, BackgroundGCNsPerOp: 3.5, CPUSamples: 180, Goroutines: 20}
				if vi == 0 && th == threads[0] {
					// The first case: a budget marked untrusted, with
					// sched worth a line, on the run and the case page.
					c.BudgetTrust = &model.Trust{Reasons: []model.TrustReason{{Kind: model.TracedOff, Value: 1.31, Limit: 1.053}}}
					c.SchedBy = map[string]float64{"work": ns * 0.04, "sched": ns * 0.01}
				}
				if vi == 1 && th == 4 {
					c.Warnings = []model.Warning{model.Warn(model.WarnWideCI, 12, "time/op confidence interval ±12% is wide: noisy machine?")}
				}
				for _, kind := range []string{"wall", "cpu", "mutex", "block"} {
					rel := "cases/" + slug + "/" + kind + ".pb.gz"
					if err := w.WriteFile(rel, Profile(t, kind, vi)); err != nil {
						t.Fatal(err)
					}
					c.Profiles[kind] = rel
				}
				svg := `<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40"><rect width="200" height="16" fill="#e8743b"/><text x="4" y="12">` + "main.worker" + `</text></svg>`
				if err := w.WriteFile(c.Flame, []byte(svg)); err != nil {
					t.Fatal(err)
				}
				r.Cases = append(r.Cases, c)
			}
		}
	}
	if !complete {
		// A variant that panicked, one that does not apply here, and one
		// the interrupted run never reached.
		r.Cases = append(r.Cases,
			model.Case{Name: "variant=panicky/keys=128/key=ssk/threads=4", Variant: "panicky", Params: map[string]string{"keys": "128", "key": "ssk"}, Threads: 4,
				Status: model.StatusFailed, Error: "panic: " + Hostile},
			model.Case{Name: "variant=sharded/keys=128/key=ssk/threads=4", Variant: "sharded", Params: map[string]string{"keys": "128", "key": "ssk"}, Threads: 4,
				Status: model.StatusNotApplicable, Error: "no sharding below 256 keys"},
			model.Case{Name: "variant=sum256/keys=128/key=ssk/threads=4", Variant: "sum256", Params: map[string]string{"keys": "128", "key": "ssk"}, Threads: 4,
				Status: model.StatusSkipped})
	}
	if err := w.Checkpoint(); err != nil { // writes results.txt
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return r
}

// Stats summarises reps like the runner does (roughly: the web UI only
// displays these).
func Stats(reps []model.Rep) map[string]model.Stat {
	out := map[string]model.Stat{}
	for unit := range reps[0].Metrics {
		var xs []float64
		for _, r := range reps {
			xs = append(xs, r.Metrics[unit])
		}
		slices.Sort(xs)
		var sum float64
		for _, x := range xs {
			sum += x
		}
		n := len(xs)
		mean := sum / float64(n)
		med := (xs[(n-1)/2] + xs[n/2]) / 2
		var ss float64
		for _, x := range xs {
			ss += (x - mean) * (x - mean)
		}
		sd := math.Sqrt(ss / float64(n-1))
		st := model.Stat{N: n, Mean: mean, MeanLo: mean - 3*sd, MeanHi: mean + 3*sd, Median: med, MedianLo: xs[0], MedianHi: xs[n-1], Min: xs[0], Max: xs[n-1]}
		if n < 6 {
			st.MedianLo, st.MedianHi = math.Inf(-1), math.Inf(1)
		}
		out[unit] = st
	}
	return out
}

// Profile builds a small profile with stacks that touch every
// category, and one hostile function name.
func Profile(t testing.TB, kind string, variant int) []byte {
	t.Helper()
	fnNames := []string{
		"runtime.goexit", "main.worker", "github.com/perflab/perflab/scenarios/ciphercache.(*mutexCache).Get",
		"crypto/internal/fips140/sha256.blockSHANI", "internal/sync.(*Mutex).lockSlow", "runtime.mallocgc",
		"runtime.gcBgMarkWorker", "runtime.scanobject", "runtime.schedule", Hostile,
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "time", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "wall", Unit: "nanoseconds"}, Period: 10000000,
		TimeNanos: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC).UnixNano(), DurationNanos: 1e9,
	}
	if kind == "mutex" || kind == "block" {
		p.SampleType = []*profile.ValueType{{Type: "contentions", Unit: "count"}, {Type: "delay", Unit: "nanoseconds"}}
	}
	locs := map[string]*profile.Location{}
	for i, n := range fnNames {
		fn := &profile.Function{ID: uint64(i + 1), Name: n, SystemName: n, Filename: "/src/" + fmt.Sprint(i) + ".go"}
		p.Function = append(p.Function, fn)
		loc := &profile.Location{ID: uint64(i + 1), Address: uint64(0x1000 + i*16), Line: []profile.Line{{Function: fn, Line: int64(10 + i)}}}
		p.Location = append(p.Location, loc)
		locs[n] = loc
	}
	stack := func(names ...string) []*profile.Location { // root first, stored leaf first
		var out []*profile.Location
		for i := len(names) - 1; i >= 0; i-- {
			out = append(out, locs[names[i]])
		}
		return out
	}
	get := fnNames[2]
	add := func(v int64, names ...string) {
		p.Sample = append(p.Sample, &profile.Sample{Location: stack(names...), Value: []int64{v, v * 10000000}})
	}
	add(40, "runtime.goexit", "main.worker", get, "crypto/internal/fips140/sha256.blockSHANI")
	add(int64(10+25*variant), "runtime.goexit", "main.worker", get, "internal/sync.(*Mutex).lockSlow")
	add(10, "runtime.goexit", "main.worker", get, "runtime.mallocgc")
	add(8, "runtime.goexit", "runtime.gcBgMarkWorker", "runtime.scanobject")
	add(5, "runtime.goexit", "runtime.schedule")
	add(7, "runtime.goexit", "main.worker", Hostile)
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// WriteWideRun stores a run shaped like the default `perflab run
// cipher-cache` at its widest, for the run table's layout test: six
// variants (nocache-pool the longest name), keys × threads 1,4, ten
// repetitions with wide intervals on every metric, "<0.001" B/op and
// allocs/op, hits/op for the caches only, every case with a warning of its
// own, and budgets whose two largest shares make the longest label
// ("sched 50% · other 49%").
func WriteWideRun(t testing.TB, root string) *model.Run {
	t.Helper()
	st := store.Open(root)
	rng := rand.New(rand.NewPCG(3, 4))
	started := time.Date(2026, 12, 1, 12, 21, 0, 0, time.UTC)
	variants := []string{"mutex", "rwmutex", "sharded", "nocache-pool", "nocache", "sum256"}
	r := &model.Run{
		ID: store.NewID(started, "cipher-cache"), Scenario: "cipher-cache", Started: started, Finished: started.Add(2 * time.Minute), Complete: true,
		Env: model.Env{GoVersion: "go1.26.8", GOOS: "linux", GOARCH: "amd64", CPU: "AMD EPYC", NumCPU: 2, GOMAXPROCS: 2, GOGC: "100", Hostname: "vm"},
		Config: model.Config{Args: []string{"run", "cipher-cache"}, Variants: variants, Threads: []int{1, 4}, Count: 10,
			Time: model.Duration(200 * time.Millisecond), Profile: []string{"wall", "cpu", "mutex", "block"}},
	}
	w, err := st.Create(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, keys := range []string{"128", "1024"} {
		for _, th := range []int{1, 4} {
			for vi, v := range variants {
				name := fmt.Sprintf("variant=%s/keys=%s/key=ssk/threads=%d", v, keys, th)
				slug := model.Slug(name)
				ns := []float64{223.6, 226.8, 210.1, 109.5, 115.4, 114.5}[vi] * float64(th)
				bytes, allocs := []float64{70.1, 70.2, 69.9, 0.0004, 32, 0}[vi], []float64{0.876, 0.877, 0.874, 0.0002, 1, 0}[vi]
				c := model.Case{Name: name, Variant: v, Params: map[string]string{"keys": keys, "key": "ssk"}, Threads: th, Status: model.StatusOK,
					Profiles: map[string]string{}}
				for range 10 {
					// Up to ±80% between repetitions: every interval is
					// two digits wide.
					x := func(m float64) float64 { return m * (1 + 0.8*(rng.Float64()-0.5)) }
					met := map[string]float64{"ns/op": x(ns), "cpu-ns/op": x(ns * 1.2), "ops/s": x(1e9 / ns), "B/op": x(bytes), "allocs/op": x(allocs)}
					if vi < 3 {
						met["hits/op"] = x(0.121)
					}
					c.Reps = append(c.Reps, model.Rep{Ops: 100000, Metrics: met})
				}
				c.Stats = Stats(c.Reps)
				c.Budget = map[string]float64{"work": ns * 0.01, "sched": ns * (0.5 - 0.01*float64(vi)), "other": ns * (0.49 - 0.01*float64(vi))}
				c.Warnings = []model.Warning{model.Warn(model.WarnWindowDrift, float64(13+vi), fmt.Sprintf("the profiling window's time/op was +%d%% off the timed median", 13+vi))}
				for _, kind := range []string{"wall", "cpu", "mutex", "block"} {
					rel := "cases/" + slug + "/" + kind + ".pb.gz"
					if err := w.WriteFile(rel, Profile(t, kind, vi)); err != nil {
						t.Fatal(err)
					}
					c.Profiles[kind] = rel
				}
				r.Cases = append(r.Cases, c)
			}
		}
	}
	if err := w.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return r
}

// CaseURL is the page of run's i-th case.
func CaseURL(r *model.Run, i int) string {
	return "/runs/" + r.ID + "/cases/" + model.Slug(r.Cases[i].Name)
}

// DeepProfile is one stack of main.main calling main.recurse depth times.
func DeepProfile(t testing.TB, depth int) []byte {
	t.Helper()
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "cpu", Unit: "nanoseconds"}}}
	for i, n := range []string{"main.recurse", "main.main"} {
		fn := &profile.Function{ID: uint64(i + 1), Name: n}
		p.Function = append(p.Function, fn)
		p.Location = append(p.Location, &profile.Location{ID: uint64(i + 1), Line: []profile.Line{{Function: fn}}})
	}
	s := &profile.Sample{Value: []int64{1e6}}
	for range depth {
		s.Location = append(s.Location, p.Location[0])
	}
	s.Location = append(s.Location, p.Location[1])
	p.Sample = []*profile.Sample{s}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
