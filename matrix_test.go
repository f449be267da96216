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

// TestFormatInt: FormatInt writes what ParseInt reads back.
func TestFormatInt(t *testing.T) {
	for _, tt := range []struct {
		in   int
		want string
	}{{0, "0"}, {1, "1"}, {1000, "1000"}, {1024, "1k"}, {1536, "1536"}, {16 << 10, "16k"}, {1 << 20, "1M"}, {3 << 30, "3G"}} {
		got := FormatInt(tt.in)
		back, err := ParseInt(got)
		if got != tt.want || err != nil || back != tt.in {
			t.Errorf("FormatInt(%d) = %q, read back as %d, %v; want %q", tt.in, got, back, err, tt.want)
		}
	}
}

// TestParamRange: an IntParam's Min and Max are checked with its values,
// so keys=1G is refused when the matrix is read, not out of memory in New.
func TestParamRange(t *testing.T) {
	p := Param{Name: "keys", Kind: IntParam, Min: 1, Max: 1 << 20}
	for _, tt := range []struct {
		v   string
		err string
	}{
		{"1", ""}, {"1M", ""}, {"128", ""},
		{"0", "parameter keys: 0 is out of range (1 to 1M)"},
		{"1G", "parameter keys: 1G is out of range (1 to 1M)"},
		{"1048577", "out of range"},
	} {
		err := p.Validate(tt.v)
		if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("Validate(%q) = %v, want %q", tt.v, err, tt.err)
		}
	}
	if err := (Param{Name: "n", Kind: IntParam}).Validate("1G"); err != nil {
		t.Errorf("no bounds: Validate(1G) = %v", err)
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
