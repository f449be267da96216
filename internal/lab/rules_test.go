package lab

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/model"
)

// TestStoredRules: which classification a stored run is drawn with, and
// what the warning says, for each way a run can come.
func TestStoredRules(t *testing.T) {
	recorded := &model.Classification{Work: []string{`^crypto/`}}
	tooMany := &model.Classification{Work: make([]string, model.MaxClassificationRules+1)}
	for _, tt := range []struct {
		name, scenario string
		c              *model.Classification
		recorded       bool
		work           bool
		notInBinary    bool
		warning        string
	}{
		{"recorded", "my-own", recorded, true, false, false, ""},
		{"old run, scenario here", "cipher-cache", nil, false, true, false, ""},
		{"old run, scenario not here", "my-own", nil, false, false, true, "stored without its classification rules"},
		{"refused, scenario here", "cipher-cache", tooMany, false, true, false, "refused (257 work patterns"},
		{"refused, scenario not here", "my-own", tooMany, false, false, true, "the built-in rules only (my-own is not in this binary"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run := &model.Run{ID: "r1", Scenario: tt.scenario, Config: model.Config{Classification: tt.c}}
			rr := StoredRules(run)
			if (rr.Recorded != nil) != tt.recorded || (len(rr.Work) > 0) != tt.work || rr.NotInBinary != tt.notInBinary {
				t.Errorf("recorded %v, work %q, not in binary %v; want %v, %v, %v", rr.Recorded != nil, rr.Work, rr.NotInBinary, tt.recorded, tt.work, tt.notInBinary)
			}
			if tt.warning == "" && rr.Warning != "" || !strings.Contains(rr.Warning, tt.warning) {
				t.Errorf("warning %q, want one with %q", rr.Warning, tt.warning)
			}
		})
	}
}
