package cli

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/store"
	"github.com/spf13/cobra"
)

func newShowCmd(io *IO) *cobra.Command {
	var dir string
	var asJSON, list, wide bool
	cmd := &cobra.Command{
		Use:   "show [run-id | latest | run-directory]",
		Short: "Print a stored run (default the latest), or list runs with --list",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st := store.Open(store.Dir(dir))
			if list {
				return listRuns(io, st)
			}
			ref := store.Latest
			if len(args) == 1 {
				ref = args[0]
			}
			r, err := st.Resolve(ref)
			if err != nil {
				return err
			}
			run := r.Run
			if asJSON {
				enc := json.NewEncoder(io.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(run)
			}
			writeTable(io.Out, run, wide)
			return nil
		},
	}
	cmd.Flags().StringVarP(&dir, "out", "o", "", "run store directory (default $"+store.EnvDir+" or "+store.DefaultDir+")")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the run as JSON")
	cmd.Flags().BoolVar(&list, "list", false, "list stored runs, newest first")
	cmd.Flags().BoolVar(&wide, "wide", false, "one table row per variant with every column, whatever the width (default: fit 80 columns)")
	return cmd
}

func listRuns(io *IO, st *store.Store) error {
	runs, skipped, err := st.List()
	if err != nil {
		return err
	}
	for _, e := range skipped {
		fmt.Fprintln(io.Err, "perflab: not listed:", report.SafeText(e.Error()))
	}
	if len(runs) == 0 {
		fmt.Fprintf(io.Err, "no runs in %s\n", st.Root)
		return nil
	}
	tw := tabwriter.NewWriter(io.Out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSCENARIO\tCASES\tSTATUS\tCOMMIT")
	for _, r := range runs {
		status := "complete"
		if !r.Complete {
			status = "incomplete"
		}
		// The scenario and commit are read from run.json: escaped.
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%.12s\n", r.ID, report.Safe(r.Scenario), len(r.Cases), status, report.Safe(r.Env.Commit))
	}
	return tw.Flush()
}
