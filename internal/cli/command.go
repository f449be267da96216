package cli

import (
	"context"
	"fmt"

	"github.com/perflab/perflab/internal/store"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// runFunc is a verb's run function: it takes the parsed options and does
// the work. Every newXCmd takes one, nil for the real one, as cli/cli's
// NewCmdX(f, runF) does: tests pass their own to check what the flags
// parse to without running anything.
type runFunc[O any] func(ctx context.Context, io *IO, o *O) error

// or returns f, or def when f is nil.
func (f runFunc[O]) or(def runFunc[O]) runFunc[O] {
	if f == nil {
		return def
	}
	return f
}

// storeFlag adds the run store flag every verb that reads or writes runs
// has: -o/--out, default $PERFLAB_DIR or ./perflab-runs.
func storeFlag(f *pflag.FlagSet, p *string) {
	f.StringVarP(p, "out", "o", "", "run store directory (default $"+store.EnvDir+" or "+store.DefaultDir+")")
}

// args wraps a cobra argument check so its error is a usage error (exit
// 2) by type, not recognised later by its English.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := check(cmd, a); err != nil {
			return usagef(err)
		}
		return nil
	}
}

// noSuchCommand is the root's argument check: with subcommands, cobra
// calls it only when no subcommand matched the first argument.
func noSuchCommand(cmd *cobra.Command, a []string) error {
	if len(a) > 0 {
		hint := didYouMean(a[0], commandNames(cmd))
		if h, ok := otherNames[a[0]]; ok && hint == "" && !cmd.HasParent() {
			hint = ": " + fmt.Sprintf(h, commandPath(cmd))
		}
		return usagef(fmt.Errorf("unknown command %q for %q%s (see %s --help)", a[0], commandPath(cmd), hint, commandPath(cmd)))
	}
	return nil
}

// otherNames are commands a user may look for under a name perflab does
// not give them: the manual calls compare's --fail-on the CI gate, and a
// new user typed `perflab gate`. %s is the command the user ran.
var otherNames = map[string]string{
	"gate": "the CI gate is %s compare OLD NEW --fail-on regression",
}
