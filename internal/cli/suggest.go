package cli

import (
	"errors"
	"fmt"
	"sort"

	"github.com/perflab/perflab/internal/suggest"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// didYouMean is ": did you mean X?" for an error about typed, or "" when
// nothing in known is close to it.
func didYouMean(typed string, known []string) string {
	if dym := suggest.DidYouMean(typed, known); dym != "" {
		return ": " + dym
	}
	return ""
}

// commandNames are the names and aliases of cmd's subcommands a user can
// call (help included).
func commandNames(cmd *cobra.Command) []string {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() || c.Name() == "help" {
			names = append(names, c.Name())
			names = append(names, c.Aliases...)
		}
	}
	return names
}

// unknownFlag says which flag was meant when err is pflag's for a flag
// cmd does not have: `unknown flag --varient: did you mean --variant?`.
// A long name typed with one dash (-varient, parsed as the shorthands
// v, a, r…) is recognised too. It returns nil for other errors.
func unknownFlag(cmd *cobra.Command, err error) error {
	var ne *pflag.NotExistError
	if !errors.As(err, &ne) {
		return nil
	}
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	sort.Strings(names)
	see := fmt.Sprintf("(see %s --help)", commandPath(cmd))
	if group := ne.GetSpecifiedShortnames(); group != "" {
		if c := suggest.Closest(group, names); len(c) > 0 {
			return fmt.Errorf("unknown flag -%s: did you mean --%s? (long flags take two dashes)", group, c[0])
		}
		return fmt.Errorf("%s %s", ne.Error(), see)
	}
	typed := ne.GetSpecifiedName()
	c := suggest.Closest(typed, names)
	if len(c) == 0 {
		return fmt.Errorf("unknown flag --%s %s", typed, see)
	}
	for i := range c {
		c[i] = "--" + c[i]
	}
	return fmt.Errorf("unknown flag --%s: did you mean %s?", typed, suggest.Or(c))
}
