// Package tagged has benchmarks only in builds with the perflabtag tag or
// the race detector: perflab bench's -tags and -race must reach go list
// and go test -c.
package tagged
