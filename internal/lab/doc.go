// Package lab holds perflab's use cases, what the CLI and the web call:
// Bench measures and profiles a package's existing `go test` benchmarks
// as a perflab run.
package lab
