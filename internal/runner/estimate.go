package runner

import (
	"slices"
	"time"
)

// The costs Estimate adds to the time the options ask for, measured on the
// 2-core VM in make run (cipher-cache, 24 cases, quiet, Go 1.26): what
// Execute spent in each phase over what was asked of it.
const (
	// calibrateReps is calibration's cost in repetitions: live.Calibrate
	// ends on a run of about 1.2 repetitions after short ones (0.28 s a
	// case at --time 200ms).
	calibrateReps = 1.4
	// recalRepLen is the first re-timing repetition's length in
	// repetitions: it runs the count Calibrate found, aimed 20% past the
	// target (the next are rescaled to it; see recalibrate).
	recalRepLen = 1.2
	// repOverhead is each timed repetition's cost outside its clock: the
	// two collections and the counters read around it (204.9 ms a
	// repetition of 199.7 ms).
	repOverhead = 5 * time.Millisecond
	// traceSetup is a traced run's cost outside its run besides reading
	// the trace: the collection and GC pacing before it, stopping the
	// tracer and the context-switch records after (13 ms a slice).
	traceSetup = 13 * time.Millisecond
	// traceRead is the time reading a trace into a wall-clock result
	// takes per second traced (wallclock.FromTrace: 11 ms for a 200 ms
	// slice).
	traceRead = 0.055
	// extraSlices is the extra traced slices a case gets beyond the
	// even spread, where more samples bring its budget's widest share's ±
	// under the mark (extraSlice): 13 to 27 in seven runs of the 24
	// cases, 18 on average.
	extraSlices = 0.75
	// contentionCost is how much longer the mutex and block window runs
	// than asked, under those profilers (0.56 s for 0.5 s).
	contentionCost = 1.12
	// saveCase is the profiling pass's work besides its windows, per
	// case: merging the slices, budgets, flame graph, saving (11 ms).
	saveCase = 11 * time.Millisecond
)

// Estimate is how long Execute should take to measure cases cases with
// these options (zero fields as Defaults fills them), on a quiet machine
// like the 2-core VM the costs above were measured on, for a scenario whose
// operations are short beside --time: setup (calibration and the warm-up),
// the timed rounds, the traced slices with the reading of their traces,
// then the profiling pass. Rounds --until adds are not foreseen.
func (o Options) Estimate(cases int) time.Duration {
	o.Defaults()
	rep := o.Time
	reps := func(n float64) time.Duration { return time.Duration(n * float64(rep)) }
	traced := func(d time.Duration) time.Duration {
		return d + traceSetup + time.Duration(traceRead*float64(d))
	}
	// Calibration, then repetitions until Warmup has passed and three
	// re-timed the count (recalibrate).
	per := max(o.Warmup, reps(calibrateReps+recalRepLen+recalReps-1))
	per += time.Duration(o.Count) * (rep + repOverhead)
	wall := slices.Contains(o.Profile, "wall")
	if o.sliced() {
		n := float64(o.sliceCount())
		if wall {
			n += extraSlices
		}
		per += time.Duration(n * float64(traced(max(rep, o.ProfileTime/time.Duration(o.sliceCount())))))
	} else if wall || slices.Contains(o.Profile, "cpu") {
		per += traced(o.ProfileTime)
	}
	if slices.Contains(o.Profile, "fgprof") {
		// Repetitions until the window has passed overrun it by half
		// of one on average.
		per += o.ProfileTime + rep/2
	}
	if slices.Contains(o.Profile, "mutex") || slices.Contains(o.Profile, "block") {
		per += time.Duration(contentionCost * float64(o.ProfileTime/2))
	}
	if len(o.Profile) > 0 {
		per += saveCase
	}
	return time.Duration(cases) * per
}
