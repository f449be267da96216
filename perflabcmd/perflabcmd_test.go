package perflabcmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/perflabcmd"
)

// A scenario from "another module": registered here, run through Main.
func init() {
	perflab.Register(&perflab.Scenario{
		Name: "external-sum", Doc: "a user's own scenario",
		Params: []perflab.Param{{Name: "n", Kind: perflab.IntParam, Default: []string{"64"}}},
		Variants: []perflab.Variant{{Name: "loop", New: func(p perflab.Params) (perflab.Case, error) {
			n := p.Int("n")
			return perflab.CaseFunc(func(int) perflab.Worker {
				s := 0
				return perflab.WorkerFunc(func(ops int) {
					for i := 0; i < ops; i++ {
						for j := 0; j < n; j++ {
							s += j
						}
					}
				})
			}), nil
		}}},
	})
}

func TestMainRunsAnExternalScenario(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs")
	code := perflabcmd.Main([]string{"run", "external-sum", "--count", "2", "--time", "2ms", "--warmup", "1ms", "--profile", "none", "-o", dir})
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || !strings.HasSuffix(entries[0].Name(), "external-sum") {
		t.Fatalf("store: %v %v", entries, err)
	}
	if code := perflabcmd.Main([]string{"run", "no-such-scenario"}); code != 2 {
		t.Errorf("unknown scenario: exit %d, want 2", code)
	}
}
