package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/perflab/perflab/internal/compare"
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

// gateMeanings say compare --fail-on's exit codes in its JSON's gate.
var gateMeanings = map[int]string{
	exitOK:          "pass: nothing compared regressed beyond the threshold, and everything was judged",
	exitFailed:      "a compared metric regressed beyond the threshold",
	exitCannotJudge: "the gate cannot judge something it compares, so it does not pass (fix or rerun what the reasons name)",
}

// gateReport is gate g as compare --json gives it: the verdict and exit
// code gateError decides, with every reason, not the first few.
func gateReport(g compare.Gate) *report.Gate {
	code := exitOK
	switch {
	case len(g.Regressions) > 0:
		code = exitFailed
	case len(g.Problems) > 0:
		code = exitCannotJudge
	}
	rg := cannotGate(code)
	for _, r := range g.Regressions {
		rg.Reasons = append(rg.Reasons, report.GateReason{Kind: "regressed", Case: r.Label, Metric: r.Unit,
			Detail: fmt.Sprintf("%+.1f%% [%+.1f%%, %+.1f%%], beyond the threshold", 100*r.Change, 100*r.ChangeLo, 100*r.ChangeHi)})
	}
	for _, p := range g.Problems {
		d := p.Detail
		if p.Case == "" && p.Metric == "" {
			d = p.String() // the metric or thing it is about is in What only
		}
		rg.Reasons = append(rg.Reasons, report.GateReason{Kind: string(p.Kind), Case: p.Case, Metric: p.Metric, Detail: d})
	}
	return rg
}

// cannotGate is a gate report of exit code code, with the reasons
// given, for a comparison the gate refuses whole.
func cannotGate(code int, reasons ...report.GateReason) *report.Gate {
	verdict := map[int]string{exitOK: "pass", exitFailed: "regression", exitCannotJudge: "cannot judge"}[code]
	return &report.Gate{Verdict: verdict, Exit: code, Meaning: gateMeanings[code], Reasons: append([]report.GateReason{}, reasons...)}
}
