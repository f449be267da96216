package perflab

import (
	"strings"
	"testing"
)

func TestRegisterPanicsOnProgrammerErrors(t *testing.T) {
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
	s := testScenario()
	s.Name = "registry-test-lookup"
	Register(s)
	if got, err := Lookup("registry-test-lookup"); err != nil || got != s {
		t.Fatalf("Lookup = %v, %v", got, err)
	}
	if _, err := Lookup("nope"); err == nil || !strings.Contains(err.Error(), "forgotten") && !strings.Contains(err.Error(), "blank import") {
		t.Errorf("Lookup(nope) error %v should suggest the blank import", err)
	}
	all := Scenarios()
	for i := 1; i < len(all); i++ {
		if all[i-1].Name >= all[i].Name {
			t.Fatalf("Scenarios not sorted: %s, %s", all[i-1].Name, all[i].Name)
		}
	}
}
