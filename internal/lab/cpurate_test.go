package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// TestRateSource: the rate file is in the package asked for, its
// imports all have names of their own, and its only declaration is init,
// which sets the rate asked for.
func TestRateSource(t *testing.T) {
	for _, tt := range []struct {
		pkg string
		hz  int
	}{
		{"testing", 250},
		{"main_test", 250},
		{"cache_test", 500},
	} {
		t.Run(tt.pkg, func(t *testing.T) {
			src := rateSource(tt.pkg, tt.hz)
			f, err := parser.ParseFile(token.NewFileSet(), "zz.go", src, 0)
			if err != nil {
				t.Fatalf("%v\n%s", err, src)
			}
			if f.Name.Name != tt.pkg {
				t.Errorf("package %s, want %s", f.Name.Name, tt.pkg)
			}
			for _, imp := range f.Imports {
				if imp.Name == nil || !strings.HasPrefix(imp.Name.Name, "perflab_cpurate_") {
					t.Errorf("import %s has no name of its own", imp.Path.Value)
				}
			}
			var decls []string
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					decls = append(decls, d.Name.Name)
				case *ast.GenDecl:
					if d.Tok != token.IMPORT {
						decls = append(decls, d.Tok.String())
					}
				}
			}
			if !slices.Equal(decls, []string{"init"}) {
				t.Errorf("declarations %v, want init only", decls)
			}
			if want := "SetCPUProfileRate(" + strconv.Itoa(tt.hz) + ")"; !bytes.Contains(src, []byte(want)) {
				t.Errorf("no %s in\n%s", want, src)
			}
		})
	}
}

// TestRateTargetFor: the rate file goes into package testing, unless
// GOROOT is in the module cache (a downloaded toolchain); then into the
// package's external tests, unless it is in the module cache too.
func TestRateTargetFor(t *testing.T) {
	const mc = "/home/u/go/pkg/mod"
	for _, tt := range []struct {
		name, goroot, dir, pkg string
		want                   rateTarget
		ok                     bool
	}{
		{"testing", "/usr/local/go", "/src/cache", "cache", rateTarget{"/usr/local/go/src/testing", "zz_perflab_cpurate.go", "testing"}, true},
		{"package in the cache", "/usr/local/go", mc + "/x.org/y@v1.0.0/z", "z", rateTarget{"/usr/local/go/src/testing", "zz_perflab_cpurate.go", "testing"}, true},
		{"downloaded toolchain", mc + "/golang.org/toolchain@v0.0.1-go1.26.8.linux-amd64", "/src/cache", "cache", rateTarget{"/src/cache", "zz_perflab_cpurate_test.go", "cache_test"}, true},
		{"beside the cache", mc + "2/go", "/src/cache", "cache", rateTarget{mc + "2/go/src/testing", "zz_perflab_cpurate.go", "testing"}, true},
		{"both in the cache", mc + "/golang.org/toolchain@v0.0.1-go1.26.8.linux-amd64", mc + "/x.org/y@v1.0.0/z", "z", rateTarget{}, false},
		{"no name", mc + "/golang.org/toolchain@v0.0.1-go1.26.8.linux-amd64", "/src/cache", "", rateTarget{}, false},
	} {
		got, ok := rateTargetFor(tt.goroot, mc, tt.dir, tt.pkg)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: %+v, %v; want %+v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

// TestWriteRateOverlay: the overlay adds the rate file to its directory,
// and refuses where a file of its name is there already.
func TestWriteRateOverlay(t *testing.T) {
	dir := t.TempDir()
	taken := rateTarget{dir: dir, file: "taken.go", pkg: "cache_test"}
	if err := os.WriteFile(filepath.Join(dir, taken.file), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		t    rateTarget
		err  string
	}{
		{"adds", rateTarget{dir: dir, file: "zz.go", pkg: "cache_test"}, ""},
		{"file there", taken, "exists"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path, err := writeRateOverlay(t.TempDir(), 3, tt.t, 250)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var o struct{ Replace map[string]string }
			if err := json.Unmarshal(data, &o); err != nil {
				t.Fatal(err)
			}
			src, ok := o.Replace[filepath.Join(tt.t.dir, tt.t.file)]
			if len(o.Replace) != 1 || !ok {
				t.Fatalf("overlay %s, want %s only", data, tt.t.file)
			}
			if got, err := os.ReadFile(src); err != nil || !bytes.Equal(got, rateSource(tt.t.pkg, 250)) {
				t.Errorf("rate file %q (%v), want rateSource's", got, err)
			}
		})
	}
}

// TestDropRateComplaint: the runtime's complaint perflab causes is taken
// out once, whole, wherever it is in the output; another is the
// benchmark's own.
func TestDropRateComplaint(t *testing.T) {
	const c = rateComplaint
	for _, tt := range []struct{ name, out, want string }{
		{"first line", c + "goos: linux\nPASS\n", "goos: linux\nPASS\n"},
		{"within a line", "BenchmarkX-2 \t" + c + "panic: boom\n", "BenchmarkX-2 \tpanic: boom\n"},
		{"twice", c + "x\n" + c, "x\n" + c},
		{"none", "goos: linux\n", "goos: linux\n"},
		{"not whole", "runtime: cannot set cpu profile rate", "runtime: cannot set cpu profile rate"},
	} {
		if got := string(dropRateComplaint([]byte(tt.out))); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestRunBinaryRateComplaint: a failed traced run of a binary with the
// rate file says why in its first line, not the runtime's complaint,
// with a FAIL line or without one (errText then quotes the last lines);
// a run without -test.cpuprofile, or of a binary without the file, keeps
// every line.
func TestRunBinaryRateComplaint(t *testing.T) {
	complaint := strings.TrimSpace(rateComplaint)
	for _, tt := range []struct {
		name, out string
		hz        int
		extra     []string
		first     string // of errText
	}{
		{"traced, FAIL", "--- FAIL: BenchmarkBoom\n    x_test.go:9: no\nFAIL\n", cpuProfileHz, []string{"-test.trace=t", "-test.cpuprofile=c"}, "--- FAIL: BenchmarkBoom"},
		{"traced, killed", "goos: linux\nBenchmarkBoom-2 \t", cpuProfileHz, []string{"-test.trace=t", "-test.cpuprofile=c"}, "goos: linux"},
		{"timed", "goos: linux\n", cpuProfileHz, nil, complaint},
		{"no rate file", "goos: linux\n", 100, []string{"-test.cpuprofile=c"}, complaint},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bin := filepath.Join(t.TempDir(), "x.test")
			script := "#!/bin/sh\nprintf '%s' '" + rateComplaint + tt.out + "'\nexit 1\n"
			if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			b := &testBinary{ImportPath: "x", Path: bin, cpuHz: tt.hz}
			r := runBinary(context.Background(), b, "^BenchmarkBoom$", "10x", 1, time.Minute, tt.extra...)
			if r.err == nil {
				t.Fatal("the script exited 0")
			}
			if got := firstLineOf(r.errText()); got != tt.first {
				t.Errorf("errText's first line %q, want %q\n%s", got, tt.first, r.output)
			}
		})
	}
}

// cpuPeriod runs b's benchmarks once with the CPU profiler on, the
// -test.cpuprofile arguments made by args from the profile's path, and
// returns the profile's period and the run's output.
func cpuPeriod(t *testing.T, b *testBinary, args func(path string) []string) (int64, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cpu.pb.gz")
	cmd := exec.Command(b.Path, append([]string{"-test.run=^$", "-test.bench=.", "-test.benchtime=2000x"}, args(path)...)...)
	cmd.Dir = b.Dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return p.Period, string(out)
}

// TestRateFile builds the fixture's test binaries with the rate file in
// package testing and, as where GOROOT is in the module cache, in the
// package's external tests (a package with external tests only, a
// package main, a package with a TestMain whose external tests declare
// os, runtime and strings): each profiles at cpuProfileHz with
// -test.cpuprofile, in either form, and perflab's traced run shows no
// complaint. Without -test.cpuprofile the rate is left alone: a test
// that starts its own profile gets 100 Hz without a word from the
// runtime.
func TestRateFile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds test binaries")
	}
	ctx := context.Background()
	const dir = "testdata/cpurate"
	paths, err := goEnvPaths(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	bins, _, err := listPackages(ctx, dir, []string{"./..."}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(bins) != 3 {
		t.Fatalf("%d packages, want 3", len(bins))
	}
	tmp := t.TempDir()
	want := int64(1e9 / cpuProfileHz)
	n := 0
	for _, into := range []string{"testing", "external tests"} {
		for _, b := range bins {
			t.Run(into+"/"+filepath.Base(b.ImportPath), func(t *testing.T) {
				goroot := paths.goroot
				if into != "testing" {
					goroot = "" // as where it is in the module cache
				}
				target, ok := rateTargetFor(goroot, paths.modcache, b.Dir, b.name)
				if !ok {
					t.Fatal("no place for the rate file")
				}
				n++
				if err := b.build(ctx, dir, tmp, n, nil, &target); err != nil {
					t.Fatal(err)
				}
				if b.cpuHz != cpuProfileHz || b.rateErr != nil {
					t.Fatalf("cpuHz %d (%v), want %d", b.cpuHz, b.rateErr, cpuProfileHz)
				}
				for _, form := range []struct {
					name string
					args func(string) []string
				}{
					{"-test.cpuprofile=file", func(p string) []string { return []string{"-test.cpuprofile=" + p} }},
					{"-test.cpuprofile file", func(p string) []string { return []string{"-test.cpuprofile", p} }},
					{"--test.cpuprofile=file", func(p string) []string { return []string{"--test.cpuprofile=" + p} }},
				} {
					if period, _ := cpuPeriod(t, b, form.args); period != want {
						t.Errorf("%s: period %d ns, want %d", form.name, period, want)
					}
				}
				prof := filepath.Join(t.TempDir(), "cpu.pb.gz")
				r := runBinary(ctx, b, ".", "100x", 1, time.Minute, "-test.cpuprofile="+prof)
				if r.err != nil || len(r.results) == 0 {
					t.Fatalf("traced run: %v, %d results\n%s", r.err, len(r.results), r.output)
				}
				if bytes.Contains(r.output, []byte("cpu profile rate")) {
					t.Errorf("traced run's output has the complaint:\n%s", r.output)
				}
				if !strings.HasSuffix(b.ImportPath, "/xonly") {
					return
				}
				for _, args := range [][]string{nil, {"-test.cpuprofile="}} {
					cmd := exec.Command(b.Path, append([]string{"-test.run=^TestOwnProfile$", "-test.v"}, args...)...)
					out, err := cmd.CombinedOutput()
					if err != nil || !bytes.Contains(out, []byte("--- PASS: TestOwnProfile")) || bytes.Contains(out, []byte("cpu profile rate")) {
						t.Errorf("args %q: TestOwnProfile did not start its profile quietly (%v):\n%s", args, err, out)
					}
				}
			})
		}
	}
}

// TestRateFileModuleCache: a package in the module cache, where the go
// command adds no file, gets the rate file in package testing.
func TestRateFileModuleCache(t *testing.T) {
	if testing.Short() {
		t.Skip("builds test binaries")
	}
	ctx := context.Background()
	paths, err := goEnvPaths(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	bins, _, err := listPackages(ctx, ".", []string{"github.com/google/pprof/profile"}, nil)
	if err != nil || len(bins) != 1 {
		t.Fatalf("%d packages, %v", len(bins), err)
	}
	b := bins[0]
	if !within(paths.modcache, b.Dir) {
		t.Skipf("%s is not in the module cache (%s)", b.Dir, paths.modcache)
	}
	target, err := b.rateTarget(paths, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.build(ctx, ".", t.TempDir(), 0, nil, target); err != nil {
		t.Fatal(err)
	}
	if b.cpuHz != cpuProfileHz {
		t.Errorf("cpuHz %d (%v), want %d", b.cpuHz, b.rateErr, cpuProfileHz)
	}
}

// TestRateFileFallback: where the rate file does not build (here a
// package name go list would never give), the binary is built without
// it and profiles at 100 Hz, and the plan's note says so.
func TestRateFileFallback(t *testing.T) {
	if testing.Short() {
		t.Skip("builds test binaries")
	}
	ctx := context.Background()
	const dir = "testdata/cpurate"
	bins, _, err := listPackages(ctx, dir, []string{"./xonly"}, nil)
	if err != nil || len(bins) != 1 {
		t.Fatalf("%d packages, %v", len(bins), err)
	}
	b := bins[0]
	target := rateTarget{dir: b.Dir, file: "zz_perflab_cpurate_test.go", pkg: "1x"}
	if err := b.build(ctx, dir, t.TempDir(), 0, nil, &target); err != nil {
		t.Fatal(err)
	}
	if b.cpuHz != 100 || b.rateErr == nil {
		t.Fatalf("cpuHz %d (%v), want 100 and why", b.cpuHz, b.rateErr)
	}
	if note := b.rateNote(); !strings.Contains(note, "at 100 Hz") || strings.Contains(note, "(# ") {
		t.Errorf("note %q", note)
	}
	period, out := cpuPeriod(t, b, func(p string) []string { return []string{"-test.cpuprofile=" + p} })
	if period != 1e9/100 || strings.Contains(out, "cpu profile rate") {
		t.Errorf("period %d ns, want %d; output:\n%s", period, int64(1e9/100), out)
	}
}

// TestRateFileReadOnly: a package in a read-only directory builds with
// the rate file among its external tests, and its directory is left as
// it was.
func TestRateFileReadOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds test binaries")
	}
	mod := t.TempDir()
	files := map[string]string{
		"go.mod":         "module example.com/ro\n\ngo 1.22\n",
		"ro_test.go":     "package ro\n\nimport \"testing\"\n\nfunc BenchmarkNothing(b *testing.B) {\n\tfor range b.N {\n\t}\n}\n",
		"ro.go":          "package ro\n",
		"ro_ext_test.go": "package ro_test\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(text), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(mod, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(mod, 0o755) })
	before, _ := os.ReadDir(mod)
	ctx := context.Background()
	bins, _, err := listPackages(ctx, mod, []string{"."}, nil)
	if err != nil || len(bins) != 1 {
		t.Fatalf("%d packages, %v", len(bins), err)
	}
	b := bins[0]
	target, ok := rateTargetFor("", "", b.Dir, b.name)
	if !ok {
		t.Fatal("no place for the rate file")
	}
	if err := b.build(ctx, mod, t.TempDir(), 0, nil, &target); err != nil {
		t.Fatal(err)
	}
	if b.cpuHz != cpuProfileHz {
		t.Errorf("cpuHz %d (%v), want %d", b.cpuHz, b.rateErr, cpuProfileHz)
	}
	if after, _ := os.ReadDir(mod); len(after) != len(before) {
		t.Errorf("directory has %d entries, had %d", len(after), len(before))
	}
	if period, _ := cpuPeriod(t, b, func(p string) []string { return []string{"-test.cpuprofile=" + p} }); period != int64(1e9/cpuProfileHz) {
		t.Errorf("period %d ns, want %d", period, int64(1e9/cpuProfileHz))
	}
}

// TestRateTargetRefuses: no rate file where go env failed, or where
// GOFLAGS has an -overlay that the command line's would replace.
func TestRateTargetRefuses(t *testing.T) {
	b := &testBinary{ImportPath: "x", Dir: "/src/x", name: "x"}
	paths := goPaths{goroot: "/usr/local/go", modcache: "/home/u/go/pkg/mod"}
	if target, err := b.rateTarget(paths, nil); err != nil || target == nil {
		t.Fatalf("%v, %v; want a place", target, err)
	}
	for _, tt := range []struct {
		name  string
		paths goPaths
		err   error
		want  string
	}{
		{"go env failed", paths, errors.New("go: no go"), "go: no go"},
		{"GOFLAGS overlay", goPaths{goroot: paths.goroot, modcache: paths.modcache, goflags: "-mod=mod -overlay=o.json"}, nil, "GOFLAGS has an -overlay"},
	} {
		if target, err := b.rateTarget(tt.paths, tt.err); target != nil || err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, %v; want no place, %q", tt.name, target, err, tt.want)
		}
	}
}
