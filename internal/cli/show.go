package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/store"
	"github.com/spf13/cobra"
)

// ShowOptions are the flags of `perflab show`.
type ShowOptions struct {
	Ref                       string
	Dir                       string
	JSON, List, Wide, Verbose bool
}

func newShowCmd(io *IO, runF runFunc[ShowOptions]) *cobra.Command {
	o := &ShowOptions{}
	cmd := &cobra.Command{
		Use:   "show [run-id | latest | run-directory][/CASE]",
		Short: "Print a stored run (default the latest) or one of its cases, or list runs with --list",
		Args:  args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			o.Ref = store.Latest
			if len(a) == 1 {
				o.Ref = a[0]
			}
			return runF.or(showRun)(cmd.Context(), io, o)
		},
	}
	storeFlag(cmd.Flags(), &o.Dir)
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the report as JSON, of the run or of its one case (the stored run, every repetition included, is run.json in the store)")
	cmd.Flags().BoolVar(&o.Verbose, "verbose", false, "show every warning and note, each case's in full")
	cmd.Flags().BoolVar(&o.List, "list", false, "list stored runs, newest first")
	cmd.Flags().BoolVar(&o.Wide, "wide", false, "one table row per variant with every column, whatever the width (default: fit 80 columns)")
	return cmd
}

func showRun(_ context.Context, io *IO, o *ShowOptions) error {
	st := store.Open(store.Dir(o.Dir))
	if o.List {
		return listRuns(io, st)
	}
	r, err := resolve(io, st, o.Ref)
	if err != nil {
		return err
	}
	if r.Case != nil {
		// One case: what the web's case page says (report.BuildCase).
		rc := report.BuildCase(r.Case)
		if o.JSON {
			return report.WriteCaseJSON(io.Out, r.Run, rc)
		}
		return report.WriteCaseText(io.Out, r.Run, rc, 0)
	}
	if o.JSON {
		return writeJSON(io.Out, r.Run)
	}
	writeTable(io.Out, r.Run, o.Wide, o.Verbose)
	return nil
}

func listRuns(io *IO, st *store.Store) error {
	runs, skipped, err := st.List()
	if err != nil {
		return err
	}
	for _, e := range skipped {
		// Wrapped at 80 columns: with its store path and the recover
		// command, a partial run's line ran to 340 (issue 25 found a
		// 211-column line of this kind on every listing). The command
		// has a line of its own, whole, to be copied.
		noteWrapped(io.Err, "not listed: "+report.SafeText(e.Error()))
		if u, ok := e.(*store.Unlisted); ok && u.Abandoned {
			fmt.Fprintf(io.Err, "  recover it: `%s`\n", report.SafeText(io.cmd("recover "+u.ID)))
		}
	}
	if len(runs) == 0 {
		fmt.Fprintf(io.Err, "no runs in %s\n", st.Root)
		return nil
	}
	// The widths of the columns but the scenario's, which gets what is
	// left of 80: a bench run's scenario is its package's import path,
	// which ran the listing to 130 columns. The commit is git's short
	// hash, seven digits (git log --oneline's), for the same reason.
	idW, casesW, statusW, commitW := len("ID"), len("CASES"), len("STATUS"), len("COMMIT")
	for _, r := range runs {
		idW = max(idW, utf8.RuneCountInString(r.ID))
		casesW = max(casesW, len(fmt.Sprint(len(r.Cases))))
		statusW = max(statusW, utf8.RuneCountInString(report.ListStatus(r)))
		commitW = max(commitW, min(7, utf8.RuneCountInString(report.Safe(r.Env.Commit))))
	}
	scenarioW := max(minScenarioWidth, 80-4*2-idW-casesW-statusW-commitW)
	tw := tabwriter.NewWriter(io.Out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSCENARIO\tCASES\tSTATUS\tCOMMIT")
	for _, r := range runs {
		status := report.ListStatus(r)
		// The scenario and commit are read from run.json: escaped.
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%.7s\n", r.ID, shortPath(report.Safe(r.Scenario), scenarioW), len(r.Cases), status, report.Safe(r.Env.Commit))
	}
	return tw.Flush()
}

// minScenarioWidth is the least a listing's scenario column is cut to.
const minScenarioWidth = 10

// shortPath fits an import path into width columns: its last elements,
// as many as fit after "…/" (".../testdata/benchfix"), or, where the last
// alone is too long, its start and "…".
func shortPath(s string, width int) string {
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	parts := strings.Split(s, "/")
	tail := ""
	for i := len(parts) - 1; i > 0; i-- {
		next := parts[i]
		if tail != "" {
			next += "/" + tail
		}
		if utf8.RuneCountInString(next)+2 > width {
			break
		}
		tail = next
	}
	if tail != "" {
		return "…/" + tail
	}
	r := []rune(s)
	return string(r[:width-1]) + "…"
}
