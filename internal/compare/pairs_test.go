package compare

import (
	"slices"
	"testing"

	"github.com/perflab/perflab/internal/model"
)

func runOf(id string, names ...string) *model.Run {
	r := &model.Run{ID: id}
	for _, n := range names {
		r.Cases = append(r.Cases, model.Case{Name: n, Status: model.StatusOK})
	}
	return r
}

// TestPairRuns: pairs in the base's order, each name once; what only one
// side has, and names that occur twice on a side.
func TestPairRuns(t *testing.T) {
	a := runOf("A", "x", "y", "gone", "y")
	b := runOf("B", "new", "y", "x", "new")
	p := PairRuns(a, b, false)
	var labels []string
	for _, pr := range p.Pairs {
		labels = append(labels, pr.Label)
		if pr.A.Name != pr.B.Name || pr.Paired {
			t.Errorf("pair %+v", pr)
		}
	}
	if !slices.Equal(labels, []string{"x", "y"}) {
		t.Errorf("pairs %q, want x, y", labels)
	}
	if p.Pairs[1].A != &a.Cases[1] {
		t.Error("a duplicate name pairs its first case")
	}
	if !slices.Equal(p.OnlyA, []string{"gone"}) || !slices.Equal(p.OnlyB, []string{"new"}) {
		t.Errorf("only A %q, only B %q", p.OnlyA, p.OnlyB)
	}
	if want := []string{"case y of run A", "case new of run B"}; !slices.Equal(p.Duplicates, want) {
		t.Errorf("duplicates %q, want %q", p.Duplicates, want)
	}
	if len(p.Involved) != 8 {
		t.Errorf("%d cases involved, want 8", len(p.Involved))
	}
	if self := PairRuns(a, a, true); len(self.Involved) != 4 || len(self.Duplicates) != 1 {
		t.Errorf("a run with itself: %d involved, duplicates %q", len(self.Involved), self.Duplicates)
	}
}
