package store

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/units"
	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"
)

// benchUnits are written to results.txt in the unit table's order
// (internal/units); scenario metrics (hits/op, …) follow, sorted.
var benchUnits = units.Bench()

// ResultsFile is the benchfmt file of a run, next to run.json.
const ResultsFile = "results.txt"

// WriteResults writes every repetition of run as benchfmt text, one line
// per repetition, with the run's environment as file configuration, so
// `benchstat results.txt` (or two runs' files) works unchanged. Names
// follow `go test`: BenchmarkCipherCache/variant=mutex/keys=128/key=ssk/threads=4-2,
// where the -2 suffix is GOMAXPROCS. The benchmark name and package come
// from the run (Run.Benchmark, Run.Package), so any binary can rewrite it.
func WriteResults(w io.Writer, run *model.Run) error {
	bw := benchfmt.NewWriter(w)
	pkg := run.Package
	if pkg == "" {
		pkg = "perflab/" + run.Scenario
	}
	// Only the keys `go test` writes: benchstat splits tables by any file
	// key that differs, so a run id or commit here would keep two runs (or
	// a run and the scenario's go test -bench output) from being compared.
	// Those are in run.json.
	cfg := []benchfmt.Config{
		{Key: "goos", Value: []byte(run.Env.GOOS), File: true},
		{Key: "goarch", Value: []byte(run.Env.GOARCH), File: true},
		{Key: "pkg", Value: []byte(pkg), File: true},
		{Key: "cpu", Value: []byte(run.Env.CPU), File: true},
	}
	bench := run.Benchmark
	if bench == "" {
		// Runs stored before the name was recorded: the default name.
		bench = (&perflab.Scenario{Name: run.Scenario}).BenchName()
	}
	// benchfmt.Writer writes the "Benchmark" prefix itself.
	prefix := strings.TrimPrefix(bench, "Benchmark") + "/"
	for _, c := range run.Cases {
		if c.Status != model.StatusOK {
			continue
		}
		name := fmt.Sprintf("%s%s-%d", prefix, c.Name, run.Env.GOMAXPROCS)
		if c.Bench != "" {
			name = strings.TrimPrefix(c.Bench, "Benchmark")
		}
		for _, rep := range c.Reps {
			res := &benchfmt.Result{Config: cfg, Name: benchfmt.Name(name), Iters: int(rep.Ops)}
			for _, u := range append(benchUnits, extraUnits(rep.Metrics)...) {
				if v, ok := rep.Metrics[u]; ok {
					res.Values = append(res.Values, resultValue(v, u))
				}
			}
			if err := bw.Write(res); err != nil {
				return err
			}
		}
	}
	return nil
}

// resultValue is v in unit u as results.txt writes it: a zero in a
// scaled unit (cpu-ns/op, alloc-MB/s, a scenario's own) in the base unit
// benchfmt tidies it to, where it is the same figure.
//
// benchfmt's reader tidies a scaled unit by scaling the value (26 cpu-ns/op
// reads as 2.6e-8 cpu-sec/op) and takes a value the scaling left as it was
// for one not to tidy (x/perf's benchfmt, Reader.parseResult: tidyVal ==
// val): 0 keeps cpu-ns/op, and benchstat gave it a table of its own. A
// zero cpu/op is a repetition of perflab bench whose process's CPU fell
// under the baseline's (benchcpu.go; seen at -benchtime 20ms under load),
// a zero alloc MB/s a case that does not allocate. Left out, benchstat's
// median would have been of the other repetitions, not perflab's: the
// zero is in run.json and in perflab's median, the lowest of the
// repetitions whatever the clamped difference was, so it is written too.
func resultValue(v float64, u string) benchfmt.Value {
	if v == 0 {
		if _, tidy := benchunit.Tidy(1, u); tidy != u {
			u = tidy
		}
	}
	return benchfmt.Value{Value: v, Unit: u}
}

func extraUnits(m map[string]float64) []string {
	var out []string
	for u := range m {
		// A known unit results.txt leaves out (ops/s) stays out.
		if _, known := units.Lookup(u); !known {
			out = append(out, u)
		}
	}
	sort.Strings(out)
	return out
}

// CaseFile is the path, relative to the run directory, of a file of one
// case: CaseFile("variant=a/threads=1", "wall.pb.gz") is
// "cases/variant=a,threads=1/wall.pb.gz". Every writer and reader of case
// files names them through it.
func CaseFile(caseName, file string) string {
	return "cases/" + model.Slug(caseName) + "/" + file
}
