package textsafe

import "unicode/utf8"

// Clip shortens s to at most n bytes, on a rune boundary, marking the cut
// with "…": for quoting what a person or a file supplied, which may be
// long, inside a message.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
