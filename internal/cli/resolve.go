package cli

import (
	"fmt"
	"strings"

	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/store"
)

// resolve is st.Resolve for a command's reference, saying on stderr when
// "latest" passed by newer runs: store.Load skips runs that measured
// nothing (every case failed, an interrupt before the first repetition),
// and without a word `show` would print an older run as if it were the
// last one made.
func resolve(io *IO, st *store.Store, ref string) (*store.Ref, error) {
	r, err := st.Resolve(ref)
	if err != nil {
		return nil, err
	}
	if id, _, _ := strings.Cut(ref, "/"); (id == store.Latest || ref == "") && r.Store.Root == st.Root {
		if note := skippedNote(st, r.Run); note != "" {
			fmt.Fprintln(io.Err, "perflab:", report.SafeText(note))
		}
	}
	return r, nil
}

// skippedNote names the runs newer than latest that latest passed by,
// and why, in one line; "" when there are none.
func skippedNote(st *store.Store, latest *store.Run) string {
	runs, _, err := st.List()
	if err != nil {
		return ""
	}
	var skipped, why []string
	for _, r := range runs {
		if r.ID == latest.ID {
			break
		}
		if w := report.Unmeasured(r); w != "" {
			skipped, why = append(skipped, r.ID), append(why, w)
		}
	}
	switch len(skipped) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("latest is %s, not newer %s: %s", latest.ID, skipped[0], why[0])
	}
	for i := range skipped {
		skipped[i] += " (" + why[i] + ")"
	}
	return fmt.Sprintf("latest is %s, not %d newer runs that measured nothing: %s", latest.ID, len(skipped), strings.Join(skipped, ", "))
}
