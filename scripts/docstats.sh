#!/bin/sh
# docstats.sh FILE...: lines, and the average words per sentence of the
# prose (issue 25 holds the README to ~150 lines and ~20 words a sentence).
# Prose is every line outside fenced code blocks, tables, HTML comments and
# headings; a sentence ends at . ! or ? followed by a space or the end of a
# paragraph; `code spans` and [links](targets) count as one word each.
for f in "$@"; do
	awk -v file="$f" '
	/^```/ { code = !code; next }
	code { next }
	/^\|/ || /^<!--/ || /^#/ { flush(); next }
	/^[[:space:]]*$/ { flush(); next }
	{ sub(/^[[:space:]]*([-*]|[0-9]+\.)[[:space:]]+/, ""); para = para " " $0 }
	function flush(   t, n, i, s, w) {
		if (para == "") return
		t = para; para = ""
		gsub(/`[^`]*`/, "CODE", t)
		gsub(/\]\([^)]*\)/, "]", t)
		n = split(t, s, /[.!?]+( |$)/)
		for (i = 1; i <= n; i++) {
			w = split(s[i], ws, /[[:space:]]+/)
			# split leaves empty fields at the ends
			c = 0; for (j = 1; j <= w; j++) if (ws[j] != "") c++
			if (c > 0) { sentences++; words += c }
		}
	}
	END {
		flush()
		printf "%s: %d lines, %d sentences, %.1f words per sentence\n", file, NR, sentences, sentences ? words / sentences : 0
	}' "$f"
done
