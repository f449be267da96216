package model

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestSlug(t *testing.T) {
	tests := []struct{ in, want string }{
		{"variant=mutex/keys=1024/key=ssk/threads=4", "variant=mutex,keys=1024,key=ssk,threads=4"},
		{"variant=a/p=../../x", "variant=a,p=..,..,x"}, // one path segment: no traversal,
		{".hidden", "_hidden"},
	}
	for _, tt := range tests {
		if got := Slug(tt.in); got != tt.want {
			t.Errorf("Slug(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestStatInfinitiesRoundTrip(t *testing.T) {
	in := Stat{N: 3, Mean: 2, MeanLo: 1, MeanHi: 3, Median: 2, MedianLo: math.Inf(-1), MedianHi: math.Inf(1), Min: 1, Max: 3}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out Stat
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Fatalf("round trip %+v -> %s -> %+v", in, b, out)
	}
}

func TestClassificationCheck(t *testing.T) {
	many := func(n int) []string { return make([]string, n) }
	rules := func(n int, pattern string) []Rule {
		out := make([]Rule, n)
		for i := range out {
			out[i] = Rule{Category: "lock", Pattern: pattern}
		}
		return out
	}
	big := strings.Repeat("x", MaxPatternBytes)
	tests := []struct {
		name string
		c    Classification
		want string // error substring, "" for none
	}{
		{"empty", Classification{}, ""},
		{"at the bounds", Classification{Work: many(MaxClassificationRules), Rules: rules(MaxClassificationRules, "x")}, ""},
		{"too many work patterns", Classification{Work: many(MaxClassificationRules + 1)}, "257 work patterns"},
		{"too many rules", Classification{Rules: rules(MaxClassificationRules+1, "x")}, "257 rules"},
		{"long work pattern", Classification{Work: []string{"a", big + "x"}}, "work pattern 2 is 4097 bytes"},
		{"long rule", Classification{Rules: []Rule{{Category: "lock", Pattern: big + "x"}}}, "rule 1: pattern is 4097 bytes"},
		{"long category", Classification{Rules: []Rule{{Category: strings.Repeat("c", 65), Pattern: "x"}}}, "not a category name"},
		{"too much in all", Classification{Work: []string{big, big, big, big, big, big, big, big}, Rules: rules(9, big)}, "bytes in all"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Check()
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Check() = %v, want %q", err, tt.want)
			}
		})
	}
}
