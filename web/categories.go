package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"unicode"
	"unicode/utf8"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/lab"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/profiles"
)

// categoryColor returns the fill colour of a category: the palette of
// package profiles, so charts, tables and flame graphs agree.
func categoryColor(c string) string { return profiles.Category(c).Color() }

// rulesFor returns the classification rules for a profile of scenario
// when nothing else is known of how it was made (an upload): the built-in
// rules plus the scenario's work patterns when the scenario is compiled
// into this binary. Uploads and unknown scenarios get the built-in rules,
// where nothing is work.
func rulesFor(scenario string) *profiles.Rules {
	rules := profiles.DefaultRules()
	if scenario == "" {
		return rules
	}
	sc, err := perflab.Lookup(scenario)
	if err != nil || len(sc.Work) == 0 {
		return rules
	}
	if withWork, err := rules.WithWork(sc.Work...); err == nil {
		return withWork
	}
	return rules
}

// runRules is how the frames of a stored run are classified.
type runRules struct {
	rules *profiles.Rules
	// key identifies rules, for the keys of caches of what is built with
	// them (caseProfile).
	key string
	// warning says why the classification recorded in run.json was not
	// used, if it was not.
	warning string
	// refused, in the cache of built trees only, is why compiling a
	// recorded classification failed.
	refused error
}

// rulesOfRun returns the classification rules of a stored run: those
// recorded in its run.json (the scenario's work patterns and the user's
// rules), so that a run made by another binary, such as a user's own with
// its own scenario, is classified as it was when it was made. A run stored
// before classifications were recorded gets this binary's registered work
// patterns for its scenario, as does a run whose recorded classification
// this binary refuses (a tampered run.json, patterns too large compiled,
// or a category this version does not know), with a warning that says so.
//
// Compiled recorded classifications are kept by content in the cache of
// built trees, each charged to the memory budget before it is compiled
// (profiles.CompiledBytes) for as long as it is kept: the patterns of a
// tampered run.json took ~800 MB compiled, and 32 of them were cached
// outside any budget (issue 26). The function returned ends the request's
// use of the rules; the error is the budget's (errBusy).
func (s *Server) rulesOfRun(ctx context.Context, run *model.Run) (*runRules, func(), error) {
	noop := func() {}
	choice := lab.StoredRules(run)
	c := choice.Recorded
	if c == nil {
		return registryRules(run, choice), noop, nil
	}
	patterns := slices.Clone(c.Work)
	for _, r := range c.Rules {
		patterns = append(patterns, r.Pattern)
	}
	// Check refused what is over model.MaxCompiledBytes compiled.
	cost := profiles.CompiledBytes(patterns...)
	// The fallback depends on the scenario, so it is part of the key.
	data, _ := json.Marshal(struct {
		Scenario string
		C        *model.Classification
	}{run.Scenario, c})
	sum := sha256.Sum256(data)
	key := "stored\x00" + hex.EncodeToString(sum[:])
	b, done, err := s.trees.get(ctx, key, func(ctx context.Context) (*built, *lease, error) {
		l, err := s.mem.acquire(ctx, cost)
		if err != nil {
			return nil, nil, err
		}
		rules, err := c.Compile()
		if err != nil {
			l.release()
			// Cached by content, for every run recording the same
			// classification: the warning, which names the run, is made
			// per request below.
			return &built{rules: &runRules{refused: err}}, nil, nil
		}
		// Kept for every profile of the run drawn while it is cached,
		// its cache of names' classes is charged to the same lease,
		// name by name (issue 26): it held every name of those profiles.
		rules.ChargeCache(l.tryGrow)
		return &built{rules: &runRules{rules: rules, key: key}}, l, nil
	})
	if err != nil {
		return nil, nil, err
	}
	if err := b.rules.refused; err != nil {
		return registryRules(run, lab.RefusedRules(run, err)), done, nil
	}
	return b.rules, done, nil
}

// registryRules are this binary's rules for run's scenario, with the
// warning lab.StoredRules gave for not using what run.json records.
func registryRules(run *model.Run, choice lab.RunRules) *runRules {
	rr := &runRules{rules: rulesFor(run.Scenario), key: "registry\x00" + run.Scenario}
	if choice.Warning != "" {
		rr.warning = upperFirst(choice.Warning) + "."
		if choice.NotInBinary {
			rr.warning += " Serve it with the binary that made it to see its work."
		}
	}
	return rr
}

// upperFirst starts a sentence of s.
func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}
