package model

// Round is what the machine was doing during one timed round: the noise a
// comparison must know about. The runner samples it once a round.
type Round struct {
	// Load1 is the one-minute load average when the round ended
	// (/proc/loadavg), perflab's own workers included.
	Load1 float64 `json:"load1"`
	// Steal is the share of CPU time the hypervisor gave to other guests
	// (/proc/stat), 0 to 1, over the same span as Others; 0 inside one.
	Steal float64 `json:"steal"`
	// Others is how many CPUs the machine spent on anything but perflab's
	// process (other programs, their children and the kernel's own threads:
	// /proc/stat's busy ticks less the process's getrusage CPU), on average
	// over a span of rounds that ends with this one and lasts at least
	// half a second: /proc/stat counts in 10 ms ticks, so a round of two
	// 10 ms cases alone reads up to 0.3 CPUs of tick noise. nil in the
	// rounds inside such a span, and in runs from before it was recorded.
	Others *float64 `json:"others,omitempty"`
}
