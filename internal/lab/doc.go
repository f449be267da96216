// Package lab holds perflab's use cases, what the CLI and the web call,
// between their flags or requests and the engines (runner, wallclock,
// compare, store, pyroscope):
//
//   - PlanMeasure checks a `perflab run` request and expands each
//     scenario's matrix once; MeasurePlan.Measure measures one scenario
//     of it, commits the run whatever happens (an interrupted run is
//     stored, with a note saying by what and where), pushes it if asked,
//     and reports through MeasureEvents for the CLI to print.
//   - PlanBench measures and profiles a package's existing `go test`
//     benchmarks as a perflab run.
//   - CompareRefs and CompareVariants build the comparison `perflab
//     compare` prints and the web's compare pages render (run-vs-run,
//     base variant and case-vs-case alike); Measure fills in its metrics;
//     JudgeGate is compare --fail-on's verdict on it, with every reason.
//   - PlanFlame reads the profiles `perflab flame` draws (files, Go
//     execution traces, stored cases, Pyroscope) and settles their
//     classification; Flame.Tree and Flame.WriteFolded draw them.
//   - ImportProfile stores a profile as a run of its own (the web's
//     saved uploads).
//   - Soak runs a scenario's cases round-robin under the continuous
//     package's profiler, each case through internal/live.
//   - PlanPush checks a push request, its labels as Soak checks them;
//     Pusher.Push sends a stored run's profiles to Pyroscope (perflab
//     push, and run --push through Measure).
package lab
