// Package timingtest gates the tests whose assertions hold only on a quiet
// machine: identical variants not told apart (TestAA), a profile's time
// against the wall clock, a loop reaching its repetitions within a
// deadline. Beside other work on two cores they fail for the machine's
// sake, not the code's (issue 24 measured five such failures in a plain
// go test ./... at a load average of 12). make test sets
// PERFLAB_TIMING_TESTS=1 and runs them, one package at a time; a plain go
// test ./... skips them and says so.
package timingtest

import (
	"os"
	"testing"
)

// Env is the variable that turns the timing-sensitive tests on.
const Env = "PERFLAB_TIMING_TESTS"

// Require skips t unless the timing-sensitive tests are on.
func Require(t testing.TB) {
	t.Helper()
	if os.Getenv(Env) == "" {
		t.Skip("timing-sensitive: its figures hold on a quiet machine only; make test runs it (" + Env + "=1)")
	}
}

// Race reports whether the race detector is on: a test whose other checks
// hold under it leaves out only its figures that do not (make test checks
// those in its line without -race).
const Race = raceEnabled

// RequireNoRace is Require for a test whose figures do not hold under the
// race detector either; why says what it does to them. make test runs
// these without -race (its "timing without the race detector" line).
func RequireNoRace(t testing.TB, why string) {
	t.Helper()
	Require(t)
	if raceEnabled {
		t.Skip("timing-sensitive, and not under the race detector: " + why + "; make test runs it without -race")
	}
}
