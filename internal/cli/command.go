package cli

import (
	"context"
	"fmt"
	"strconv"

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

// argsCheckedHelp gives every command with subcommands under root (root
// itself, runs) a --help that gives way to the command's argument check.
// cobra answers --help before it checks arguments, so `perflab shwo
// --help` printed the root's help and exited 0: a mistyped command passed
// for a request for help, and a script went on. Call it once every
// command is added.
func argsCheckedHelp(root *cobra.Command) {
	var visit func(c *cobra.Command)
	visit = func(c *cobra.Command) {
		if !c.HasSubCommands() {
			return
		}
		name := c.DisplayName()
		f := c.Flags().VarPF(&helpFlag{cmd: c}, "help", "h", "help for "+name)
		f.NoOptDefVal = "true"
		// As cobra marks its own help flag (shell completion leaves it out).
		_ = c.Flags().SetAnnotation("help", cobra.FlagSetByCobraAnnotation, []string{"true"})
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	visit(root)
}

// helpFlag is a bool flag that reads as unset when its command's
// arguments fail the command's check (noSuchCommand: an argument that
// names no subcommand): cobra then goes on to that check and returns its
// did-you-mean, a usage error, instead of printing help. With arguments
// that pass, it is cobra's --help.
type helpFlag struct {
	cmd *cobra.Command
	on  bool
}

func (h *helpFlag) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	h.on = v
	return nil
}

func (h *helpFlag) Type() string { return "bool" }

// IsBoolFlag says the flag takes no value (as the flag package's).
func (h *helpFlag) IsBoolFlag() bool { return true }

// String is what cobra reads (Flags().GetBool), once the flags are parsed
// and before it checks the arguments.
func (h *helpFlag) String() string {
	return strconv.FormatBool(h.on && h.cmd.ValidateArgs(h.cmd.Flags().Args()) == nil)
}
