package runner

import (
	"testing"
	"time"
)

func TestEstimate(t *testing.T) {
	ms := time.Millisecond
	msf := func(v float64) time.Duration { return time.Duration(v * float64(ms)) }
	// At the defaults, per case: calibration (1.4 repetitions) and three
	// re-timing ones of 1.2, 1 and 1 (4.6 × 200 ms, above the 300 ms
	// warm-up); ten
	// rounds of 205 ms; six traced slices and 0.75 extra of 200 ms, each
	// 13 ms set up and 11 ms read (224 ms); the mutex and block window,
	// 1.12 × 500 ms; 11 ms of saving.
	const setup, rounds, save = 920, 2050, 11
	for _, tt := range []struct {
		name  string
		opts  Options
		cases int
		want  time.Duration
	}{
		{"defaults", Options{}, 24, 24 * (setup + rounds + 6.75*224 + 560 + save) * ms},
		{"one case", Options{}, 1, (setup + rounds + 6.75*224 + 560 + save) * ms},
		{"no profiles", Options{Profile: []string{}}, 24, 24 * (setup + rounds) * ms},
		{"cpu only: no extra slices", Options{Profile: []string{"cpu"}}, 2, 2 * (setup + rounds + 6*224 + save) * ms},
		// The window: 1 s traced, 13 ms set up, 55 ms read.
		{"trace window", Options{Trace: TraceWindow}, 3, 3 * (setup + rounds + 1068 + 560 + save) * ms},
		// A long warm-up replaces the setup's 1 s.
		{"warmup 5s", Options{Warmup: 5 * time.Second}, 1, (5000 + rounds + 6.75*224 + 560 + save) * ms},
		// --profile-time 3s: ten slices of 300 ms (329.5 ms each with
		// their costs) and a 1.5 s mutex and block window.
		{"profile-time 3s", Options{ProfileTime: 3 * time.Second}, 1, msf(setup + rounds + 10.75*329.5 + 1.12*1500 + save)},
		// fgprof's window of 1 s overruns by half a repetition.
		{"fgprof", Options{Profile: []string{"wall", "fgprof"}}, 1, (setup + rounds + 6.75*224 + 1100 + save) * ms},
		// Three rounds: three slices, each as long as a third of 1 s.
		{"count 3", Options{Count: 3, Profile: []string{"wall"}}, 1, msf(setup + 3*205 + 3.75*(1000.0/3+13+0.055*1000/3) + save)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.opts.Estimate(tt.cases)
			if d := got - tt.want; d < -time.Microsecond || d > time.Microsecond {
				t.Errorf("Estimate(%d) = %v, want %v", tt.cases, got, tt.want)
			}
		})
	}
}
