package suggest

import (
	"slices"
	"testing"
)

func TestClosest(t *testing.T) {
	commands := []string{"list", "push", "run", "runs", "show", "compare", "flame", "serve", "soak", "new", "version"}
	scenarios := []string{"cipher-cache", "cipher-stream", "suite-lookup", "uuid-hash"}
	params := []string{"keys", "key"}
	profiles := []string{"wall", "cpu", "mutex", "block", "fgprof"}
	for _, tt := range []struct {
		name       string
		typed      string
		candidates []string
		want       []string
	}{
		{"command, one extra letter", "runn", commands, []string{"run", "runs"}},
		{"command, transposed", "sohw", commands, []string{"show"}},
		{"command, a prefix", "vers", commands, []string{"version"}},
		{"command, nothing close", "deploy", commands, nil},
		{"scenario, one letter short", "cipher-cach", scenarios, []string{"cipher-cache"}},
		{"scenario, upper case", "UUID-HASH", scenarios, []string{"uuid-hash"}},
		{"scenario, a prefix of two", "cipher", scenarios, []string{"cipher-cache", "cipher-stream"}},
		{"parameter, transposed", "kyes", params, []string{"keys"}},
		{"parameter, exact is no typo", "keys", params, nil},
		{"flag", "varient", []string{"variant", "threads", "count", "time", "warmup", "profile", "profile-time"}, []string{"variant"}},
		{"profile kind", "mutx", profiles, []string{"mutex"}},
		{"profile kind, short names stay apart", "cpy", profiles, []string{"cpu"}},
		{"two letters are not a prefix", "cp", []string{"cpu", "compare"}, []string{"cpu"}},
		{"empty", "", profiles, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Closest(tt.typed, tt.candidates); !slices.Equal(got, tt.want) {
				t.Errorf("Closest(%q) = %q, want %q", tt.typed, got, tt.want)
			}
		})
	}
}

func TestDidYouMean(t *testing.T) {
	for _, tt := range []struct {
		typed string
		cands []string
		want  string
	}{
		{"kyes", []string{"keys", "key"}, "did you mean keys?"},
		{"runn", []string{"run", "runs"}, "did you mean run or runs?"},
		{"cipher", []string{"cipher-a", "cipher-b", "cipher-c"}, "did you mean cipher-a, cipher-b or cipher-c?"},
		{"zzz", []string{"keys"}, ""},
	} {
		if got := DidYouMean(tt.typed, tt.cands); got != tt.want {
			t.Errorf("DidYouMean(%q) = %q, want %q", tt.typed, got, tt.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		d    int
	}{
		{"", "", 0}, {"a", "", 1}, {"keys", "kyes", 1}, {"kitten", "sitting", 3},
		{"cipher-cach", "cipher-cache", 1}, {"ca", "abc", 3}, {"µs", "ns", 1},
	} {
		if got := distance(tt.a, tt.b); got != tt.d {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.d)
		}
		if got := distance(tt.b, tt.a); got != tt.d {
			t.Errorf("distance(%q, %q) = %d, want %d (not symmetric)", tt.b, tt.a, got, tt.d)
		}
	}
}
