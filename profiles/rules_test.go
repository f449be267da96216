package profiles

import (
	"reflect"
	"strings"
	"testing"
)

// TestUserRulesRestore: the user rules of a rules file, recorded (User)
// and restored (WithUser) by another binary, give the same rules in the
// same order, so a stored run is classified as it was made.
func TestUserRulesRestore(t *testing.T) {
	made, err := ParseRules(strings.NewReader("lock ^example\\.com/spin\\.\nwork ^example\\.com/codec\\.\nother? ^cgocall$\n"), "my.rules")
	if err != nil {
		t.Fatal(err)
	}
	made, err = made.WithWork(`^example\.com/app\.hash`)
	if err != nil {
		t.Fatal(err)
	}
	user := made.User()
	if len(user) != 3 || user[2] != (Rule{Category: Other, Pattern: "^cgocall$", Fallback: true}) {
		t.Fatalf("User() = %v", user)
	}
	restored, err := DefaultRules().WithUser(user...)
	if err != nil {
		t.Fatal(err)
	}
	if restored, err = restored.WithWork(`^example\.com/app\.hash`); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(restored.List(), made.List()) {
		t.Errorf("restored rules differ:\n%v\nwant\n%v", restored.List(), made.List())
	}
	for _, stack := range [][]string{
		{"example.com/spin.(*Lock).Lock", "example.com/app.hashAll"},
		{"runtime.memmove", "example.com/codec.Decode"},
		{"runtime.cgocall", "cgocall"},
		{"example.com/app.hashBlock"},
	} {
		if got, want := restored.Classify(stack), made.Classify(stack); got != want {
			t.Errorf("%v: restored %s, made %s", stack, got, want)
		}
	}
	// WithUser leaves its receiver alone and appends after its user rules.
	more, err := made.WithUser(Rule{Category: GC, Pattern: "^example"})
	if err != nil || len(made.User()) != 3 || len(more.User()) != 4 || more.User()[3].Category != GC {
		t.Errorf("WithUser: %v; user rules %v, then %v", err, made.User(), more.User())
	}
	if got := DefaultRules().User(); len(got) != 0 {
		t.Errorf("DefaultRules().User() = %v", got)
	}
}

func TestWithUserRefuses(t *testing.T) {
	tests := []struct {
		name  string
		rules []Rule
		want  string
	}{
		{"unknown category", []Rule{{Category: Lock, Pattern: "x"}, {Category: "speed", Pattern: "x"}}, `rule 2: unknown category "speed"`},
		{"empty category", []Rule{{Pattern: "x"}}, `rule 1: unknown category ""`},
		{"bad pattern", []Rule{{Category: Lock, Pattern: "("}}, "rule 1: bad pattern"},
		{"too large", []Rule{{Category: Lock, Pattern: "(x{1000}){1000}"}}, "rule 1: bad pattern"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := DefaultRules().WithUser(tt.rules...)
			if err == nil || !strings.Contains(err.Error(), tt.want) || r != nil {
				t.Errorf("WithUser = %v, %v; want error %q", r, err, tt.want)
			}
		})
	}
}
