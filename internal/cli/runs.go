package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/store"
	"github.com/spf13/cobra"
)

// RunsOptions are the flags of `perflab runs rm` and `perflab runs prune`.
type RunsOptions struct {
	Dir string
	// IDs are the runs rm removes.
	IDs []string
	// Incomplete, Empty and OlderThan select the runs prune removes.
	Incomplete, Empty bool
	OlderThan         time.Duration
	// Yes removes without asking; DryRun only lists.
	Yes, DryRun bool
	now         time.Time
}

// stalePartial is how long a partial run must have gone unwritten before
// prune --incomplete takes it for one a killed process left: a run being
// written checkpoints its run.json every round.
const stalePartial = time.Hour

func newRunsCmd(io *IO, rmF, pruneF runFunc[RunsOptions]) *cobra.Command {
	// Alone, runs lists the store, as show --list does: the verb a user
	// types to see the runs is the noun (git branch, git remote). It
	// printed its help, which a user read as the command doing nothing;
	// a usage error would have named show --list, a read-only listing
	// this can give at once.
	listO := &RunsOptions{}
	runs := &cobra.Command{
		Use:   "runs",
		Short: "List stored runs (as show --list); rm and prune remove them",
		Long: `runs lists the stored runs, newest first, as show --list does. Its
subcommands remove runs: rm by id, prune the incomplete, empty or old ones.`,
		Example: `  perflab runs
  perflab runs rm 20261130-111905-cipher-cache
  perflab runs prune --empty`,
		Args: noSuchCommand,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return listRuns(io, store.Open(store.Dir(listO.Dir)))
		},
	}
	storeFlag(runs.Flags(), &listO.Dir)
	flags := func(cmd *cobra.Command, o *RunsOptions) {
		storeFlag(cmd.Flags(), &o.Dir)
		cmd.Flags().BoolVarP(&o.Yes, "yes", "y", false, "remove without asking (needed when stdin is not a terminal)")
		cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "list what would be removed, remove nothing")
	}
	rmO := &RunsOptions{}
	rm := &cobra.Command{
		Use:   "rm <run-id>...",
		Short: "Remove stored runs by id, after asking",
		Args: func(cmd *cobra.Command, a []string) error {
			if len(a) == 0 {
				return usagef(errors.New("name the runs to remove (" + io.cmd("show --list") + " lists them)"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, a []string) error {
			rmO.IDs = a
			return rmF.or(runsRm)(cmd.Context(), io, rmO)
		},
	}
	flags(rm, rmO)
	pruneO := &RunsOptions{}
	prune := &cobra.Command{
		Use:   "prune [--incomplete] [--empty] [--older-than DURATION]",
		Short: "Remove incomplete, empty or old runs, after asking",
		Long: `Remove the runs that match: --incomplete (interrupted, or partial ones a killed
process left, unwritten for an hour), --empty (measured nothing: interrupted
before the first repetition, or every case failed). --older-than keeps the
runs started within the duration; alone, it removes every run older.`,
		Example: `  perflab runs prune --empty
  perflab runs prune --incomplete --older-than 168h --dry-run`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return pruneF.or(runsPrune)(cmd.Context(), io, pruneO)
		},
	}
	flags(prune, pruneO)
	prune.Flags().BoolVar(&pruneO.Incomplete, "incomplete", false, "remove interrupted runs, and partial ones left by a killed process")
	prune.Flags().BoolVar(&pruneO.Empty, "empty", false, "remove runs that measured nothing")
	prune.Flags().DurationVar(&pruneO.OlderThan, "older-than", 0, "only runs started longer ago than this, such as 72h")
	runs.AddCommand(rm, prune)
	return runs
}

// doomed is one run to remove, and what is said of it.
type doomed struct {
	id, what string
	partial  bool
}

func runsRm(_ context.Context, io *IO, o *RunsOptions) error {
	st := store.Open(store.Dir(o.Dir))
	var list []doomed
	for _, id := range o.IDs {
		if id == store.Latest {
			return usagef(errors.New("runs rm takes run ids, not latest: name the run (" + io.cmd("show --list") + ")"))
		}
		if !store.ValidID(id) {
			return usagef(fmt.Errorf("%w %q", store.ErrInvalidID, id))
		}
		what := "unreadable"
		r, err := st.Load(id)
		switch {
		case errors.Is(err, store.ErrNoRun):
			return err
		case err == nil:
			what = describe(r)
		}
		list = append(list, doomed{id: id, what: what})
	}
	return remove(io, st, o, list)
}

func runsPrune(_ context.Context, io *IO, o *RunsOptions) error {
	if !o.Incomplete && !o.Empty && o.OlderThan == 0 {
		return usagef(errors.New("say what to prune: --incomplete, --empty or --older-than (see " + io.cmd("runs prune --help") + ")"))
	}
	if o.OlderThan < 0 {
		return usagef(fmt.Errorf("--older-than %s: want a positive duration, such as 72h", o.OlderThan))
	}
	now := o.now
	if now.IsZero() {
		now = time.Now()
	}
	st := store.Open(store.Dir(o.Dir))
	runs, skipped, err := st.List()
	if err != nil {
		return err
	}
	old := func(t time.Time) bool { return o.OlderThan == 0 || now.Sub(t) > o.OlderThan }
	var list []doomed
	for _, r := range runs {
		kind := !o.Incomplete && !o.Empty || o.Incomplete && !r.Complete || o.Empty && !r.Measured()
		if kind && old(r.Started) {
			list = append(list, doomed{id: r.ID, what: describe(r)})
		}
	}
	if o.Incomplete {
		for _, e := range skipped {
			var u *store.Unlisted
			// A partial run whose writer still holds its lock is being
			// written, however long ago its last round ended.
			if !errors.As(e, &u) || !u.Partial || !u.Abandoned {
				continue
			}
			t, err := st.PartialModTime(u.ID)
			if err != nil || now.Sub(t) < max(stalePartial, o.OlderThan) {
				continue // being written now, perhaps
			}
			list = append(list, doomed{id: u.ID, what: "partial, unwritten since " + t.UTC().Format("2006-01-02 15:04"), partial: true})
		}
	}
	if len(list) == 0 {
		fmt.Fprintln(io.Err, "perflab: no run in", st.Root, "matches: nothing to remove")
		return nil
	}
	return remove(io, st, o, list)
}

// describe says what a run is in the list of those to remove.
func describe(r *model.Run) string {
	return r.Started.UTC().Format("2006-01-02 15:04") + ", " + report.ListStatus(r)
}

// remove lists the runs, asks (unless --yes), and removes them. It never
// asks where no one can answer: without a terminal on stdin it refuses
// unless --yes.
func remove(io *IO, st *store.Store, o *RunsOptions, list []doomed) error {
	fmt.Fprintf(io.Out, "%s in %s:\n", report.Count(len(list), "run"), st.Root)
	for _, d := range list {
		fmt.Fprintf(io.Out, "  %s  %s\n", report.SafeText(d.id), report.SafeText(d.what))
	}
	if o.DryRun {
		fmt.Fprintln(io.Err, "perflab: --dry-run: nothing removed")
		return nil
	}
	if !o.Yes {
		if !io.InIsTerminal || io.In == nil {
			return usagef(fmt.Errorf("not removing %s without asking, and stdin is not a terminal to ask on: add --yes", report.Count(len(list), "run")))
		}
		fmt.Fprintf(io.Err, "remove %s? [y/N] ", report.Count(len(list), "run"))
		line, _ := bufio.NewReader(io.In).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(io.Err, "perflab: nothing removed")
			return nil
		}
	}
	var errs []error
	n := 0
	for _, d := range list {
		var err error
		if d.partial {
			err = st.RemovePartial(d.id)
		} else {
			err = st.Remove(d.id)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	fmt.Fprintf(io.Err, "perflab: removed %s\n", report.Count(n, "run"))
	return errors.Join(errs...)
}
