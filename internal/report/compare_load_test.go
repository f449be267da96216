package report

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/model"
)

// TestLoadDiffers: the machine-load line is given when the rounds' peak
// load or steal differ enough to explain a difference in times, not
// whenever their summaries differ.
func TestLoadDiffers(t *testing.T) {
	run := func(steal float64, loads ...float64) *model.Run {
		r := &model.Run{Complete: true}
		r.Env.NumCPU = 2
		for _, l := range loads {
			r.Rounds = append(r.Rounds, model.Round{Load1: l, Steal: steal})
		}
		return r
	}
	others := func(o float64) *model.Run {
		r := run(0, 1.0)
		r.Rounds[0].Others = &o
		return r
	}
	for _, tt := range []struct {
		name string
		a, b *model.Run
		want bool
	}{
		{"the same machine, the same work", run(0, 0.8, 1.1), run(0, 1.0, 1.1), false},
		{"another program beside one", run(0, 1.0, 1.1), run(0, 1.9, 2.1), true},
		{"half a CPU more", run(0, 1.0), run(0, 1.5), true},
		{"stolen", run(0, 1.0), run(0.03, 1.0), true},
		{"a little stolen", run(0, 1.0), run(0.01, 1.0), false},
		{"another program, the load average not yet up", others(0), others(0.9), true},
		{"a little of another program", others(0.05), others(0.2), false},
		{"a run from before others were recorded", run(0, 1.0), others(0.9), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := false
			for _, w := range EnvWarnings(tt.a, tt.b) {
				got = got || w.Kind == KindLoadDiffers && strings.HasPrefix(w.Message, "machine load: ")
			}
			if got != tt.want {
				t.Errorf("machine load line %v, want %v (%v)", got, tt.want, EnvWarnings(tt.a, tt.b))
			}
		})
	}
}

// TestMachine: the summary names other programs' CPUs when there were
// any, and a run whose rounds had half a CPU or more of them is warned of,
// as is one with steal.
func TestMachine(t *testing.T) {
	run := func(steal, others float64) *model.Run {
		r := &model.Run{ID: "r1", Complete: true}
		r.Env.NumCPU = 2
		half := others / 2
		r.Rounds = []model.Round{{Load1: 1.0, Steal: steal, Others: &half}, {Load1: 1.2, Steal: steal}, {Load1: 1.1, Steal: steal, Others: &others}}
		return r
	}
	for _, tt := range []struct {
		name          string
		run           *model.Run
		summary       string
		warns         []string
		contentionMsg bool
	}{
		{"quiet", run(0, 0.02), "load 1.0–1.2 on 2 CPUs (perflab's workers included), steal up to 0%", nil, false},
		{"a little else", run(0, 0.3), "load 1.0–1.2 on 2 CPUs (perflab's workers included), steal up to 0%, other programs up to 0.3 CPUs", nil, false},
		{"a spinning program", run(0, 0.92), "load 1.0–1.2 on 2 CPUs (perflab's workers included), steal up to 0%, other programs up to 0.9 CPUs", []string{"other programs or the kernel used up to 0.9 of 2 CPUs"}, true},
		{"stolen and contended", run(0.08, 1.3), "load 1.0–1.2 on 2 CPUs (perflab's workers included), steal up to 8%, other programs up to 1.3 CPUs", []string{"the hypervisor stole up to 8%", "other programs or the kernel used up to 1.3 of 2 CPUs"}, true},
		{"no rounds", &model.Run{}, "", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			summary, ws := Machine(tt.run)
			var warns []string
			for _, w := range ws {
				warns = append(warns, w.Message)
			}
			if summary != tt.summary {
				t.Errorf("summary %q, want %q", summary, tt.summary)
			}
			if len(warns) != len(tt.warns) {
				t.Fatalf("warnings %q, want ones starting %q", warns, tt.warns)
			}
			for i, w := range warns {
				if !strings.HasPrefix(w, tt.warns[i]) {
					t.Errorf("warning %q, want one starting %q", w, tt.warns[i])
				}
			}
			// A comparison of the run with itself names it once.
			cw := ContentionWarnings(tt.run, tt.run)
			if got := len(cw) == 1 && cw[0].Kind == KindContention && strings.HasPrefix(cw[0].Message, "run r1: other programs or the kernel used"); got != tt.contentionMsg || len(cw) > 1 {
				t.Errorf("ContentionWarnings = %q, want one: %v", cw, tt.contentionMsg)
			}
		})
	}
}
