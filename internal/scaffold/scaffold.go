// Package scaffold writes a new scenario module, what `perflab new NAME`
// makes: a go.mod that finds perflab, a scenario package with two variants,
// a test and a perflabtest benchmark, and a main that is perflab with the
// scenario built in. What it writes builds and runs as it is.
package scaffold

import (
	"embed"
	"errors"
	"fmt"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"text/template"

	"github.com/perflab/perflab"
)

//go:embed template
var templates embed.FS

// Options say what to write.
type Options struct {
	// Name is the scenario's name: lower-case letters, digits and dashes,
	// starting with a letter ("my-cache").
	Name string
	// Dir is the directory to create; it must not exist, or be empty.
	Dir string
	// Module is the new module's path ("example.com/my-cache").
	Module string
	// Require is the version of perflab to require.
	Require string
	// Replace, when not empty, is the directory of perflab's source the
	// go.mod replaces the module with (it is not published yet); its
	// go.sum is copied so the new module builds without a download of
	// what perflab's own build already fetched.
	Replace string
	// Go is the go directive's version ("1.26.8").
	Go string
}

// data is what the templates see.
type data struct {
	Options
	Package, Bench, WorkPrefix string
}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// CheckName says why name cannot name a new scenario, nil if it can.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("scenario name %q: use lower-case letters, digits and dashes, starting with a letter (such as my-cache)", name)
	}
	if pkg := Package(name); token.IsKeyword(pkg) || pkg == "main" {
		return fmt.Errorf("scenario name %q: its package would be named %s, which Go does not allow", name, pkg)
	}
	return nil
}

// Package is the Go package name of scenario name: its letters and
// digits ("my-cache" gives mycache).
func Package(name string) string { return strings.ReplaceAll(name, "-", "") }

var moduleRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._~-]*(/[A-Za-z0-9._~-]+)*$`)

// CheckModule says why p cannot be a module path, nil if it can. It is
// a rough check (golang.org/x/mod/module.CheckPath is the whole one):
// enough to keep a path from breaking the go.mod and the imports written.
func CheckModule(p string) error {
	if !moduleRE.MatchString(p) || strings.Contains(p, "..") || strings.HasSuffix(p, ".") {
		return fmt.Errorf("module path %q: use letters, digits and ._~- in slash-separated elements, such as example.com/my-cache", p)
	}
	return nil
}

// Write writes the module into o.Dir and returns the files written,
// relative to it. It refuses a directory that exists and is not empty;
// the files appear together (written beside it, then renamed into place),
// so a failure leaves nothing half-written.
func Write(o Options) ([]string, error) {
	if err := CheckName(o.Name); err != nil {
		return nil, err
	}
	if err := CheckModule(o.Module); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(o.Dir)
	switch {
	case err == nil && len(entries) > 0:
		return nil, fmt.Errorf("%s already exists and is not empty: choose another --dir, or remove it first", o.Dir)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	exists := err == nil
	parent := filepath.Dir(filepath.Clean(o.Dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(o.Dir)+".new-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp) // gone once renamed; what is left after a failure
	files, err := render(tmp, o)
	if err != nil {
		return nil, err
	}
	// os.Rename will not replace a directory, even an empty one; Remove
	// fails on one that something filled since the check.
	if exists {
		if err := os.Remove(o.Dir); err != nil {
			return nil, fmt.Errorf("%s: %w", o.Dir, err)
		}
	}
	if err := os.Rename(tmp, o.Dir); err != nil {
		return nil, fmt.Errorf("moving the new module into %s: %w", o.Dir, err)
	}
	return files, nil
}

// render writes every template under dir.
func render(dir string, o Options) ([]string, error) {
	pkg := Package(o.Name)
	d := data{Options: o, Package: pkg,
		Bench:      (&perflab.Scenario{Name: o.Name}).BenchName(),
		WorkPrefix: regexp.QuoteMeta(o.Module + "/" + pkg)}
	funcs := template.FuncMap{"quote": quotePath}
	targets := map[string]string{
		"template/go.mod.tmpl":               "go.mod",
		"template/main.go.tmpl":              "main.go",
		"template/README.md.tmpl":            "README.md",
		"template/gitignore.tmpl":            ".gitignore",
		"template/pkg/scenario.go.tmpl":      path.Join(pkg, pkg+".go"),
		"template/pkg/scenario_test.go.tmpl": path.Join(pkg, pkg+"_test.go"),
	}
	var files []string
	err := fs.WalkDir(templates, "template", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		target, ok := targets[p]
		if !ok {
			return fmt.Errorf("scaffold: template %s has no target", p) // a programming error
		}
		t, err := template.New(path.Base(p)).Funcs(funcs).Option("missingkey=error").ParseFS(templates, p)
		if err != nil {
			return err
		}
		var b strings.Builder
		if err := t.Execute(&b, d); err != nil {
			return err
		}
		out := filepath.Join(dir, filepath.FromSlash(target))
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			return err
		}
		files = append(files, target)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if o.Replace != "" {
		// perflab's go.sum holds the hashes of everything it depends on:
		// with it the new module builds from the module cache alone.
		sum, err := os.ReadFile(filepath.Join(o.Replace, "go.sum"))
		if err == nil {
			if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
				return nil, err
			}
			files = append(files, "go.sum")
		}
	}
	return files, nil
}

// quotePath writes a path for go.mod: quoted when it holds a space, a
// quote or a bracket, which go.mod's lexer would split it at.
func quotePath(p string) string {
	if strings.ContainsAny(p, " \t\"'`\\(){}") {
		return strconv.Quote(p)
	}
	return p
}

// Tidy runs `go mod tidy` in dir with the go command named by goCmd
// ("go" from $PATH if empty): it adds to go.mod the modules perflab
// needs, so that `go build` accepts it. Its output is returned with
// the error.
func Tidy(dir, goCmd string) error {
	if goCmd == "" {
		goCmd = "go"
	}
	cmd := exec.Command(goCmd, "mod", "tidy")
	cmd.Dir = dir
	// A go.work above dir (perflab new run inside a workspace) would
	// not list the new module.
	cmd.Env = append(cmd.Environ(), "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go mod tidy in %s: %w\n%s", dir, err, strings.TrimSpace(string(out)))
	}
	return nil
}
