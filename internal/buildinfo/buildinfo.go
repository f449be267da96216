// Package buildinfo says what a perflab binary was built from: perflab's
// module version, the commit, and the Go toolchain. `perflab version`
// prints it and `perflab new` uses it to write a go.mod that finds
// perflab: the version to require, and the source directory to replace it
// with while the module is not published.
package buildinfo

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
)

// Module is perflab's module path.
const Module = "github.com/perflab/perflab"

// ZeroVersion is the version Go writes for a required module that has no
// published version (a replaced one): it resolves to nothing once the
// replace is gone, so a go.mod needs `go get` then.
const ZeroVersion = "v0.0.0-00010101000000-000000000000"

// Info is what a binary says of its build.
type Info struct {
	// Version is perflab's module version: a tag such as v0.3.0, a
	// pseudo-version, or "(devel)" when built inside perflab's own
	// checkout.
	Version string
	// Main is the main module when it is not perflab (a user's own
	// binary through perflabcmd), with its version.
	Main, MainVersion string
	// Replace is what perflab was replaced with in the main module's
	// go.mod, a directory or another module; "" when not replaced.
	// ReplaceDir says it is a directory.
	Replace    string
	ReplaceDir bool
	// Revision, Time and Modified are the VCS stamp (vcs.revision,
	// vcs.time, vcs.modified): empty when the binary was built with
	// -buildvcs=false or outside a checkout.
	Revision, Time string
	Modified       bool
	// GoVersion is the toolchain that built the binary, with its
	// platform: "go1.26.8 linux/amd64".
	GoVersion string
}

// Read returns the running binary's Info.
func Read() Info {
	info := Info{Version: "(devel)", GoVersion: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return info
	}
	return fromBuildInfo(bi, info)
}

func fromBuildInfo(bi *debug.BuildInfo, info Info) Info {
	if bi.GoVersion != "" {
		info.GoVersion = bi.GoVersion + " " + runtime.GOOS + "/" + runtime.GOARCH
	}
	switch {
	case bi.Main.Path == Module:
		info.Version = orDevel(bi.Main.Version)
	default:
		// A test binary has no main module path; a user's binary has
		// its own, and perflab among its dependencies.
		info.Main, info.MainVersion = bi.Main.Path, orDevel(bi.Main.Version)
		for _, d := range bi.Deps {
			if d.Path != Module {
				continue
			}
			info.Version = orDevel(d.Version)
			if r := d.Replace; r != nil {
				// A directory's version reads "(devel)" in a binary's
				// build info, "" in `go version -m`'s source.
				info.Replace, info.ReplaceDir = r.Path, r.Version == "" || r.Version == "(devel)"
				if !info.ReplaceDir {
					info.Replace += " " + r.Version
				}
			}
		}
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.time":
			info.Time = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}

func orDevel(v string) string {
	if v == "" {
		return "(devel)"
	}
	return v
}

// Published says Version names a version the module proxy can serve:
// not "(devel)", not the zero pseudo-version of a replaced module, and
// not one a directory stands in for (a module made by perflab new
// requires its source's commit, which may not be public).
func (i Info) Published() bool {
	return strings.HasPrefix(i.Version, "v") && i.Version != ZeroVersion && !i.ReplaceDir
}

// Require is the version a new module should require perflab at: the
// binary's own when published; else the pseudo-version of its commit
// (v0.0.0-20261203063600-602f94c1d2e3), which resolves once that commit
// is public; else ZeroVersion.
func (i Info) Require() string {
	if i.Published() || i.ReplaceDir && strings.HasPrefix(i.Version, "v") {
		return i.Version // a replaced module's own require, kept
	}
	// The VCS stamp is the main module's: perflab's only when it is
	// the main module.
	if i.Main == "" && len(i.Revision) >= 12 && len(i.Time) >= len("2006-01-02T15:04:05") {
		stamp := strings.NewReplacer("-", "", "T", "", ":", "").Replace(i.Time[:len("2006-01-02T15:04:05")])
		return "v0.0.0-" + stamp + "-" + i.Revision[:12]
	}
	return ZeroVersion
}

// SourceDir finds a directory holding perflab's source, for a replace
// directive: a directory perflab was replaced with, or the checkout this
// binary was compiled from (its file paths, unless built with -trimpath).
// It returns "" when there is none on this machine.
func (i Info) SourceDir() string {
	if i.Replace != "" && filepath.IsAbs(i.Replace) && IsSource(i.Replace) {
		return i.Replace
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	// file is <root>/internal/buildinfo/buildinfo.go.
	root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
	if IsSource(root) {
		return root
	}
	return ""
}

// IsSource says dir holds perflab's module: a go.mod declaring Module.
func IsSource(dir string) bool {
	return ModulePath(dir) == Module
}

// ModulePath returns the module path dir/go.mod declares, "" if none.
func ModulePath(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}
