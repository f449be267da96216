package report

import (
	"fmt"
	"github.com/perflab/perflab/internal/textsafe"
	"strings"
	"unicode/utf8"
)

// Safe returns s fit for a terminal: every control character (C0 and C1,
// DEL), every bidirectional override and every byte of invalid UTF-8 is
// written as a visible escape (\x1b, \u009b, \u202e, \xff), so that text
// from a run.json, a profile or a remote server cannot move the cursor,
// retitle the terminal or reorder what is shown (issue 14: an ESC sequence
// in a variant name retitled the terminal). Printable text is unchanged,
// and Safe(Safe(s)) == Safe(s).
func Safe(s string) string { return escape(s, false) }

// SafeText is Safe for multi-line text (an error with a stack, a note):
// newlines and tabs are kept, every other control character escaped.
func SafeText(s string) string { return escape(s, true) }

func escape(s string, keepLines bool) string {
	clean := true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unsafeRune(r, n, keepLines) {
			clean = false
			break
		}
		i += n
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafeRune(r, n, keepLines) && r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r, n, keepLines):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func unsafeRune(r rune, size int, keepLines bool) bool {
	switch {
	case r == utf8.RuneError && size == 1:
		return true // invalid UTF-8
	case r == '\n' || r == '\t':
		return !keepLines
	}
	return textsafe.Control(r)
}
