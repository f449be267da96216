package web

import "sort"

// categoryNames is the order categories are listed in everywhere.
//
// TODO(issue 3): take the categories and their palette from package
// profiles (Category.Color) when it lands, so the web UI and the flame
// graphs cannot drift apart.
var categoryNames = []string{"work", "lock", "alloc", "gc", "sched", "other"}

var categoryColors = map[string]string{
	"work":  "#e8743b",
	"lock":  "#d62728",
	"alloc": "#9467bd",
	"gc":    "#2ca02c",
	"sched": "#1f77b4",
	"other": "#a0a0a0",
}

// categoryColor returns the fill colour of a category.
func categoryColor(c string) string {
	if col, ok := categoryColors[c]; ok {
		return col
	}
	return "#c8c8c8"
}

// categoryOrder returns the categories in set, known ones in their fixed
// order first.
func categoryOrder(set map[string]bool) []string {
	var out, rest []string
	for _, c := range categoryNames {
		if set[c] {
			out = append(out, c)
		}
	}
	for c := range set {
		if _, known := categoryColors[c]; !known {
			rest = append(rest, c)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}
