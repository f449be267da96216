// Package suggest finds what a mistyped name was meant to be: the "did
// you mean" of perflab's errors, for commands, scenarios, variants,
// parameters and their values, flags and profile kinds.
package suggest

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Closest returns the candidates typed is most likely a typo of, best
// first: those within a small edit distance (a transposition counts as
// one edit: kyes is one from keys), or that typed is the start of, or
// that differ only in case. It returns nil when none is close, or when
// typed is itself a candidate.
func Closest(typed string, candidates []string) []string {
	if typed == "" {
		return nil
	}
	lt := strings.ToLower(typed)
	best, bestD := []string(nil), 1<<30
	for _, c := range candidates {
		if c == typed {
			return nil
		}
		d := distance(lt, strings.ToLower(c))
		switch {
		case d <= limit(typed):
		case utf8.RuneCountInString(typed) >= 3 && strings.HasPrefix(strings.ToLower(c), lt):
			d = limit(typed) // a prefix is as good as the worst typo
		default:
			continue
		}
		switch {
		case d < bestD:
			best, bestD = []string{c}, d
		case d == bestD && !contains(best, c):
			best = append(best, c)
		}
	}
	return best
}

// limit is how many edits typed may be away from a candidate: one for a
// short name, where two would make most names of its length alike.
func limit(typed string) int {
	if utf8.RuneCountInString(typed) < 5 {
		return 1
	}
	return 2
}

// DidYouMean is Closest written for an error: "did you mean keys?", "did
// you mean mutex or rwmutex?"; "" when nothing is close.
func DidYouMean(typed string, candidates []string) string {
	c := Closest(typed, candidates)
	if len(c) == 0 {
		return ""
	}
	return "did you mean " + Or(c) + "?"
}

// UnknownScenario is the error for a scenario name none of names is:
// what it may be a typo of, and list, the command line that lists the
// scenarios ("perflab list"; "go run . list" in a module from perflab
// new, where a hint naming perflab names a command that is not there).
func UnknownScenario(name string, names []string, list string) error {
	if dym := DidYouMean(name, names); dym != "" {
		return fmt.Errorf("unknown scenario %q: %s (run `%s`)", name, dym, list)
	}
	return fmt.Errorf("unknown scenario %q (run `%s`; a scenario of your own needs a blank import of its package)", name, list)
}

// Or joins names as a sentence would: "a", "a or b", "a, b or c".
func Or(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// distance is the optimal string alignment distance between a and b, in
// runes: insertions, deletions, substitutions and transpositions of two
// neighbours each count one.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows: the transposition looks two back.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
