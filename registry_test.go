package perflab

import (
	"maps"
	"strings"
	"testing"
)

// scratchRegistry gives the test a copy of the registry and puts the
// package's back when it ends, without what the test registered:
// registering is once per process, and the tests register fixed names, so
// at go test -count=2 the second run's Register of "registry-test-good"
// panicked as a duplicate and failed the test.
func scratchRegistry(t *testing.T) {
	t.Helper()
	registryMu.Lock()
	saved := registry
	registry = maps.Clone(saved)
	registryMu.Unlock()
	t.Cleanup(func() {
		registryMu.Lock()
		registry = saved
		registryMu.Unlock()
	})
}

func TestRegisterPanicsOnProgrammerErrors(t *testing.T) {
	scratchRegistry(t)
	good := testScenario()
	good.Name = "registry-test-good"
	Register(good)
	tests := []struct {
		name string
		s    *Scenario
		msg  string
	}{
		{"nil", nil, "nil"},
		{"duplicate", good, "twice"},
		{"bad name", &Scenario{Name: "Bad Name", Variants: good.Variants}, "lower-case"},
		{"no variants", &Scenario{Name: "registry-test-empty"}, "no variants"},
		{"bad default", &Scenario{Name: "registry-test-default", Variants: good.Variants,
			Params: []Param{{Name: "n", Kind: IntParam, Default: []string{"many"}}}}, "default"},
		{"reserved param", &Scenario{Name: "registry-test-reserved", Variants: good.Variants,
			Params: []Param{{Name: "threads", Default: []string{"1"}}}}, "reserved"},
		{"bad work pattern", &Scenario{Name: "registry-test-work", Variants: good.Variants, Work: []string{"("}}, "work pattern"},
		{"range on a string", &Scenario{Name: "registry-test-range-kind", Variants: good.Variants,
			Params: []Param{{Name: "k", Default: []string{"a"}, Max: 3}}}, "not an IntParam"},
		{"min without max", &Scenario{Name: "registry-test-range-min", Variants: good.Variants,
			Params: []Param{{Name: "n", Kind: IntParam, Default: []string{"5"}, Min: 1}}}, "no Max"},
		{"min over max", &Scenario{Name: "registry-test-range-order", Variants: good.Variants,
			Params: []Param{{Name: "n", Kind: IntParam, Default: []string{"150"}, Min: 200, Max: 100}}}, "no range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(r.(string), tt.msg) {
					t.Errorf("panic %v, want one mentioning %q", r, tt.msg)
				}
			}()
			Register(tt.s)
		})
	}
}

func TestLookup(t *testing.T) {
	scratchRegistry(t)
	s := testScenario()
	s.Name = "registry-test-lookup"
	Register(s)
	// Out of order, so that the listing's order is tested.
	for _, name := range []string{"registry-test-z", "registry-test-a"} {
		o := testScenario()
		o.Name = name
		Register(o)
	}
	if got, err := Lookup("registry-test-lookup"); err != nil || got != s {
		t.Fatalf("Lookup = %v, %v", got, err)
	}
	if _, err := Lookup("nope"); err == nil || !strings.Contains(err.Error(), "forgotten") && !strings.Contains(err.Error(), "blank import") {
		t.Errorf("Lookup(nope) error %v should suggest the blank import", err)
	}
	all := Scenarios()
	if len(all) < 3 {
		t.Fatalf("Scenarios() = %d scenarios, want at least the 3 registered here", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i-1].Name >= all[i].Name {
			t.Fatalf("Scenarios not sorted: %s, %s", all[i-1].Name, all[i].Name)
		}
	}
}
