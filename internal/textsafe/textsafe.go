// Package textsafe says which characters a terminal acts on rather than
// shows, for the outputs that escape or replace them: report's Safe (a
// visible escape) and profiles' FoldedName ('_'); and how a message quotes
// a long one (Clip).
package textsafe

// Control reports whether r is a character that can move a terminal's
// cursor, retitle it or reorder what it shows: C0 controls (newline and tab
// included), DEL, C1 controls, and the bidirectional embeddings, overrides
// and isolates.
func Control(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
