package scaffold

import (
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// PseudoVersion returns the Go pseudo-version of the commit checked out
// in dir (v0.0.0-20261203071057-0e9cf0120e23, or v0.2.1-0.… after a tag
// v0.2.0), what `go get` would resolve that commit to once it is public:
// the require a new go.mod can keep when its replace is deleted. It
// returns "" when dir is not a git checkout or git is not installed.
func PseudoVersion(dir string) string {
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		// Pseudo-versions stamp the commit time in UTC.
		cmd.Env = append(cmd.Environ(), "TZ=UTC")
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	out, err := git("log", "-1", "--format=%H %cd", "--date=format-local:%Y%m%d%H%M%S", "HEAD")
	hash, stamp, ok := strings.Cut(out, " ")
	if err != nil || !ok || len(hash) < 12 || len(stamp) != 14 {
		return ""
	}
	rev := stamp + "-" + hash[:12]
	if tags, err := git("tag", "--points-at", "HEAD"); err == nil {
		for _, t := range strings.Fields(tags) {
			if semverRE.MatchString(t) {
				return t // a release: go get resolves the commit to it
			}
		}
	}
	tag, err := git("describe", "--tags", "--abbrev=0", "--match", "v[0-9]*", "HEAD")
	if err != nil || tag == "" {
		return "v0.0.0-" + rev
	}
	return pseudoAfter(tag, rev)
}

var semverRE = regexp.MustCompile(`^v(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?$`)

// pseudoAfter is the pseudo-version of a commit after tag: vX.Y.(Z+1)-0.REV
// after a release, vX.Y.Z-pre.0.REV after a pre-release; "" for a tag
// that is not semver (go would not use it either).
func pseudoAfter(tag, rev string) string {
	m := semverRE.FindStringSubmatch(tag)
	if m == nil {
		return "v0.0.0-" + rev
	}
	if m[4] != "" {
		return tag + ".0." + rev
	}
	patch, err := strconv.Atoi(m[3])
	if err != nil {
		return ""
	}
	return fmt.Sprintf("v%s.%s.%d-0.%s", m[1], m[2], patch+1, rev)
}
