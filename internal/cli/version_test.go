package cli

import (
	"regexp"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/buildinfo"
)

// TestVersionShapes: what `perflab version` prints for a binary built in
// perflab's checkout with and without a VCS stamp, from a release, and
// as a user's own binary through perflabcmd.
func TestVersionShapes(t *testing.T) {
	var b strings.Builder
	for _, tt := range []struct {
		name string
		info buildinfo.Info
	}{
		{"checkout", buildinfo.Info{Version: "(devel)", Revision: "602f94c1d2e3a4b5c6d7e8f90123456789abcdef", Time: "2026-12-03T06:36:12Z", Modified: true, GoVersion: "go1.26.8 linux/amd64"}},
		{"no stamp", buildinfo.Info{Version: "(devel)", GoVersion: "go1.26.8 linux/amd64"}},
		{"release", buildinfo.Info{Version: "v0.3.0", Revision: "602f94c1d2e3a4b5c6d7e8f90123456789abcdef", Time: "2026-12-03T06:36:12Z", GoVersion: "go1.26.8 darwin/arm64"}},
		{"user's binary", buildinfo.Info{Version: buildinfo.ZeroVersion, Replace: "/home/you/perflab", Main: "example.com/my-cache", MainVersion: "(devel)", Revision: "0123456789abcdef0123456789abcdef01234567", GoVersion: "go1.26.8 linux/amd64"}},
	} {
		b.WriteString("# " + tt.name + "\n")
		writeVersion(&b, tt.info)
	}
	golden(t, "version.golden", b.String())
}

// TestVersionCommand: `perflab version` and `perflab --version` print the
// same, in the shape above, with this binary's figures.
func TestVersionCommand(t *testing.T) {
	out, errs, code := execute(t, "version")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, flag := range []string{"--version", "-v"} {
		flagOut, errs, code := execute(t, flag)
		if code != 0 || flagOut != out {
			t.Errorf("%s: exit %d %s\n%q\nwant %q", flag, code, errs, flagOut, out)
		}
	}
	// The varying parts masked.
	masked := regexp.MustCompile(`(?m)^perflab \S+( \(replaced by .*\))?$`).ReplaceAllString(out, "perflab VERSION")
	masked = regexp.MustCompile(`(?m)^  in      .*\n`).ReplaceAllString(masked, "")
	masked = regexp.MustCompile(`(?m)^  commit  .*$`).ReplaceAllString(masked, "  commit  COMMIT")
	masked = regexp.MustCompile(`(?m)^  go      go1\.\d+\S* \w+/\w+$`).ReplaceAllString(masked, "  go      GO")
	golden(t, "version-masked.golden", masked)
}
