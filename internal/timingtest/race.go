//go:build race

package timingtest

const raceEnabled = true
