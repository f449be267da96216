package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// usageError marks an error in how perflab was called (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(err error) error { return usageError{err} }

// isUsageError reports whether err is a usage error: by type only. Every
// argument check, flag error and unknown command is wrapped as one where
// it arises (args, flagErrors, noSuchCommand), not recognised by cobra's
// English afterwards.
func isUsageError(err error) bool {
	var u usageError
	return errors.As(err, &u)
}

// flagErrors wraps cobra's flag parsing errors as usage errors, saying
// what a bad value should have been in the user's terms: pflag's own
// words end in strconv's (`strconv.Atoi: parsing "x": invalid syntax`).
func flagErrors(c *cobra.Command, err error) error {
	var iv *pflag.InvalidValueError
	if errors.As(err, &iv) {
		return usagef(invalidValue(iv))
	}
	// A mistyped command with a flag after it (perflab runn cipher-cache
	// -o DIR) reaches here, not noSuchCommand: cobra parses the flags of
	// the command it found, the root, first. The command is the mistake.
	if c.HasSubCommands() {
		if a := c.Flags().Args(); len(a) > 0 {
			if err := noSuchCommand(c, a); err != nil {
				return err
			}
		}
	}
	if u := unknownFlag(c, err); u != nil {
		return usagef(u)
	}
	return usagef(err)
}

// invalidValue says what is wrong with a flag's value: `--threads: "x" is
// not a whole number`.
func invalidValue(iv *pflag.InvalidValueError) error {
	f, value := iv.GetFlag(), iv.GetValue()
	name := "--" + f.Name
	typ := f.Value.Type()
	want := ""
	switch {
	case strings.HasPrefix(typ, "uint"):
		want = "a whole number (0 or more)"
	case strings.HasPrefix(typ, "int"):
		want = "a whole number"
	case strings.HasPrefix(typ, "float"):
		want = "a number"
	case typ == "bool":
		want = "true or false"
	case strings.HasPrefix(typ, "duration"):
		want = "a duration, such as 200ms, 1.5s or 2m"
	}
	bad := value
	var ne *strconv.NumError
	if errors.As(iv, &ne) {
		bad = ne.Num // the one element of a list that is wrong
		if errors.Is(ne.Err, strconv.ErrRange) {
			want = "in range"
		}
	}
	if bad != value {
		name += " " + value
	}
	if want == "" {
		return fmt.Errorf("%s: invalid value %q: %v", name, value, errors.Unwrap(iv))
	}
	if want == "in range" {
		return fmt.Errorf("%s: %q is out of range", name, bad)
	}
	// Days are what one means by --older-than 7d, and Go's durations stop
	// at hours: say the hours rather than leave "such as 2m" as the hint.
	if days, err := strconv.ParseFloat(strings.TrimSuffix(bad, "d"), 64); strings.HasPrefix(typ, "duration") && strings.HasSuffix(bad, "d") && err == nil && days > 0 {
		return fmt.Errorf("%s: %q is not a duration: hours are the largest unit, so write %gh", name, bad, days*24)
	}
	return fmt.Errorf("%s: %q is not %s", name, bad, want)
}
