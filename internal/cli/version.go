package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/perflab/perflab/internal/buildinfo"
	"github.com/spf13/cobra"
)

// VersionOptions are the flags of `perflab version` (none).
type VersionOptions struct{}

func newVersionCmd(io *IO, runF runFunc[VersionOptions]) *cobra.Command {
	o := &VersionOptions{}
	return &cobra.Command{
		Use:   "version",
		Short: "Print perflab's version, the commit it was built from and the Go version",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runF.or(func(_ context.Context, io *IO, _ *VersionOptions) error {
				writeVersion(io.Out, buildinfo.Read())
				return nil
			})(cmd.Context(), io, o)
		},
	}
}

// writeVersion writes what `perflab version` and `perflab --version`
// print: perflab's module version, the main module when it is a user's
// own (through perflabcmd), the commit and the Go toolchain.
func writeVersion(w io.Writer, i buildinfo.Info) {
	v := i.Version
	if v == buildinfo.ZeroVersion {
		v = "(devel)" // a replaced module's placeholder, no version at all
	}
	fmt.Fprintf(w, "perflab %s", v)
	if i.Replace != "" {
		fmt.Fprintf(w, " (replaced by %s)", i.Replace)
	}
	fmt.Fprintln(w)
	commitOf := ""
	if i.Main != "" {
		fmt.Fprintf(w, "  in      %s %s\n", i.Main, i.MainVersion)
		commitOf = " (of " + i.Main + ")"
	}
	switch {
	case i.Revision == "":
		fmt.Fprintf(w, "  commit  unknown%s: built with -buildvcs=false or outside a git checkout\n", commitOf)
	default:
		var detail []string
		if i.Time != "" {
			detail = append(detail, i.Time)
		}
		if i.Modified {
			detail = append(detail, "modified")
		}
		fmt.Fprintf(w, "  commit  %s%s", i.Revision, commitOf)
		if len(detail) > 0 {
			fmt.Fprintf(w, " (%s)", strings.Join(detail, ", "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "  go      %s\n", i.GoVersion)
}
