package lab

import (
	"fmt"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/textsafe"
)

// RunRules is which classification draws a stored run's frames, for
// perflab flame and the web's pages alike (one decision, issue 24).
type RunRules struct {
	// Recorded is the classification run.json records, checked against
	// its bounds (model.Classification.Check), still to be compiled:
	// the web compiles it under its memory budget. Nil when this
	// binary's patterns are used instead.
	Recorded *model.Classification
	// Work are this binary's work patterns for the run's scenario, when
	// Recorded is nil (none when the binary does not have it).
	Work []string
	// Warning says, in one sentence without a final stop, why the
	// recorded classification is not used or why nothing is work; ""
	// when neither. Each surface adds what its reader can do about it.
	Warning string
	// NotInBinary is set when the run's scenario is not in this binary,
	// which has no work patterns to give it instead.
	NotInBinary bool
}

// StoredRules decides how run's frames are classified: by the
// classification recorded in its run.json, so that a run made by another
// binary (a user's own, with its own scenario) is drawn as it was
// classified; for a run stored before classifications were recorded, or
// whose recorded one is refused (a tampered run.json, patterns too large
// compiled, a category this version does not know), by this binary's work
// patterns for its scenario, if it has it.
func StoredRules(run *model.Run) RunRules {
	c := run.Config.Classification
	if c == nil {
		rr := RunRules{}
		if s, err := perflab.Lookup(run.Scenario); err == nil {
			rr.Work = s.Work
		} else {
			rr.NotInBinary = true
			rr.Warning = "run " + run.ID + " was stored without its classification rules (by a perflab before they were recorded), and " +
				run.Scenario + " is not in this binary: nothing is work"
		}
		return rr
	}
	if err := c.Check(); err != nil {
		return RefusedRules(run, err)
	}
	return RunRules{Recorded: c}
}

// RefusedRules is StoredRules for a run whose recorded classification was
// refused with err, when checked or when compiled.
func RefusedRules(run *model.Run, err error) RunRules {
	rr := RunRules{NotInBinary: true}
	instead := "the built-in rules only (" + run.Scenario + " is not in this binary, so nothing is work)"
	if s, lerr := perflab.Lookup(run.Scenario); lerr == nil {
		rr.Work, rr.NotInBinary = s.Work, false
		instead = "this binary's work patterns for " + run.Scenario
	}
	rr.Warning = fmt.Sprintf("run %s: the classification recorded in run.json is refused (%s); frames are classified with %s",
		run.ID, textsafe.Clip(err.Error(), 300), instead)
	return rr
}
