package cli

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"
)

// usageError marks an error in how perflab was called (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(err error) error { return usageError{err} }

func isUsageError(err error) bool {
	var u usageError
	if errors.As(err, &u) {
		return true
	}
	// cobra reports unknown commands and argument-count errors as plain
	// errors; recognise them by their fixed wording.
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "requires at least", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// flagErrors wraps cobra's flag parsing errors as usage errors.
func flagErrors(c *cobra.Command, err error) error { return usagef(err) }
