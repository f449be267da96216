package model

import (
	"go/build"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/perflab/perflab/"

// TestReadersNeedNoStore: what reads a run to say something about it
// (report, compare) takes the model, not the package that keeps runs on
// disk, directly or through anything it imports (issue 24: store was the
// hub every reader imported). Tests are not counted: a test may store a
// fixture.
func TestReadersNeedNoStore(t *testing.T) {
	for _, pkg := range []string{"internal/model", "internal/report", "internal/compare"} {
		if path := importPath(t, pkg, "internal/store"); path != nil {
			t.Errorf("%s imports internal/store: %s; take the types from internal/model", pkg, strings.Join(path, " → "))
		}
	}
}

// importPath returns a chain of imports from the module's package from to
// its package to, following the module's own packages' non-test files
// (go/build, for this platform); nil if there is none.
func importPath(t *testing.T, from, to string) []string {
	t.Helper()
	root := filepath.Join("..", "..")
	seen := map[string]bool{}
	var walk func(rel string) []string
	walk = func(rel string) []string {
		if rel == to {
			return []string{rel}
		}
		if seen[rel] {
			return nil
		}
		seen[rel] = true
		p, err := build.ImportDir(filepath.Join(root, filepath.FromSlash(rel)), 0)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		for _, imp := range p.Imports {
			if next, ok := strings.CutPrefix(imp, module); ok {
				if path := walk(next); path != nil {
					return append([]string{rel}, path...)
				}
			}
		}
		return nil
	}
	return walk(from)
}
