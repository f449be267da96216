package cli

import (
	"bytes"
	"fmt"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/profiles"
	"github.com/perflab/perflab/profiles/flame"
)

// classifierFor builds a scenario's classifier: user rules, then the
// scenario's work patterns, then the built-in Go rules.
type classifierFor func(s *perflab.Scenario) (*profiles.Rules, error)

// flameWriter renders a case's wall-clock flame graph SVG.
type flameWriter func(s *perflab.Scenario, run *store.Run, c *store.Case, wall []byte) ([]byte, error)

// categoriser returns the classifier and flame graph hooks of a run, with
// the user's rules file if any.
func categoriser(rulesFile string) (classifierFor, flameWriter, error) {
	base := profiles.DefaultRules()
	if rulesFile != "" {
		var err error
		if base, err = profiles.LoadRules(rulesFile); err != nil {
			return nil, nil, fmt.Errorf("--rules: %w", err)
		}
	}
	classify := func(s *perflab.Scenario) (*profiles.Rules, error) {
		return base.WithWork(s.Work...)
	}
	svg := func(s *perflab.Scenario, run *store.Run, c *store.Case, wall []byte) ([]byte, error) {
		r, err := base.WithWork(s.Work...)
		if err != nil {
			return nil, err
		}
		p, err := profiles.Read(bytes.NewReader(wall))
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		title := fmt.Sprintf("%s %s — wall clock, worker goroutines (run %s)", s.Name, c.Name, run.ID)
		if err := flame.WriteSVG(&buf, p, flame.Options{Title: title, SampleType: "wall", Rules: r}); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	return classify, svg, nil
}
