package scaffold

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCheckName(t *testing.T) {
	for _, tt := range []struct {
		name string
		ok   bool
	}{
		{"my-cache", true}, {"a", true}, {"bit-count2", true},
		{"", false}, {"My", false}, {"1a", false}, {"a--b", false}, {"a-", false},
		{"a_b", false}, {"../a", false}, {"go-to", false}, {"func", false}, {"main", false},
	} {
		if err := CheckName(tt.name); (err == nil) != tt.ok {
			t.Errorf("CheckName(%q) = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}

func TestCheckModule(t *testing.T) {
	for _, tt := range []struct {
		path string
		ok   bool
	}{
		{"example.com/my-cache", true}, {"github.com/you/x_y~z", true}, {"m", true},
		{"", false}, {"a b", false}, {"/abs", false}, {"a//b", false}, {"a/../b", false},
		{"a/b/", false}, {`a"b`, false}, {"a`b", false}, {"a.", false},
	} {
		if err := CheckModule(tt.path); (err == nil) != tt.ok {
			t.Errorf("CheckModule(%q) = %v, want ok=%v", tt.path, err, tt.ok)
		}
	}
}

// TestWrite: every template is written where it belongs, with the names
// filled in, into an empty directory as into a new one; a replace path
// with a space is quoted for go.mod.
func TestWrite(t *testing.T) {
	src := filepath.Join(t.TempDir(), "perflab src")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "go.sum"), []byte("sums\n"), 0o644)
	dir := t.TempDir() // exists, empty
	files, err := Write(Options{Name: "my-cache", Dir: dir, Module: "example.com/x/my-cache", Require: "v1.2.3", Replace: src, Go: "1.26"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"go.mod":                  {"module example.com/x/my-cache\n", "go 1.26\n", "require github.com/perflab/perflab v1.2.3\n", `replace github.com/perflab/perflab => "` + src + `"`},
		"main.go":                 {`_ "example.com/x/my-cache/mycache"`, "perflabcmd.Main(os.Args[1:])"},
		"mycache/mycache.go":      {"package mycache\n", `Name: "my-cache"`, "Work: []string{`^example\\.com/x/my-cache/mycache\\.`}", "sink"},
		"mycache/mycache_test.go": {"func BenchmarkMyCache(b *testing.B) { perflabtest.BenchmarkScenario(b, Scenario) }"},
		"README.md":               {"go run . run my-cache"},
		".gitignore":              {"/perflab-runs/"},
		"go.sum":                  {"sums\n"},
	}
	if len(files) != len(want) {
		t.Errorf("wrote %v, want the %d files %v", files, len(want), want)
	}
	for f, subs := range want {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		for _, s := range subs {
			if !strings.Contains(string(b), s) {
				t.Errorf("%s lacks %q:\n%s", f, s, b)
			}
		}
		if strings.Contains(string(b), "{{") || strings.Contains(string(b), "<no value>") {
			t.Errorf("%s has an unfilled template field:\n%s", f, b)
		}
	}
	// Nothing left beside it.
	entries, _ := os.ReadDir(filepath.Dir(dir))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".new-") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	// A second time into the same directory is refused.
	if _, err := Write(Options{Name: "my-cache", Dir: dir, Module: "m", Require: "v1.2.3", Go: "1.26"}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("second Write: %v, want a refusal", err)
	}
}

// TestREADMEWidth: the README a new module gets fits an 80-column
// terminal for a name of up to 20 characters. Its commands once carried
// comments aligned in the template, before the name was filled in: for
// "myscn" they ran ragged, and one line to 83 columns.
func TestREADMEWidth(t *testing.T) {
	for _, tt := range []struct{ name string }{
		{"m"}, {"myscn"}, {"my-cache"}, {"a-twenty-char-name-x"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), tt.name)
			if _, err := Write(Options{Name: tt.name, Dir: dir, Module: "example.com/" + tt.name, Require: "v1.2.3", Go: "1.26"}); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, "README.md"))
			if err != nil {
				t.Fatal(err)
			}
			for i, l := range strings.Split(string(b), "\n") {
				if n := utf8.RuneCountInString(l); n > 80 {
					t.Errorf("README.md:%d is %d columns:\n%s", i+1, n, l)
				}
			}
		})
	}
}
