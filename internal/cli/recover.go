package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/store"
	"github.com/spf13/cobra"
)

// RecoverOptions are the flags of `perflab recover`.
type RecoverOptions struct {
	IDs []string
	Dir string
}

func newRecoverCmd(io *IO, runF runFunc[RecoverOptions]) *cobra.Command {
	o := &RecoverOptions{}
	cmd := &cobra.Command{
		Use:   "recover [run-id...]",
		Short: "Save runs left partial by a killed perflab as incomplete runs",
		Long: `A run is written into a hidden partial directory and checkpointed after every
round; if perflab is killed (kill -9, a second Ctrl-C, a crash) before it saves
the run, the rounds measured so far stay there. recover saves each such run as an
incomplete run, which show, compare and serve then read. With no id it recovers
every partial run whose process has ended; a run still being written is left
alone.`,
		Example: `  perflab show --list          # says which runs were left partial
  perflab recover              # saves them all
  perflab recover 20261203-071500-cipher-cache`,
		RunE: func(cmd *cobra.Command, a []string) error {
			o.IDs = a
			return runF.or(recoverRun)(cmd.Context(), io, o)
		},
	}
	storeFlag(cmd.Flags(), &o.Dir)
	return cmd
}

func recoverRun(_ context.Context, io *IO, o *RecoverOptions) error {
	st := store.Open(store.Dir(o.Dir))
	ids := o.IDs
	if len(ids) == 0 {
		_, skipped, err := st.List()
		if err != nil {
			return err
		}
		for _, e := range skipped {
			var u *store.Unlisted
			if errors.As(e, &u) && u.Abandoned {
				ids = append(ids, u.ID)
			}
		}
		if len(ids) == 0 {
			fmt.Fprintf(io.Err, "perflab: no run in %s was left partial by a process that ended\n", st.Root)
			return nil
		}
	}
	var errs []error
	for _, id := range ids {
		r, err := st.Recover(id)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(io.Out, "recovered %s: %s, incomplete (`%s`)\n", r.ID, report.Count(measuredCases(r), "case")+" measured", io.cmd("show "+r.ID))
	}
	return errors.Join(errs...)
}

// measuredCases counts the cases of r with a repetition.
func measuredCases(r *model.Run) int {
	n := 0
	for _, c := range r.Cases {
		if len(c.Reps) > 0 {
			n++
		}
	}
	return n
}
