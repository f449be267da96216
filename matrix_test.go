package perflab

import (
	"strings"
	"testing"
)

func testScenario() *Scenario {
	newCase := func(Params) (Case, error) { return CaseFunc(func(int) Worker { return WorkerFunc(func(int) {}) }), nil }
	return &Scenario{Name: "t", Threads: []int{1, 4},
		Params: []Param{
			{Name: "keys", Kind: IntParam, Default: []string{"128", "1024"}},
			{Name: "key", Default: []string{"ssk"}, Values: []string{"ssk", "chk"}},
		},
		Variants: []Variant{{Name: "a", New: newCase}, {Name: "b", New: newCase}}}
}

func TestMatrix(t *testing.T) {
	tests := []struct {
		name  string
		sel   Selection
		cases int
		first string
		err   string
	}{
		{"defaults", Selection{}, 8, "variant=a/keys=128/key=ssk/threads=1", ""},
		{"narrowed", Selection{Variants: []string{"b"}, Params: map[string][]string{"key": {"chk"}}, Threads: []int{2}}, 2, "variant=b/keys=128/key=chk/threads=2", ""},
		{"duplicates collapse", Selection{Variants: []string{"a", "a"}, Params: map[string][]string{"keys": {"16k", "16k"}}, Threads: []int{2, 2}}, 1, "variant=a/keys=16k/key=ssk/threads=2", ""},
		{"unknown variant", Selection{Variants: []string{"c"}}, 0, "", `no variant "c"`},
		{"unknown param", Selection{Params: map[string][]string{"nope": {"1"}}}, 0, "", `no parameter "nope"`},
		{"bad value", Selection{Params: map[string][]string{"key": {"md5"}}}, 0, "", `unknown value "md5"`},
		{"not an int", Selection{Params: map[string][]string{"keys": {"lots"}}}, 0, "", "not an integer"},
		{"slash in value", Selection{Params: map[string][]string{"keys": {"1/2"}}}, 0, "", "may only use"},
		{"zero threads", Selection{Threads: []int{0}}, 0, "", "threads=0"},
	}
	s := testScenario()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cases, err := s.Matrix(tt.sel)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || len(cases) != tt.cases || s.CaseName(cases[0]) != tt.first {
				t.Fatalf("got %d cases (first %q), err %v; want %d, %q", len(cases), s.CaseName(cases[0]), err, tt.cases, tt.first)
			}
		})
	}
}

func TestParseInt(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{{"128", 128, true}, {"16k", 16384, true}, {"1MiB", 1 << 20, true}, {"1M", 1 << 20, true}, {"2G", 2 << 30, true}, {"x", 0, false}, {"-1", 0, false}, {"1T", 0, false}}
	for _, tt := range tests {
		got, err := ParseInt(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseInt(%q) = %d, %v", tt.in, got, err)
		}
	}
}

func TestBenchName(t *testing.T) {
	if got := (&Scenario{Name: "cipher-cache"}).BenchName(); got != "BenchmarkCipherCache" {
		t.Errorf("got %q", got)
	}
	if got := (&Scenario{Name: "uuid-hash", Benchmark: "BenchmarkUUIDHash"}).BenchName(); got != "BenchmarkUUIDHash" {
		t.Errorf("got %q", got)
	}
}
