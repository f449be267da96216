package model

import (
	"errors"
	"strings"
	"testing"
)

// TestFindCase: a bench run's cases answer to go test's names, with or
// without "Benchmark" and the -cpu suffix; a name that is none says what
// is close and what there is.
func TestFindCase(t *testing.T) {
	run := &Run{ID: "r1", Cases: []Case{
		{Name: "variant=Mutex/threads=2", Variant: "Mutex", Threads: 2, Bench: "BenchmarkMutex-2"},
		{Name: "variant=Mutex/threads=4", Variant: "Mutex", Threads: 4, Bench: "BenchmarkMutex-4"},
		{Name: "variant=Hash/size=64/threads=1", Variant: "Hash", Threads: 1, Bench: "BenchmarkHash/size=64"},
		{Name: "variant=Hash/size=64/threads=2", Variant: "Hash", Threads: 2, Bench: "BenchmarkHash/size=64-2"},
	}}
	for _, tt := range []struct {
		name, typed string
		want        string   // the case's name, or "" for an error
		errHas      []string // what the error says
	}{
		{"full name", "variant=Mutex/threads=2", "variant=Mutex/threads=2", nil},
		{"slug", "variant=Mutex,threads=2", "variant=Mutex/threads=2", nil},
		{"go test's name", "BenchmarkMutex-2", "variant=Mutex/threads=2", nil},
		{"benchstat's name", "Mutex-2", "variant=Mutex/threads=2", nil},
		{"without -cpu, of several", "Mutex", "", []string{"several cases", "BenchmarkMutex-2 or BenchmarkMutex-4; name one"}},
		{"go test's name without -cpu", "BenchmarkHash/size=64", "variant=Hash/size=64/threads=1", nil},
		{"-cpu 1 has no suffix", "Hash/size=64", "variant=Hash/size=64/threads=1", nil},
		{"a prefix is no name", "Hash/size", "", []string{`no case "Hash/size"`}},
		{"sub-benchmark at -cpu 2", "Hash/size=64-2", "variant=Hash/size=64/threads=2", nil},
		{"a trailing dash", "Hash/size=64-", "", []string{`no case`}},
		{"typo", "Mutx", "", []string{`no case "Mutx"`, "did you mean Mutex?", "its cases: BenchmarkMutex-2, BenchmarkMutex-4, BenchmarkHash/size=64, BenchmarkHash/size=64-2"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := run.FindCase(tt.typed)
			if tt.want != "" {
				if err != nil || c.Name != tt.want {
					t.Fatalf("FindCase(%q) = %v, %v; want %s", tt.typed, c, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("FindCase(%q) = %s, want an error", tt.typed, c.Name)
			}
			if !errors.Is(err, ErrNoCase) {
				t.Errorf("%v: not ErrNoCase", err)
			}
			for _, w := range tt.errHas {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
