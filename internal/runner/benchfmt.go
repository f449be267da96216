package runner

import (
	"fmt"
	"io"
	"reflect"
	"runtime"
	"sort"
	"strings"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/store"
	"golang.org/x/perf/benchfmt"
)

// benchUnits are written to results.txt in this order; scenario metrics
// (hits/op, …) follow, sorted. ops/s is left out: benchstat derives
// nothing from it that ns/op does not already say.
var benchUnits = []string{"ns/op", "cpu-ns/op", "MB/s", "B/op", "allocs/op", "alloc-MB/s", "gc/op", "gc-cpu-%"}

// WriteBenchfmt writes every repetition of run as benchfmt text, one line
// per repetition, with the run's environment as file configuration, so
// `benchstat results.txt` (or two runs' files) works unchanged. Names
// follow `go test`: BenchmarkCipherCache/variant=mutex/keys=128/key=ssk/threads=4-2,
// where the -2 suffix is GOMAXPROCS.
func WriteBenchfmt(w io.Writer, s *perflab.Scenario, run *store.Run) error {
	bw := benchfmt.NewWriter(w)
	// Only the keys `go test` writes: benchstat splits tables by any file
	// key that differs, so a run id or commit here would keep two runs (or
	// a run and the scenario's go test -bench output) from being compared.
	// Those are in run.json.
	cfg := []benchfmt.Config{
		{Key: "goos", Value: []byte(run.Env.GOOS), File: true},
		{Key: "goarch", Value: []byte(run.Env.GOARCH), File: true},
		{Key: "pkg", Value: []byte(scenarioPackage(s)), File: true},
		{Key: "cpu", Value: []byte(run.Env.CPU), File: true},
	}
	// benchfmt.Writer writes the "Benchmark" prefix itself.
	prefix := strings.TrimPrefix(s.BenchName(), "Benchmark") + "/"
	for _, c := range run.Cases {
		if c.Status != store.StatusOK {
			continue
		}
		name := fmt.Sprintf("%s%s-%d", prefix, c.Name, run.Env.GOMAXPROCS)
		for _, rep := range c.Reps {
			res := &benchfmt.Result{Config: cfg, Name: benchfmt.Name(name), Iters: int(rep.Ops)}
			for _, u := range append(benchUnits, extraUnits(rep.Metrics)...) {
				if v, ok := rep.Metrics[u]; ok {
					res.Values = append(res.Values, benchfmt.Value{Value: v, Unit: u})
				}
			}
			if err := bw.Write(res); err != nil {
				return err
			}
		}
	}
	return nil
}

func extraUnits(m map[string]float64) []string {
	known := map[string]bool{"ops/s": true}
	for _, u := range benchUnits {
		known[u] = true
	}
	var out []string
	for u := range m {
		if !known[u] {
			out = append(out, u)
		}
	}
	sort.Strings(out)
	return out
}

// scenarioPackage returns the import path of the package that defines s's
// first variant, which is the pkg line `go test -bench` writes for the
// scenario's own benchmark; "perflab/<name>" if it cannot be told.
func scenarioPackage(s *perflab.Scenario) string {
	if len(s.Variants) > 0 && s.Variants[0].New != nil {
		if fn := runtime.FuncForPC(reflect.ValueOf(s.Variants[0].New).Pointer()); fn != nil {
			name := fn.Name() // e.g. github.com/perflab/perflab/scenarios/ciphercache.newCached.func1
			slash := strings.LastIndex(name, "/")
			if dot := strings.Index(name[slash+1:], "."); dot >= 0 {
				return name[:slash+1+dot]
			}
		}
	}
	return "perflab/" + s.Name
}
