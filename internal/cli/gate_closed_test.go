package cli

import (
	"errors"
	"testing"

	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/lab"
)

// TestGateErrorFailsClosed: a gate that judged nothing, for any reason
// (one lab adds later included), or a verdict this CLI does not know,
// never exits 0.
func TestGateErrorFailsClosed(t *testing.T) {
	for _, tt := range []struct {
		name string
		g    *lab.Gate
		want int
	}{
		{"pass", &lab.Gate{Verdict: lab.GatePass}, exitOK},
		{"regression", &lab.Gate{Verdict: lab.GateRegression, Regressions: []compare.Result{{Label: "a", Unit: "sec/op", Change: 0.2}}}, exitFailed},
		{"unusable", &lab.Gate{Verdict: lab.GateCannotJudge, Refusal: &lab.Refusal{Kind: lab.RefusedUnusable, Details: []string{"no shared case"}}}, exitCannotJudge},
		{"incomplete", &lab.Gate{Verdict: lab.GateCannotJudge, Refusal: &lab.Refusal{Kind: lab.RefusedIncomplete}}, exitCannotJudge},
		{"a refusal from a later lab", &lab.Gate{Verdict: lab.GatePass, Refusal: &lab.Refusal{Kind: "gremlins"}}, exitCannotJudge},
		{"a verdict from a later lab", &lab.Gate{Verdict: "maybe"}, exitCannotJudge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := gateError(tt.g)
			got := exitOK
			var ee *ExitError
			if errors.As(err, &ee) {
				got = ee.Code
			} else if err != nil {
				t.Fatalf("gateError: %v, not an ExitError", err)
			}
			if got != tt.want {
				t.Errorf("exit %d (%v), want %d", got, err, tt.want)
			}
			if rep := gateReport(tt.g); tt.g.Refusal == nil && rep.Exit != tt.want {
				t.Errorf("--json gate says exit %d, want %d", rep.Exit, tt.want)
			}
		})
	}
}
