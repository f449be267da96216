package web

import (
	"sort"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/profiles"
)

// categoryColor returns the fill colour of a category: the palette of
// package profiles, so charts, tables and flame graphs agree.
func categoryColor(c string) string { return profiles.Category(c).Color() }

// categoryOrder returns the categories in set, known ones in perflab's
// display order first, unknown ones (from user rules) after, sorted.
func categoryOrder(set map[string]bool) []string {
	var out, rest []string
	for _, c := range profiles.Categories {
		if set[string(c)] {
			out = append(out, string(c))
		}
	}
	for c := range set {
		if !profiles.Category(c).Valid() {
			rest = append(rest, c)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// rulesFor returns the classification rules for a run of scenario: the
// built-in rules plus the scenario's work patterns when the scenario is
// compiled into this binary. Uploads and unknown scenarios get the
// built-in rules, where nothing is work.
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
