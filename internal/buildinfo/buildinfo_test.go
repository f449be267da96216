package buildinfo

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	stamp := []debug.BuildSetting{{Key: "vcs.revision", Value: "602f94c1d2e3a4b5c6d7e8f90123456789abcdef"}, {Key: "vcs.time", Value: "2026-12-03T06:36:12Z"}, {Key: "vcs.modified", Value: "true"}}
	for _, tt := range []struct {
		name        string
		bi          debug.BuildInfo
		version     string
		require     string
		replace     string
		main        string
		published   bool
		modifiedSet bool
	}{
		{"perflab's checkout", debug.BuildInfo{Main: debug.Module{Path: Module, Version: "(devel)"}, Settings: stamp},
			"(devel)", "v0.0.0-20261203063612-602f94c1d2e3", "", "", false, true},
		{"no VCS stamp", debug.BuildInfo{Main: debug.Module{Path: Module, Version: "(devel)"}},
			"(devel)", ZeroVersion, "", "", false, false},
		{"go install @v0.3.0", debug.BuildInfo{Main: debug.Module{Path: Module, Version: "v0.3.0"}},
			"v0.3.0", "v0.3.0", "", "", true, false},
		{"a user's module, replaced", debug.BuildInfo{Main: debug.Module{Path: "example.com/x", Version: "(devel)"},
			Deps: []*debug.Module{{Path: "golang.org/x/sys", Version: "v0.50.0"}, {Path: Module, Version: ZeroVersion, Replace: &debug.Module{Path: "/src/perflab"}}}},
			ZeroVersion, ZeroVersion, "/src/perflab", "example.com/x", false, false},
		{"a module perflab new made", debug.BuildInfo{Main: debug.Module{Path: "example.com/x", Version: "(devel)"},
			Deps: []*debug.Module{{Path: Module, Version: "v0.0.0-20261203071057-0e9cf0120e23", Replace: &debug.Module{Path: "/src/perflab", Version: "(devel)"}}}},
			"v0.0.0-20261203071057-0e9cf0120e23", "v0.0.0-20261203071057-0e9cf0120e23", "/src/perflab", "example.com/x", false, false},
		{"replaced by a fork", debug.BuildInfo{Main: debug.Module{Path: "example.com/x"},
			Deps: []*debug.Module{{Path: Module, Version: "v0.4.1", Replace: &debug.Module{Path: "github.com/fork/perflab", Version: "v0.4.2"}}}},
			"v0.4.1", "v0.4.1", "github.com/fork/perflab v0.4.2", "example.com/x", true, false},
		{"a user's module, its own commit", debug.BuildInfo{Main: debug.Module{Path: "example.com/x", Version: "(devel)"}, Settings: stamp,
			Deps: []*debug.Module{{Path: Module, Version: ZeroVersion, Replace: &debug.Module{Path: "/src/perflab", Version: "(devel)"}}}},
			ZeroVersion, ZeroVersion, "/src/perflab", "example.com/x", false, true},
		{"a user's module, published", debug.BuildInfo{Main: debug.Module{Path: "example.com/x"},
			Deps: []*debug.Module{{Path: Module, Version: "v0.4.1"}}},
			"v0.4.1", "v0.4.1", "", "example.com/x", true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			i := fromBuildInfo(&tt.bi, Info{Version: "(devel)"})
			if i.Version != tt.version || i.Require() != tt.require || i.Replace != tt.replace || i.Main != tt.main || i.Published() != tt.published || i.Modified != tt.modifiedSet {
				t.Errorf("got version %q require %q replace %q main %q published %v modified %v", i.Version, i.Require(), i.Replace, i.Main, i.Published(), i.Modified)
			}
		})
	}
}

func TestSourceDir(t *testing.T) {
	// Tests build with full file paths: the checkout is found from them.
	root, _ := filepath.Abs("../..")
	if got := (Info{}).SourceDir(); got != root {
		t.Errorf("SourceDir() = %q, want %q", got, root)
	}
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "go.mod"), []byte("// a fork\nmodule  github.com/perflab/perflab\n\ngo 1.26\n"), 0o644)
	if got := (Info{Replace: other}).SourceDir(); got != other {
		t.Errorf("with a replace: %q, want %q", got, other)
	}
	if ModulePath(t.TempDir()) != "" {
		t.Error("a directory without go.mod has a module path")
	}
}
