// Package docs holds perflab's documentation: the manual, the methods
// page, the measured history, the case studies and the security notes.
// Its test runs the examples of README.md and manual.md (as benchstat's
// doc test does for its package comment), so the documents cannot drift
// from the commands they describe. The developer commands of methods.md
// and history.md take minutes and are not run, but must select tests that
// exist (go test -list), and every test a document names must exist.
package docs
