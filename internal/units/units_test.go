package units

import (
	"slices"
	"testing"
)

func TestLabelParse(t *testing.T) {
	tests := []struct {
		name, unit, label string
	}{
		{"time", "ns/op", "time/op"},
		{"cpu", "cpu-ns/op", "cpu/op"},
		{"rate", "alloc-MB/s", "alloc MB/s"},
		{"gc share", "gc-cpu-%", "gc cpu"},
		{"scenario metric", "hits/op", "hits/op"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Label(tt.unit); got != tt.label {
				t.Errorf("Label(%q) = %q, want %q", tt.unit, got, tt.label)
			}
			if got := Parse(tt.label); got != tt.unit {
				t.Errorf("Parse(%q) = %q, want %q", tt.label, got, tt.unit)
			}
			if got := Parse(tt.unit); got != tt.unit {
				t.Errorf("Parse(%q) = %q, want itself", tt.unit, got)
			}
		})
	}
}

// TestLabelsDistinct: two units may share a label only when they are the
// same quantity in other units (ns/op and sec/op), so a label names one
// thing in every table.
func TestLabelsDistinct(t *testing.T) {
	same := map[string]string{"sec/op": "ns/op", "cpu-sec/op": "cpu-ns/op"}
	seen := map[string]string{}
	for _, u := range Known() {
		if prev, ok := seen[u.Label]; ok && same[u.Name] != prev {
			t.Errorf("%s and %s share the label %q", prev, u.Name, u.Label)
		}
		if _, ok := seen[u.Label]; !ok {
			seen[u.Label] = u.Name
		}
	}
}

func TestSort(t *testing.T) {
	got := Sort([]string{"zeta/op", "B/op", "hits/op", "gc-cpu-%", "ns/op", "MB/s", "cpu-ns/op"})
	want := []string{"ns/op", "cpu-ns/op", "MB/s", "B/op", "gc-cpu-%", "hits/op", "zeta/op"}
	if !slices.Equal(got, want) {
		t.Errorf("Sort = %v, want %v", got, want)
	}
}

func TestLists(t *testing.T) {
	for _, l := range Compared() {
		if _, known := Lookup(Parse(l)); !known {
			t.Errorf("Compared names %q, not a unit perflab knows", l)
		}
	}
	if got, want := Standard(), []string{"ns/op", "cpu-ns/op", "ops/s", "B/op", "allocs/op", "alloc-MB/s", "gc/op", "gc-cpu-%"}; !slices.Equal(got, want) {
		t.Errorf("Standard = %v, want %v", got, want)
	}
	// results.txt: benchstat's units, never ops/s (derived from ns/op).
	if slices.Contains(Bench(), "ops/s") {
		t.Error("Bench includes ops/s")
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		v    float64
		unit string
		want string
	}{
		{214.7, "ns/op", "214.7ns"},
		{1234, "ns/op", "1.234µs"},
		{0.5, "ns/op", "0.50ns"},
		{0.001, "ns/op", "<0.01ns"},
		{0, "ns/op", "0"},
		{4.03e6, "ops/s", "4.030M"},
		{0.876, "allocs/op", "0.876"},
		{0.0001, "B/op", "<0.001"},
		{12.34, "gc-cpu-%", "12.3%"},
		{2e18, "ns/op", "2e+18ns"},
		{1e300, "hits/op", "1e+300"},
	}
	for _, tt := range tests {
		if got := Format(tt.v, tt.unit); got != tt.want {
			t.Errorf("Format(%v, %q) = %q, want %q", tt.v, tt.unit, got, tt.want)
		}
	}
}
