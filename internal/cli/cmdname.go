package cli

import (
	"path/filepath"
	"strings"

	"github.com/perflab/perflab/internal/lab"
	"github.com/spf13/cobra"
)

// commandName says how the user ran this binary, for the hints that name
// a command to type next ("perflab show RUN"): a module made by perflab
// new runs perflab as `go run .`, where a hint saying `perflab show` names
// a command that is not there. It is a function of os.Args[0] alone:
//
//   - "perflab" for a binary named perflab (perflab.exe on Windows);
//   - "go run ." for one the go command built to run: go run links into
//     $WORK/b001/exe/NAME, $WORK a go-build directory under $GOTMPDIR or
//     the system's temporary directory, and since Go 1.24 runs it from
//     the build cache once built, $GOCACHE/xx/<sha256 hex>-d/NAME (seen
//     here: the first go run of a module had the first path, the next
//     ones the second). go test's binaries, in $WORK/b001/ with no exe/,
//     are not taken for it;
//   - else the binary's base name: a user's own main built with go build
//     or go install, such as my-cache.
func commandName(arg0 string) string {
	base := strings.TrimSuffix(filepath.Base(arg0), ".exe")
	switch {
	case base == "perflab":
		return "perflab"
	case goRunBinary(arg0):
		return "go run ."
	case base == "" || base == "." || base == string(filepath.Separator):
		return "perflab"
	}
	return base
}

// goRunBinary says path is where go run puts the binary it runs:
// .../go-buildNNN/bNNN/exe/NAME as it builds it, or the build cache's
// .../xx/<64 hex digits>-d/NAME (cmd/go/internal/cache's file name for
// an output directory, xx the id's first byte) when it was built before.
func goRunBinary(path string) bool {
	dir := filepath.Dir(path)
	parent := filepath.Dir(dir)
	if filepath.Base(dir) == "exe" && strings.HasPrefix(filepath.Base(parent), "b") && strings.HasPrefix(filepath.Base(filepath.Dir(parent)), "go-build") {
		return true
	}
	id, ok := strings.CutSuffix(filepath.Base(dir), "-d")
	return ok && len(id) == 64 && isHex(id) && len(filepath.Base(parent)) == 2 && strings.HasPrefix(id, filepath.Base(parent))
}

func isHex(s string) bool {
	for _, r := range s {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
			return false
		}
	}
	return true
}

// cmd is the command line a hint tells the user to type: sub (such as
// "show --list") after the command they ran perflab by.
func (io *IO) cmd(sub string) string {
	if io == nil {
		return lab.CommandLine("", sub)
	}
	return lab.CommandLine(io.Cmd, sub)
}

// cmdAnnotation is the root command's annotation that holds IO.Cmd, for
// the hints cobra's callbacks give, which see the command but not the IO.
const cmdAnnotation = "perflab.cmd"

// commandPath is cmd's command line as the user types it: cobra's
// CommandPath ("perflab runs") with the root's name replaced by the
// command perflab was run by ("go run . runs").
func commandPath(cmd *cobra.Command) string {
	root := cmd.Root()
	name := root.Annotations[cmdAnnotation]
	if name == "" {
		return cmd.CommandPath()
	}
	if cmd == root {
		return name
	}
	return name + strings.TrimPrefix(cmd.CommandPath(), root.Name())
}
