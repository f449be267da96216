package profiles

import "testing"

// TestFoldedName: the folded format's separators and every control
// character a terminal acts on become '_'; printable text, UTF-8 included,
// and other invalid bytes stay as they are.
func TestFoldedName(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"main.(*T).run", "main.(*T).run"},
		{"a;b", "a_b"},
		{"line\nbreak\r", "line_break_"},
		{"\x1b[31mred\x1b]0;title\x07", "_[31mred_]0_title_"},
		{"del\x7f", "del_"},
		{"c1 \u009b2J", "c1 _2J"},
		{"raw c1 \x9b2J", "raw c1 _2J"},
		{"bidi \u202eevil\u2066", "bidi _evil_"},
		{"é ŀ 世界", "é ŀ 世界"}, // ŀ is c5 80: a continuation byte 0x80, kept
		{"bad \xff\xfe", "bad \xff\xfe"},
		{"with spaces inside", "with spaces inside"},
	} {
		if got := FoldedName(tt.in); got != tt.want {
			t.Errorf("FoldedName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
