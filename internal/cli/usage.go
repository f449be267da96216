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
	// Flag errors arrive wrapped (flagErrors); these are cobra's command
	// and argument-count messages.
	for _, p := range []string{"unknown command", "accepts at most", "accepts between", "accepts 0 arg", "requires at least", "requires at most", "requires exactly"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// flagErrors wraps cobra's flag parsing errors as usage errors.
func flagErrors(c *cobra.Command, err error) error { return usagef(err) }
