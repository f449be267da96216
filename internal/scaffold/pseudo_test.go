package scaffold

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestPseudoAfter(t *testing.T) {
	rev := "20261203071057-0e9cf0120e23"
	for _, tt := range []struct{ tag, want string }{
		{"v0.2.0", "v0.2.1-0." + rev},
		{"v1.9.9", "v1.9.10-0." + rev},
		{"v0.3.0-rc.1", "v0.3.0-rc.1.0." + rev},
		{"version-1", "v0.0.0-" + rev},
	} {
		if got := pseudoAfter(tt.tag, rev); got != tt.want {
			t.Errorf("pseudoAfter(%q) = %q, want %q", tt.tag, got, tt.want)
		}
	}
}

// TestPseudoVersion: the version of a checkout's commit, as go names it:
// the commit time in UTC, whatever the committer's zone, and the tag
// before it.
func TestPseudoVersion(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_COMMITTER_DATE=2026-12-03T09:10:57+02:00", "GIT_AUTHOR_DATE=2026-12-03T09:10:57+02:00",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if PseudoVersion(dir) != "" {
		t.Error("a directory that is no checkout has a version")
	}
	run("init", "-q")
	os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644)
	run("add", "f")
	run("commit", "-q", "-m", "one")
	v := PseudoVersion(dir)
	if len(v) != len("v0.0.0-20261203071057-0e9cf0120e23") || v[:22] != "v0.0.0-20261203071057-" {
		t.Errorf("untagged: %q, want v0.0.0-20261203071057-<hash>", v)
	}
	run("tag", "v0.2.0")
	if v := PseudoVersion(dir); v != "v0.2.0" {
		t.Errorf("at v0.2.0: %q", v)
	}
	os.WriteFile(filepath.Join(dir, "f"), []byte("y"), 0o644)
	run("commit", "-q", "-am", "two")
	if v := PseudoVersion(dir); len(v) < 24 || v[:24] != "v0.2.1-0.20261203071057-" {
		t.Errorf("after v0.2.0: %q", v)
	}
}
