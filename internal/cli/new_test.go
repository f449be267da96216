package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/buildinfo"
	"github.com/perflab/perflab/internal/scaffold"
)

// TestNewBuildsAndRuns: what `perflab new` writes builds, passes its own
// tests, and runs its scenario through its own main, as the two commands
// it prints say. It compiles perflab into the new module: about a minute
// on a loaded 2-core machine.
func TestNewBuildsAndRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a new module with perflab in it (go build, go test, go run)")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on $PATH to build the new module with")
	}
	src, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "bit-count")
	out, errs, code := execute(t, "new", "bit-count", "--dir", dir, "--perflab-dir", src)
	if code != 0 {
		t.Fatalf("perflab new: exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{"go run . run bit-count", "cd " + dir} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	gomod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	// The require names the checkout's commit, so it holds once the
	// replace is deleted (a source without git: the zero version).
	version := scaffold.PseudoVersion(src)
	if version == "" {
		version = buildinfo.Read().Require()
	}
	for _, want := range []string{"module example.com/bit-count\n", "replace github.com/perflab/perflab => " + src + "\n", "require github.com/perflab/perflab " + version + "\n"} {
		if !strings.Contains(string(gomod), want) {
			t.Errorf("go.mod lacks %q:\n%s", want, gomod)
		}
	}
	run := func(args ...string) string {
		t.Helper()
		start := time.Now()
		cmd := exec.Command(goCmd, args...)
		cmd.Dir = dir
		// The test's own flags (GOFLAGS=-race and the like) are not the
		// new user's.
		cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
		}
		t.Logf("go %s: %v", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
		return string(b)
	}
	run("vet", "./...")
	run("build", "./...")
	if got := run("test", "-count=1", "./..."); !strings.Contains(got, "ok  \texample.com/bit-count/bitcount") {
		t.Errorf("go test:\n%s", got)
	}
	got := run("run", ".", "run", "bit-count", "--count", "2", "--time", "10ms", "--warmup", "0", "--profile", "none", "-o", filepath.Join(dir, "runs"))
	for _, want := range []string{"size=64 threads=1", "bytes", "words", "saved "} {
		if !strings.Contains(got, want) {
			t.Errorf("go run . run bit-count lacks %q:\n%s", want, got)
		}
	}
	// The new module's own binary makes a module in turn: perflab is
	// found through its replace, and the require kept.
	second := filepath.Join(t.TempDir(), "second")
	run("run", ".", "new", "second", "--dir", second)
	gomod2, _ := os.ReadFile(filepath.Join(second, "go.mod"))
	for _, want := range []string{"replace github.com/perflab/perflab => " + src + "\n", "require github.com/perflab/perflab " + version + "\n"} {
		if !strings.Contains(string(gomod2), want) {
			t.Errorf("second go.mod lacks %q:\n%s", want, gomod2)
		}
	}
	build := exec.Command(goCmd, "vet", "./...")
	build.Dir = second
	if out, err := build.CombinedOutput(); err != nil {
		t.Errorf("go vet in the second module: %v\n%s", err, out)
	}
	// The benchmark runs under the names perflab gives the cases.
	if got := run("test", "-run", "^$", "-bench", ".", "-benchtime", "10x", "./bitcount"); !strings.Contains(got, "BenchmarkBitCount/variant=words/size=4k/threads=1") {
		t.Errorf("go test -bench:\n%s", got)
	}
}

// TestNewRefuses: a name that cannot be a scenario or a package, a module
// path that would break go.mod, and a directory with something in it.
func TestNewRefuses(t *testing.T) {
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "keep.txt"), []byte("mine"), 0o644)
	src, _ := filepath.Abs("../..")
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no name", []string{"new"}, 2, "name the scenario to create, such as perflab new my-cache"},
		{"upper case", []string{"new", "MyCache"}, 2, `scenario name "MyCache": use lower-case letters, digits and dashes, starting with a letter`},
		{"digit first", []string{"new", "1cache"}, 2, `scenario name "1cache"`},
		{"keyword", []string{"new", "go-to"}, 2, "its package would be named goto, which Go does not allow"},
		{"path", []string{"new", "../x"}, 2, `scenario name "../x"`},
		{"module", []string{"new", "ok", "--module", "a b"}, 2, `--module: module path "a b"`},
		{"not empty", []string{"new", "ok", "--dir", full, "--perflab-dir", src, "--no-tidy"}, 1, full + " already exists and is not empty"},
		{"not a checkout", []string{"new", "ok", "--dir", filepath.Join(t.TempDir(), "ok"), "--perflab-dir", t.TempDir()}, 2, "--perflab-dir"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, errs, code := execute(t, tt.args...)
			if code != tt.code || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", code, errs, tt.code, tt.want)
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(full, "keep.txt")); err != nil || string(b) != "mine" {
		t.Errorf("the existing directory was touched: %q %v", b, err)
	}
}

func TestFileRows(t *testing.T) {
	files := []string{"README.md", ".gitignore", "go.mod", "main.go", "mylab/mylab.go", "mylab/mylab_test.go", "go.sum"}
	for _, tt := range []struct {
		files []string
		width int
		want  []string
	}{
		{files, 80, []string{"  README.md  .gitignore  go.mod  main.go  mylab/mylab.go  mylab/mylab_test.go", "  go.sum"}},
		{files[:3], 80, []string{"  README.md  .gitignore  go.mod"}},
		{[]string{"a-name-longer-than-the-width"}, 10, []string{"  a-name-longer-than-the-width"}},
		{nil, 80, nil},
	} {
		if got := fileRows(tt.files, tt.width); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("fileRows(%q, %d) = %q, want %q", tt.files, tt.width, got, tt.want)
		}
	}
}
