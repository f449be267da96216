package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/store"
)

// resolve is st.Resolve for a command's reference, saying on stderr when
// "latest" passed by newer runs (see resolveNoted).
func resolve(io *IO, st *store.Store, ref string) (*store.Ref, error) {
	r, note, err := resolveNoted(io, st, ref)
	if note != "" {
		sayPassed(io, note)
	}
	return r, err
}

// sayPassed writes resolveNoted's note on stderr, in lines of 80 columns.
func sayPassed(io *IO, note string) {
	noteWrapped(io.Err, report.SafeText(note))
}

// resolveNoted is st.Resolve that also returns what resolve says: "" unless
// "latest" passed by newer runs. store.Load skips runs that measured
// nothing (every case failed, an interrupt before the first repetition),
// and List those it cannot read (a corrupt run.json) or that are partial;
// without a word `show` would print an older run as if it were the last
// one made, and a gate would pass on it. The note's hints name the
// command as io.Cmd says.
func resolveNoted(io *IO, st *store.Store, ref string) (*store.Ref, string, error) {
	r, err := st.Resolve(ref)
	if err != nil {
		return nil, "", err
	}
	var note string
	if id, _, _ := strings.Cut(ref, "/"); (id == store.Latest || ref == "") && r.Store.Root == st.Root {
		note = skippedNote(io, st, r.Run)
	}
	return r, note, nil
}

// skippedNote names the runs newer than latest that latest passed by,
// and why, in one line; "" when there are none.
func skippedNote(io *IO, st *store.Store, latest *model.Run) string {
	runs, unlisted, err := st.List()
	if err != nil {
		return ""
	}
	var skipped, why []string
	var empty, partial, abandoned, unreadable int
	for _, r := range runs {
		if r.ID == latest.ID {
			break
		}
		if w := report.Unmeasured(r); w != "" {
			skipped, why = append(skipped, r.ID), append(why, w)
			empty++
		}
	}
	for _, e := range unlisted {
		var u *store.Unlisted
		if !errors.As(e, &u) || !newerID(u.ID, latest.ID) {
			continue
		}
		w := "it cannot be read (`" + io.cmd("show --list") + "` says why)"
		switch {
		case u.Abandoned:
			w = "it is partial, its process ended without saving it (`" + io.cmd("recover "+u.ID) + "` saves it)"
			abandoned++
		case u.Partial:
			w = "it is partial (being written now)"
			partial++
		default:
			unreadable++
		}
		skipped, why = append(skipped, u.ID), append(why, w)
	}
	// Empty runs stay until removed, and the note came with every
	// command: it says how to remove them (issue 25: with several, one
	// line named each, 211 columns).
	prune := ""
	switch {
	case empty > 0 && len(skipped) == 1:
		prune = "; " + io.cmd("runs prune --empty") + " removes it"
	case empty > 0:
		prune = "; " + io.cmd("runs prune --empty") + " removes the empty ones"
	}
	switch len(skipped) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("latest is %s, not newer %s: %s%s", latest.ID, skipped[0], why[0], prune)
	}
	var parts []string
	if empty > 0 {
		parts = append(parts, fmt.Sprintf("%d measured nothing", empty))
	}
	if partial > 0 {
		parts = append(parts, fmt.Sprintf("%d being written", partial))
	}
	if abandoned > 0 {
		parts = append(parts, fmt.Sprintf("%d left partial by a killed process (`%s` saves one)", abandoned, io.cmd("recover ID")))
	}
	if unreadable > 0 {
		parts = append(parts, fmt.Sprintf("%d unreadable (`%s` says why)", unreadable, io.cmd("show --list")))
	}
	return fmt.Sprintf("latest is %s, not %d newer runs: %s%s", latest.ID, len(skipped), strings.Join(parts, ", "), prune)
}

// newerID says run a may have started after run b, by the time stamp
// both ids begin with (store.NewID: 20060102-150405-scenario): a later
// stamp, or the same second and another id (a run claimed in the same
// second gets a suffix, "-2"). An id without a stamp is not ordered: a
// directory named old-backup is no newer run.
func newerID(a, b string) bool {
	const layout = "20060102-150405"
	if len(a) < len(layout) || len(b) < len(layout) {
		return false
	}
	ta, errA := time.Parse(layout, a[:len(layout)])
	tb, errB := time.Parse(layout, b[:len(layout)])
	if errA != nil || errB != nil {
		return false
	}
	return ta.After(tb) || ta.Equal(tb) && a != b
}
