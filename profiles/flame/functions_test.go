package flame

import (
	"testing"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/profiles"
)

// TestFunctions checks self and total per function against the samples,
// as the web UI's top-functions tables count them: self by the leaf,
// total once per stack however often a function recurses.
func TestFunctions(t *testing.T) {
	rec := fake(map[string]int64{"main.a;main.rec;main.rec;main.rec;main.leaf": 5, "main.a;main.rec": 3, "main.b;main.leaf": 2})
	for name, p := range map[string]*profile.Profile{"small": fake(small), "recursive": rec, "generated": genProfile(2000, 4)} {
		t.Run(name, func(t *testing.T) {
			self, total := map[string]int64{}, map[string]int64{}
			for _, s := range p.Sample {
				v := s.Value[len(s.Value)-1]
				var names []string
				for _, loc := range s.Location {
					names = append(names, profiles.FrameNames(loc)...)
				}
				self[names[0]] += v
				seen := map[string]bool{}
				for _, n := range names {
					if !seen[n] {
						seen[n] = true
						total[n] += v
					}
				}
			}
			tr, err := Build(p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			fs := tr.Functions()
			if len(fs) != len(total) {
				t.Errorf("%d functions, want %d", len(fs), len(total))
			}
			for _, f := range fs {
				if f.Self != self[f.Name] || f.Total != total[f.Name] {
					t.Errorf("%s: self %d total %d, want %d %d", f.Name, f.Self, f.Total, self[f.Name], total[f.Name])
				}
			}
		})
	}
	tr, _ := Build(fake(small), smallOpts(t))
	for _, f := range tr.Functions() {
		if f.Name == "internal/sync.runtime_SemacquireMutex" && f.Category != profiles.Lock {
			t.Errorf("%s is %s, want lock", f.Name, f.Category)
		}
	}
	by, _ := profiles.Breakdown(fake(small), 1, smallOpts(t).Rules)
	for c, v := range tr.ByCategory() {
		if by[c] != v {
			t.Errorf("%s: %d, Breakdown %d", c, v, by[c])
		}
	}
}
