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
//     compare` prints and the web's compare pages render (run-vs-run,
//     base variant and case-vs-case alike); Measure fills in its metrics.
//   - Soak runs a scenario's cases round-robin under the continuous
//     package's profiler, each case through internal/live.
//   - PlanPush checks a push request, its labels as Soak checks them;
//     Pusher.Push sends a stored run's profiles to Pyroscope (perflab
//     push, perflab run --push).
package lab
