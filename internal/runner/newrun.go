package runner

import (
	"reflect"
	"runtime"
	"strings"
	"time"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/store"
)

// NewRun returns the run the runner will fill for s under opts: its id,
// start time, environment, configuration, parameter order and the names
// results.txt uses. args are the command line, recorded as given (the
// caller strips secrets); cl the classification inputs, if recorded.
func NewRun(s *perflab.Scenario, opts Options, args []string, cl *model.Classification) *model.Run {
	started := time.Now().UTC()
	run := &model.Run{
		ID:        store.NewID(started, s.Name),
		Scenario:  s.Name,
		Started:   started,
		Env:       Environment(),
		Benchmark: s.BenchName(),
		Package:   scenarioPackage(s),
		Config: model.Config{
			Args: args, Variants: opts.Selection.Variants, Params: opts.Selection.Params, Threads: opts.Selection.Threads,
			Count: opts.Count, Time: model.Duration(opts.Time), Warmup: model.Duration(opts.Warmup),
			Profile: opts.Profile, ProfileTime: model.Duration(opts.ProfileTime), Trace: opts.Trace, Seed: opts.Seed,
			Classification: cl,
		},
	}
	for _, p := range s.Params {
		run.ParamOrder = append(run.ParamOrder, p.Name)
	}
	return run
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
