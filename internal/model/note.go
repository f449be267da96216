package model

import "strings"

// InterruptedNote is the note of a run a signal or a deadline ended: short
// enough for a run's header line, "interrupted by SIGINT in round 3/10",
// "interrupted by SIGTERM before any case was measured". by says by what
// ("by SIGINT"; "" when unknown), where at what point ("in round 3/10";
// "" when unknown).
func InterruptedNote(by, where string) string {
	parts := []string{"interrupted"}
	for _, p := range []string{by, where} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " ")
}

// legacyInterrupted begins the note of runs interrupted before notes were
// short: the message printed at Ctrl-C, "interrupted: the rounds measured
// so far are saved and the run is marked incomplete (by SIGINT)",
// possibly followed by "(before any case was measured: the run is saved,
// empty)".
const legacyInterrupted = "interrupted: the rounds measured so far are saved and the run is marked incomplete"

// Why is the run's note as one short line, for headers, listings and
// warnings: its first line, and for runs stored with the long
// interrupted note, the short form InterruptedNote gives now, so that old
// runs read as new ones do.
func (r *Run) Why() string {
	note, _, _ := strings.Cut(r.Note, "\n")
	rest, ok := strings.CutPrefix(note, legacyInterrupted)
	if !ok {
		return note
	}
	var by, where string
	for rest = strings.TrimSpace(rest); strings.HasPrefix(rest, "("); rest = strings.TrimSpace(rest) {
		end := strings.IndexByte(rest, ')')
		if end < 0 {
			break
		}
		part := rest[1:end]
		rest = rest[end+1:]
		switch {
		case strings.HasPrefix(part, "by "):
			by = part
		case strings.HasPrefix(part, "before any case was measured"):
			where = "before any case was measured"
		}
	}
	return InterruptedNote(by, where)
}
