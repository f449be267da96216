//go:build !race

package truth

// raceEnabled is true under the race detector, whose instrumentation of
// every lock and channel operation changes the timings the suite checks.
const raceEnabled = false
