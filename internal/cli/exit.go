package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/perflab/perflab/internal/compare"
)

// The process exit codes, decided here and in exitCode only. A CI gate
// reads them: 1 must mean a regression (or another command's error), never
// a typo or a comparison it could not make.
const (
	exitOK = 0
	// exitFailed is an error, and compare --fail-on's regression.
	exitFailed = 1
	// exitUsage is a usage error, or a run or case that is not there.
	exitUsage = 2
	// exitCannotJudge: the comparison could not be made at all, or a gate
	// could not judge some case or metric (issue 26: it fails closed).
	exitCannotJudge = 3
	// exitInterrupted is SIGINT's (128+2); SIGTERM's is 128+15.
	exitInterrupted = 130
)

// maxGateLines bounds the reasons a gate's error lists: 30,000 missing
// cases are not 30,000 lines of a CI log.
const maxGateLines = 10

// gateError is what compare --fail-on regression returns for gate g: nil
// when it passes, exit 1 when a row regressed (whatever else), exit 3 when
// something could not be judged. Either way it lists why.
func gateError(g compare.Gate) error {
	if g.Pass() {
		return nil
	}
	var b strings.Builder
	code := exitCannotJudge
	if len(g.Regressions) > 0 {
		code = exitFailed
		b.WriteString("a compared metric regressed beyond the threshold:")
		for i, r := range g.Regressions {
			if i == maxGateLines {
				fmt.Fprintf(&b, "\n  … and %d more", len(g.Regressions)-i)
				break
			}
			fmt.Fprintf(&b, "\n  %s %s %+.1f%% [%+.1f%%, %+.1f%%]", r.Label, r.Unit, 100*r.Change, 100*r.ChangeLo, 100*r.ChangeHi)
		}
		if len(g.Problems) > 0 {
			b.WriteString("\nand ")
		}
	}
	if len(g.Problems) > 0 {
		fmt.Fprintf(&b, "the gate cannot judge %d thing(s), so it does not pass:", len(g.Problems))
		for i, p := range g.Problems {
			if i == maxGateLines {
				fmt.Fprintf(&b, "\n  … and %d more", len(g.Problems)-i)
				break
			}
			fmt.Fprintf(&b, "\n  %s (%s)", p, p.Kind)
		}
	}
	return &ExitError{Code: code, Err: errors.New(b.String())}
}
