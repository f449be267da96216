// Package lab holds perflab's use cases, what the CLI and the web call,
// between their flags or requests and the engines (runner, wallclock,
// compare, store):
//
//   - PlanMeasure checks a `perflab run` request and expands each
//     scenario's matrix once; MeasurePlan.Start stores the run and gives
//     the runner that measures exactly those cases.
//   - PlanBench measures and profiles a package's existing `go test`
//     benchmarks as a perflab run.
//   - CompareRefs and CompareVariants build the comparison `perflab
//     compare` prints and the web's run-compare page renders (the
//     case-vs-case page still builds its own); Measure fills in its
//     metrics.
//
// Soak and Push are still in internal/cli (issue 24 continues).
package lab
