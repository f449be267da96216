package report

// Gate is what compare --fail-on made of a comparison, for its JSON
// output: a CI job reads why it failed from the same document as the
// figures, not from stderr (issue 26).
type Gate struct {
	// Verdict is "pass", "regression" (exit 1) or "cannot judge" (3).
	Verdict string `json:"verdict"`
	// Exit is the process's exit code; Meaning says it in words.
	Exit    int    `json:"exit"`
	Meaning string `json:"meaning"`
	// Reasons are every regressed row and everything the gate could not
	// judge, all of them (stderr lists the first few).
	Reasons []GateReason `json:"reasons"`
}

// GateReason is one reason a gate did not pass.
type GateReason struct {
	// Kind is "regressed" or why a case or metric could not be judged
	// (compare.ProblemKind: "failed", "missing", "duplicate", "no
	// repetitions", "too few repetitions", "not measured"), or
	// "unusable", "incomplete" or "latest" for the whole comparison.
	Kind string `json:"kind"`
	// Case and Metric name the row, case or metric, when there is one.
	Case   string `json:"case,omitempty"`
	Metric string `json:"metric,omitempty"`
	// Detail says what happened: the change and its interval for a
	// regression, what is wrong and what to do otherwise.
	Detail string `json:"detail"`
}
