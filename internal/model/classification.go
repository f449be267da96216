package model

import "github.com/perflab/perflab/profiles"

// Recording and restoring a run's classification inputs, in one place for
// every writer (perflab run) and reader (perflab flame, perflab serve).

// NewClassification returns what run.json records of a classification: the
// scenario's work patterns and the user's rules.
func NewClassification(work []string, user []profiles.Rule) *Classification {
	c := &Classification{Work: append([]string(nil), work...)}
	for _, r := range user {
		c.Rules = append(c.Rules, Rule{Category: string(r.Category), Pattern: r.Pattern, Fallback: r.Fallback})
	}
	return c
}

// UserRules checks c, which is untrusted input, and returns its user rules.
// It compiles them, and the work patterns, so that a bad one is refused
// here and never drawn half-applied.
func (c *Classification) UserRules() ([]profiles.Rule, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	user := make([]profiles.Rule, len(c.Rules))
	for i, r := range c.Rules {
		user[i] = profiles.Rule{Category: profiles.Category(r.Category), Pattern: r.Pattern, Fallback: r.Fallback}
	}
	if _, err := c.compile(user); err != nil {
		return nil, err
	}
	return user, nil
}

// Compile checks c and returns the rules it records, as the run's own
// binary had them: user rules, then work patterns, then the built-in rules.
func (c *Classification) Compile() (*profiles.Rules, error) {
	user, err := c.UserRules()
	if err != nil {
		return nil, err
	}
	return c.compile(user)
}

func (c *Classification) compile(user []profiles.Rule) (*profiles.Rules, error) {
	rules, err := profiles.DefaultRules().WithUser(user...)
	if err != nil {
		return nil, err
	}
	return rules.WithWork(c.Work...)
}
