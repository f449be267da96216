//go:build !race

package timingtest

const raceEnabled = false
