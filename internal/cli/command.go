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
// has: -o/--out, default $PERFLAB_DIR or ./perflab-runs; and --store, the
// same, not listed. flame's -o is its output file, as go tool pprof's is,
// in the manual and in scripts, so its store is --store (flameStoreFlag),
// which every other command takes too: one spelling works everywhere.
func storeFlag(f *pflag.FlagSet, p *string) {
	f.StringVarP(p, "out", "o", "", "run store directory (default $"+store.EnvDir+" or "+store.DefaultDir+")")
	f.StringVar(p, "store", "", "run store directory, as --out")
	_ = f.MarkHidden("store")
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
// itself, runs) a --help that gives way to the command's argument check,
// the root a --version that does the same, and the help command the
// check of the command it is asked about. cobra answers --help and
// --version before it checks arguments, and `help X` finds X's nearest
// command without checking what is left, so `perflab shwo --help`,
// `perflab shwo --version` and `perflab help shwo` printed the root's
// help or the version and exited 0: a mistyped command passed for a
// request for help, and a script went on. Now all three say `unknown
// command "shwo" for "perflab": did you mean show?` and exit 2. Call it
// once every command is added.
func argsCheckedHelp(root *cobra.Command) {
	var visit func(c *cobra.Command)
	visit = func(c *cobra.Command) {
		if !c.HasSubCommands() {
			return
		}
		argsCheckedBool(c, "help", "h", "help for "+c.DisplayName())
		if c.Version != "" {
			// As cobra names its own (InitDefaultVersionFlag), which
			// then leaves this one alone.
			argsCheckedBool(c, "version", "v", "version for "+c.DisplayName())
		}
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	visit(root)
	// cobra makes its help command once, and adds the same one again at
	// every Execute: its Run is cobra's, its Args now ours.
	root.InitDefaultHelpCmd()
	if help, _, err := root.Find([]string{"help"}); err == nil && help != root {
		help.Args = helpTopic
	}
}

// helpTopic is the help command's argument check: `help X Y` asks about
// what `X Y --help` does, so it fails where that fails, with the same
// did-you-mean. On a command without subcommands --help answers whatever
// follows it, and so does help.
func helpTopic(cmd *cobra.Command, a []string) error {
	topic, rest, err := cmd.Root().Find(a)
	if err != nil {
		return usagef(err)
	}
	if topic.HasSubCommands() {
		return topic.ValidateArgs(rest)
	}
	return nil
}

// argsCheckedBool adds to c the bool flag name (cobra's --help or
// --version) as an argsCheckedFlag.
func argsCheckedBool(c *cobra.Command, name, short, usage string) {
	f := c.Flags().VarPF(&argsCheckedFlag{cmd: c}, name, short, usage)
	f.NoOptDefVal = "true"
	// As cobra marks its own (shell completion leaves them out).
	_ = c.Flags().SetAnnotation(name, cobra.FlagSetByCobraAnnotation, []string{"true"})
}

// argsCheckedFlag is a bool flag that reads as unset when its command's
// arguments fail the command's check (noSuchCommand: an argument that
// names no subcommand): cobra then goes on to that check and returns its
// did-you-mean, a usage error, instead of printing help or the version.
// With arguments that pass, it is cobra's --help or --version.
type argsCheckedFlag struct {
	cmd *cobra.Command
	on  bool
}

func (h *argsCheckedFlag) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	h.on = v
	return nil
}

func (h *argsCheckedFlag) Type() string { return "bool" }

// IsBoolFlag says the flag takes no value (as the flag package's).
func (h *argsCheckedFlag) IsBoolFlag() bool { return true }

// String is what cobra reads (Flags().GetBool), once the flags are parsed
// and before it checks the arguments.
func (h *argsCheckedFlag) String() string {
	return strconv.FormatBool(h.on && h.cmd.ValidateArgs(h.cmd.Flags().Args()) == nil)
}
