package pyroscope

import "testing"

// TestSelectorFix: the fix offered for a selector the server would refuse
// is one it accepts: braces, and every value quoted.
func TestSelectorFix(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		ok       bool
	}{
		{`service_name=perflab`, `{service_name="perflab"}`, true},
		{`{service_name=perflab}`, `{service_name="perflab"}`, true},
		{`service_name="perflab"`, `{service_name="perflab"}`, true},
		{`service_name=perflab, scenario=~"cipher.*"`, `{service_name="perflab",scenario=~"cipher.*"}`, true},
		{`{a!=x,b!~y}`, `{a!="x",b!~"y"}`, true},
		{`{service_name="perflab",scenario="a,b"}`, "", false}, // valid: no fix
		{`{a="x\",y"}`, "", false},
		{`{}`, "", false},
		{`{a}`, "", false}, // not sure what was meant
		{`{a!b}`, "", false},
	} {
		got, ok := selectorFix(tt.in)
		if ok != tt.ok || got != tt.want {
			t.Errorf("selectorFix(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
