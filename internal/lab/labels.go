package lab

import (
	"fmt"
	"strings"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/pyroscope"
)

// parseLabels parses --label flags (name=value) for the profiles of service
// and checks them before any work, as push, soak and the continuous
// package would refuse them later: the names made valid as the server
// wants them (ci-job is sent as ci_job, as every push and soak always
// has), none that perflab or the server sets on every profile itself,
// within the server's default limits. A clash with one run's parameter
// names is found later, by pyroscope.UserLabels, once the run is known.
func parseLabels(flags []string, service string) (map[string]string, error) {
	extra := map[string]string{}
	for _, l := range flags {
		name, value, ok := strings.Cut(l, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("--label %q: want name=value", l)
		}
		extra[name] = value
	}
	// The labels perflab puts on every profile of every run, whatever its
	// cases: those of a case with threads, of a run with a commit (values
	// set, for CaseLabels leaves out the empty ones; only names are used).
	probe := &model.Run{ID: "r", Scenario: "s", Env: model.Env{GOOS: "o", GOARCH: "a", Commit: "c"}}
	every := pyroscope.CaseLabels(probe, &model.Case{Variant: "v", Threads: 1})
	for k := range extra {
		if n := pyroscope.LabelName(k); hasKey(every, n) {
			return nil, fmt.Errorf("label %q: perflab labels every profile with %s itself", k, n)
		}
	}
	// The rest of the names' checks, on a run with no cases: names made
	// valid, none twice, none the server sets.
	out, err := pyroscope.UserLabels(&model.Run{}, extra)
	if err != nil {
		return nil, err
	}
	if service == "" {
		service = pyroscope.DefaultServiceName
	}
	if err := pyroscope.DefaultLimits.CheckLabels(service, out); err != nil {
		return nil, err
	}
	return out, nil
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}
