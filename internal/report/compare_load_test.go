package report

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/store"
)

// TestLoadDiffers: the machine-load line is given when the rounds' peak
// load or steal differ enough to explain a difference in times, not
// whenever their summaries differ.
func TestLoadDiffers(t *testing.T) {
	run := func(steal float64, loads ...float64) *store.Run {
		r := &store.Run{Complete: true}
		r.Env.NumCPU = 2
		for _, l := range loads {
			r.Rounds = append(r.Rounds, store.Round{Load1: l, Steal: steal})
		}
		return r
	}
	for _, tt := range []struct {
		name string
		a, b *store.Run
		want bool
	}{
		{"the same machine, the same work", run(0, 0.8, 1.1), run(0, 1.0, 1.1), false},
		{"another program beside one", run(0, 1.0, 1.1), run(0, 1.9, 2.1), true},
		{"half a CPU more", run(0, 1.0), run(0, 1.5), true},
		{"stolen", run(0, 1.0), run(0.03, 1.0), true},
		{"a little stolen", run(0, 1.0), run(0.01, 1.0), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := false
			for _, w := range EnvWarnings(tt.a, tt.b) {
				got = got || strings.HasPrefix(w, "machine load: ")
			}
			if got != tt.want {
				t.Errorf("machine load line %v, want %v (%v)", got, tt.want, EnvWarnings(tt.a, tt.b))
			}
		})
	}
}
