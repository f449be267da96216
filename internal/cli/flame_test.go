package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const realCPU = "../../profiles/testdata/real/cpu.pb.gz"

func TestFlameFormats(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		file string
		want []string
	}{
		{"svg to stdout", []string{"flame", realCPU, "--work", "^crypto/"}, "", []string{"<svg", "work 28.8%", "sha256.blockSHANI"}},
		{"svg file", []string{"flame", realCPU, "-o", filepath.Join(dir, "a.svg")}, "a.svg", []string{"<svg", "cpu (nanoseconds)"}},
		{"html file", []string{"flame", realCPU, "-o", filepath.Join(dir, "a.html"), "--title", "<cpu>"}, "a.html", []string{"<!DOCTYPE html>", "PerflabFlame.mount", "&lt;cpu&gt;"}},
		{"folded", []string{"flame", realCPU, "-o", filepath.Join(dir, "a.folded")}, "a.folded", []string{"main.worker;main.hashWork;crypto/sha256.Sum256"}},
		{"sample type", []string{"flame", realCPU, "--sample-type", "samples"}, "", []string{"samples (count)"}},
		{"diff", []string{"flame", "--diff", realCPU, realCPU, "-o", filepath.Join(dir, "d.svg")}, "d.svg", []string{"scaled to the same total", "(+0.0 pt)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := execute(t, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if tt.file != "" {
				b, err := os.ReadFile(filepath.Join(dir, tt.file))
				if err != nil {
					t.Fatal(err)
				}
				out = string(b)
				if !strings.Contains(errs, "wrote ") {
					t.Errorf("stderr: %q", errs)
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q", w)
				}
			}
		})
	}
}

func TestFlameErrors(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.pb.gz")
	os.WriteFile(junk, []byte("this is not a profile"), 0o644)
	rules := filepath.Join(dir, "rules.txt")
	os.WriteFile(rules, []byte("speed ^x\n"), 0o644)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no args", []string{"flame"}, 2, "name a profile to draw"},
		{"missing", []string{"flame", filepath.Join(dir, "nope.pb.gz")}, 2, "no such profile file"},
		{"junk", []string{"flame", junk}, 1, "not a pprof profile"},
		{"two without diff", []string{"flame", realCPU, realCPU}, 2, "two with --diff"},
		{"diff with one", []string{"flame", "--diff", realCPU}, 2, "--diff needs two profiles"},
		{"bad extension", []string{"flame", realCPU, "-o", "x.png"}, 2, "cannot tell the format"},
		{"bad sample type", []string{"flame", realCPU, "--sample-type", "delay"}, 2, `no sample type "delay"`},
		{"bad rules", []string{"flame", realCPU, "--rules", rules}, 2, `rules.txt:1: unknown category "speed"`},
		{"bad work", []string{"flame", realCPU, "--work", "("}, 2, "work pattern"},
		{"diff folded", []string{"flame", "--diff", realCPU, realCPU, "-o", "x.folded"}, 2, "not folded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs, code := execute(t, tt.args...)
			if code != tt.code || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, want %d; stderr %q, want %q", code, tt.code, errs, tt.want)
			}
		})
	}
}

// TestFlameRunCase draws a case of a stored run, by "run-dir/case name"
// and by case directory, with the scenario's own work patterns.
func TestFlameRunCase(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a scenario")
	}
	dir := filepath.Join(t.TempDir(), "runs")
	_, errs, code := execute(t, "run", "cipher-cache", "--variant", "sum256", "-p", "keys=128",
		"--threads", "1", "--count", "2", "--time", "2ms", "--warmup", "1ms", "--profile", "wall", "--profile-time", "300ms", "-o", dir)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errs)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("store has %d entries", len(entries))
	}
	runDir := filepath.Join(dir, entries[0].Name())
	caseName := "variant=sum256/keys=128/key=ssk/threads=1"
	out, errs, code := execute(t, "flame", filepath.Join(runDir, caseName))
	if code != 0 {
		t.Fatalf("flame run/case: exit %d\n%s", code, errs)
	}
	if !strings.Contains(out, "cipher-cache "+caseName+" (wall)") || !strings.Contains(out, "work ") {
		t.Errorf("SVG lacks the case title or legend:\n%.600s", out)
	}
	if strings.Contains(out, ">work 0.0%<") {
		t.Errorf("the scenario's work patterns were not used:\n%.1200s", out)
	}
	cases, _ := os.ReadDir(filepath.Join(runDir, "cases"))
	if len(cases) != 1 {
		t.Fatalf("%d case directories", len(cases))
	}
	_, errs, code = execute(t, "flame", filepath.Join(runDir, "cases", cases[0].Name()))
	if code != 0 {
		t.Errorf("flame case-dir: exit %d\n%s", code, errs)
	}
	// The profile file itself, inside the run, gets the scenario's rules too.
	out, errs, code = execute(t, "flame", filepath.Join(runDir, "cases", cases[0].Name(), "wall.pb.gz"))
	if code != 0 || !strings.Contains(out, "cipher-cache "+cases[0].Name()+" (wall.pb.gz)") {
		t.Errorf("flame case file: exit %d, title missing\n%s%.400s", code, errs, out)
	}
	_, errs, code = execute(t, "flame", runDir)
	if code != 2 || !strings.Contains(errs, "is a whole run") {
		t.Errorf("flame run-dir: exit %d\n%s", code, errs)
	}
	_, errs, code = execute(t, "flame", filepath.Join(runDir, "variant=nope"))
	if code != 2 || !strings.Contains(errs, `no case "variant=nope"`) {
		t.Errorf("flame unknown case: exit %d\n%s", code, errs)
	}
}
