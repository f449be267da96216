package store

// Round is what the machine was doing during one timed round: the noise a
// comparison must know about. The runner samples it once a round.
type Round struct {
	// Load1 is the one-minute load average when the round ended
	// (/proc/loadavg), perflab's own workers included.
	Load1 float64 `json:"load1"`
	// Steal is the share of CPU time the hypervisor gave to other guests
	// during the round (/proc/stat), 0 to 1.
	Steal float64 `json:"steal"`
	// Others is how many CPUs, on average over the round, the machine
	// spent on anything but perflab's process: other programs and the
	// kernel's own threads (/proc/stat's busy ticks less the process's
	// getrusage CPU). Runs before it was recorded read 0.
	Others float64 `json:"others,omitempty"`
}
