package cli

import (
	"errors"

	"github.com/spf13/cobra"
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

// flagErrors wraps cobra's flag parsing errors as usage errors.
func flagErrors(c *cobra.Command, err error) error { return usagef(err) }
