// Package docs holds perflab's documentation: the manual, the methods
// page, the measured history, the case studies and the security notes.
// Its test runs the examples of README.md and manual.md (as benchstat's
// doc test does for its package comment), so the documents cannot drift
// from the commands they describe.
package docs
