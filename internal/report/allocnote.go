package report

import (
	"fmt"

	"github.com/perflab/perflab/internal/model"
)

// disagreeFactor is how far apart (as a ratio) the change in allocation
// rate and the change in bytes per operation must be before allocNotes
// points it out. The two differ exactly by the change in ops/s, so 2 means
// "throughput halved or doubled": wall-clock ops/s on a shared machine can
// swing by 30% between rounds, and a lower bar flags mere noise.
const disagreeFactor = 2

// minNoteBytes is the B/op below which a variant counts as not allocating:
// a sync.Pool refilled after each repetition's GC shows as 0.001 B/op, and
// comparing rates of such crumbs says nothing.
const minNoteBytes = 1

// allocNotes compares each variant of one group (same parameters and
// threads) with the group's first variant that allocates — the scenario's
// original, by the convention of declaring it first — and returns a note
// for each variant whose allocation rate (alloc MB/s) and bytes per
// operation tell different stories.
//
// The rate is B/op × ops/s, so a faster variant allocates at a higher rate
// even when each operation allocates the same: in the cipher-stream review
// a bigger buffer made the rate jump while B/op grew only by three buffers.
// B/op is the cost of one operation; the rate is what the collector sees
// per second.
func allocNotes(group string, cases []*model.Case) []string {
	var base *model.Case
	var notes []string
	for _, c := range cases {
		if c.Status != model.StatusOK {
			continue
		}
		rate, bop, ops := c.Stats["alloc-MB/s"].Median, c.Stats["B/op"].Median, c.Stats["ops/s"].Median
		if rate <= 0 || bop < minNoteBytes || ops <= 0 {
			continue
		}
		if base == nil {
			base = c
			continue
		}
		r := rate / base.Stats["alloc-MB/s"].Median
		p := bop / base.Stats["B/op"].Median
		t := ops / base.Stats["ops/s"].Median
		if r/p < disagreeFactor && p/r < disagreeFactor {
			continue
		}
		notes = append(notes, fmt.Sprintf("%s: %s vs %s: alloc MB/s %s but B/op %s, because ops/s %s",
			group, c.Variant, base.Variant, Ratio(r), Ratio(p), Ratio(t)))
	}
	return notes
}
