package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/perflab/perflab/internal/lab"
	"github.com/perflab/perflab/internal/report"
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
// when it passes (or refuses an unusable comparison, which compareRun
// says whatever the flags), exit 1 when a row regressed (whatever else),
// exit 3 when something could not be judged. Either way it lists why.
func gateError(g *lab.Gate) error {
	if r := g.Refusal; r != nil {
		switch r.Kind {
		case lab.RefusedIncomplete:
			return &ExitError{Code: exitCannotJudge, Err: errors.New("cannot gate on an incomplete run: " + strings.Join(r.Details, "; "))}
		case lab.RefusedLatest:
			return &ExitError{Code: exitCannotJudge, Err: errors.New("cannot gate on latest: " + strings.Join(r.Details, "; "))}
		}
		// Unusable, which compare says itself, and any kind added later:
		// a gate that judged nothing does not pass (it fails closed).
		return &ExitError{Code: exitCannotJudge, Err: fmt.Errorf("cannot gate (%s): %s", r.Kind, strings.Join(r.Details, "; "))}
	}
	if g.Verdict == lab.GatePass {
		return nil
	}
	var b strings.Builder
	code := gateExit(g.Verdict)
	if len(g.Regressions) > 0 {
		b.WriteString("a compared metric regressed beyond the threshold:")
		for i, r := range g.Regressions {
			if i == maxGateLines {
				fmt.Fprintf(&b, "\n  … and %d more", len(g.Regressions)-i)
				break
			}
			// As the table says it: time/op, not run.json's ns/op, and
			// a rise from nothing as "+64.0 (from 0)", not "+Inf%".
			fmt.Fprintf(&b, "\n  %s %s %s", r.Label, report.MetricName(r.Unit), report.ChangeText(r))
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

// gateExits are the exit codes of the gate's verdicts.
var gateExits = map[lab.GateVerdict]int{lab.GatePass: exitOK, lab.GateRegression: exitFailed, lab.GateCannotJudge: exitCannotJudge}

// gateExit is verdict's exit code; a verdict it does not know (one added
// to lab later) cannot pass.
func gateExit(v lab.GateVerdict) int {
	if code, ok := gateExits[v]; ok {
		return code
	}
	return exitCannotJudge
}

// gateMeanings say compare --fail-on's exit codes in its JSON's gate.
var gateMeanings = map[int]string{
	exitOK:          "pass: nothing compared regressed beyond the threshold, and everything was judged",
	exitFailed:      "a compared metric regressed beyond the threshold",
	exitCannotJudge: "the gate cannot judge something it compares, so it does not pass (fix or rerun what the reasons name)",
}

// gateReport is gate g as compare --json gives it: the verdict and exit
// code gateError decides, with every reason, not the first few.
func gateReport(g *lab.Gate) *report.Gate {
	code := gateExit(g.Verdict)
	return &report.Gate{Verdict: string(g.Verdict), Exit: code, Meaning: gateMeanings[code], Reasons: g.Reasons()}
}
