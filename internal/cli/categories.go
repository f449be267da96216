package cli

import (
	"fmt"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/profiles"
)

// classification is how a run's stacks are classified: the user's rules
// file, read once, then a scenario's work patterns, then the built-in Go
// rules.
type classification struct {
	base *profiles.Rules
}

// loadClassification reads the --rules file, if any.
func loadClassification(rulesFile string) (*classification, error) {
	base := profiles.DefaultRules()
	if rulesFile != "" {
		var err error
		if base, err = profiles.LoadRules(rulesFile); err != nil {
			return nil, fmt.Errorf("--rules: %w", err)
		}
	}
	return &classification{base: base}, nil
}

// forScenario returns the rules that classify s's stacks and what run.json
// records of them, so that another binary classifies the stored run the
// same way. It refuses what readers would refuse
// (store.Classification.Check), so every stored run reads back as made.
func (c *classification) forScenario(s *perflab.Scenario) (*profiles.Rules, *store.Classification, error) {
	rules, err := c.base.WithWork(s.Work...)
	if err != nil {
		return nil, nil, err
	}
	rec := store.NewClassification(s.Work, c.base.User())
	if err := rec.Check(); err != nil {
		return nil, nil, fmt.Errorf("a run records at most what it can be read back with: %w", err)
	}
	return rules, rec, nil
}
