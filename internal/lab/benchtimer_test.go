package lab

import (
	"testing"
	"time"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/wallclock"
	"golang.org/x/exp/trace"
)

// TestLastLeaf: the runN testing reported is the last to end of those
// that enclose no other; a parent's encloses its sub-benchmark's.
func TestLastLeaf(t *testing.T) {
	for _, tt := range []struct {
		name string
		runs []runTimed
		want trace.GoID // 0: none
	}{
		{"none", nil, 0},
		{"run1 then launch", []runTimed{{g: 1, from: 0, to: 10}, {g: 2, from: 20, to: 90}}, 2},
		{"parent around run1 and launch", []runTimed{{g: 1, from: 0, to: 100}, {g: 2, from: 5, to: 10}, {g: 3, from: 20, to: 90}}, 3},
		{"B.Loop: run1 only, in its parent", []runTimed{{g: 1, from: 0, to: 100}, {g: 2, from: 5, to: 95}}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := lastLeaf(tt.runs)
			if tt.want == 0 {
				if got != nil {
					t.Errorf("got g%d, want none", got.g)
				}
				return
			}
			if got == nil || got.g != tt.want {
				t.Errorf("got %+v, want g%d", got, tt.want)
			}
		})
	}
}

// TestCheckTimed: the windows that add up to what testing timed, the last
// ones where a ResetTimer with the timer stopped (no event) dropped the
// first, and a warning where none do.
func TestCheckTimed(t *testing.T) {
	ms := trace.Time(time.Millisecond)
	ws := []wallclock.Window{{From: 0, To: 100 * ms}, {From: 200 * ms, To: 210 * ms}, {From: 300 * ms, To: 310 * ms}}
	for _, tt := range []struct {
		name      string
		timed     time.Duration
		wantFirst int // index of the first window kept
		warn      bool
	}{
		{"all", 120 * time.Millisecond, 0, false},
		{"the last two", 20 * time.Millisecond, 1, false},
		{"the last one", 10 * time.Millisecond, 2, false},
		{"none add up", 60 * time.Millisecond, 0, true},
		{"more than all", 300 * time.Millisecond, 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, w := checkTimed(&runTimed{windows: ws}, 1000, float64(tt.timed.Nanoseconds())/1000)
			if len(got) != len(ws)-tt.wantFirst || got[0] != ws[tt.wantFirst] {
				t.Errorf("kept %v, want from window %d", got, tt.wantFirst)
			}
			if (w.Kind == model.WarnUntimed) != tt.warn {
				t.Errorf("warning %+v, want one: %v", w, tt.warn)
			}
		})
	}
}
