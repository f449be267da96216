package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/perflab/perflab/internal/lab"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/pyroscope"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/runner"
	"github.com/perflab/perflab/internal/store"
	"github.com/spf13/cobra"
)

// RunOptions are the flags of `perflab run`.
type RunOptions struct {
	Scenarios   []string
	Params      []string // name=v1,v2
	Variants    []string
	Threads     []int
	Count       int
	Time        time.Duration
	Warmup      time.Duration
	Profile     []string
	ProfileTime time.Duration
	Trace       string
	Out         string
	JSON        bool
	Wide        bool
	Verbose     bool
	Until       string
	UntilMax    time.Duration
	Rules       string
	Seed        uint64
	Args        []string
	// Push is a Pyroscope server to send the stored run to, with at most
	// PushTimeout per profile.
	Push        string
	PushTimeout time.Duration
	pusher      *lab.Pusher
	// variantsSet says --variant was given: an empty one is an error,
	// not "every variant".
	variantsSet bool
}

func newRunCmd(io *IO, runF runFunc[RunOptions]) *cobra.Command {
	opts := &RunOptions{}
	cmd := &cobra.Command{
		Use:   "run <scenario>...",
		Short: "Measure and profile every case of one or more scenarios, and store the run",
		Long: `Measure every case (variant × parameters × goroutine count) of a scenario: calibrate,
warm up, then run --count interleaved rounds in shuffled order; profile each case
afterwards (wall-clock, CPU, mutex, block) and split its time into categories.
The run is stored under --out (default ./perflab-runs, or $PERFLAB_DIR).

Results go to stdout (a table, or JSON with --json); progress goes to stderr.`,
		Example: `  perflab run cipher-cache
  perflab run cipher-cache -p keys=128,1024 -p key=chk --threads 1,2,4,8
  perflab run cipher-cache --variant mutex,rwmutex --count 20 --profile none`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef(errors.New("name a scenario to run (see " + io.cmd("list") + ")"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Scenarios = args
			opts.Args = io.Args
			opts.variantsSet = cmd.Flags().Changed("variant")
			return runF.or(runRun)(cmd.Context(), io, opts)
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&opts.Params, "param", "p", nil, "parameter values, `name=v1,v2` (repeatable; threads=… also works)")
	f.StringSliceVar(&opts.Variants, "variant", nil, "variants to run (default all)")
	f.IntSliceVar(&opts.Threads, "threads", nil, "worker goroutines per case (default the scenario's)")
	f.IntVar(&opts.Count, "count", 10, "timed repetitions per case")
	f.DurationVar(&opts.Time, "time", 200*time.Millisecond, "target duration of one repetition")
	f.DurationVar(&opts.Warmup, "warmup", 300*time.Millisecond, "least untimed running per case before timing, calibration included")
	f.StringSliceVar(&opts.Profile, "profile", runner.DefaultProfiles, "profiles to capture: wall,cpu,mutex,block,fgprof or none")
	f.DurationVar(&opts.ProfileTime, "profile-time", time.Second, "profiling window per case")
	f.StringVar(&opts.Trace, "trace", runner.TraceSlices, "where the budget's trace is taken: slices (a short traced repetition beside each timed one, in the rounds) or window (one window per case after the rounds)")
	storeFlag(f, &opts.Out)
	f.BoolVar(&opts.JSON, "json", false, "print the report as JSON instead of a table (one document per scenario; run.json in the store has every repetition)")
	f.BoolVar(&opts.Verbose, "verbose", false, "show every warning and note, each case's in full")
	f.StringVar(&opts.Until, "until", "", "after --count rounds, keep adding rounds until every case's time/op is within ± this `percent` (3 and 3% both mean ±3%)")
	f.DurationVar(&opts.UntilMax, "until-max", 10*time.Minute, "time cap on the rounds --until adds")
	f.BoolVar(&opts.Wide, "wide", false, "one table row per variant with every column, whatever the width (default: fit 80 columns)")
	f.StringVar(&opts.Rules, "rules", "", "file of extra classification rules")
	f.Uint64Var(&opts.Seed, "seed", 0, "seed for the order of cases in each round (default random)")
	f.StringVar(&opts.Push, "push", "", "after storing the run, send its profiles to the Pyroscope server at `URL` (see perflab push)")
	f.DurationVar(&opts.PushTimeout, "push-timeout", pyroscope.DefaultTimeout, "with --push: longest time to spend on one profile, retries included")
	return cmd
}

// parseUntil reads --until as a fraction: "3%" and "3" are both 3%
// (0.03), as --threshold reads them; "" is off (0).
func parseUntil(s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	t, err := parseThreshold(s)
	if err != nil || t <= 0 {
		return 0, fmt.Errorf("--until %q: want a percentage above 0, such as 3%%", s)
	}
	return t, nil
}

func runRun(ctx context.Context, io *IO, o *RunOptions) error {
	// Check everything the user typed before measuring anything.
	until, err := parseUntil(o.Until)
	if err != nil {
		return usagef(err)
	}
	plan, err := lab.PlanMeasure(lab.MeasureRequest{
		Scenarios: o.Scenarios, Params: o.Params, Variants: o.Variants, VariantsSet: o.variantsSet,
		Threads: o.Threads, Count: o.Count, Time: o.Time, Warmup: o.Warmup,
		Profile: o.Profile, ProfileTime: o.ProfileTime, Trace: o.Trace,
		Until: until, UntilMax: o.UntilMax, Rules: o.Rules, Seed: o.Seed, Args: o.Args, Cmd: io.Cmd,
	})
	if err != nil {
		return usagef(err)
	}
	if o.Push != "" {
		if len(plan.Profile) == 0 {
			return usagef(errors.New("--push sends the run's profiles, and --profile none captures none"))
		}
		url, tenant, user, password := pyroscopeServer(o.Push, "", "", "")
		if o.pusher, err = planPush(lab.PushRequest{URL: url, TenantID: tenant, User: user, Password: password, Timeout: o.PushTimeout, TimeoutFlag: "--push-timeout", Cmd: io.Cmd}); err != nil {
			return err
		}
	}
	st := store.Open(store.Dir(o.Out))
	var errs []error
	for i, sp := range plan.Scenarios {
		s := sp.Scenario
		err := runOne(ctx, io, o, st, plan, i)
		var ee *ExitError
		if errors.As(err, &ee) && ee.Code == 130 {
			return err // interrupted: do not start the next scenario
		}
		if ctx.Err() != nil {
			// Interrupted after the run was stored (during --push, say):
			// the next scenario would only store an empty run.
			return errors.Join(append(errs, err, ctx.Err())...)
		}
		if err != nil {
			// A broken variant in one scenario does not stop the others.
			errs = append(errs, fmt.Errorf("%s: %w", s.Name, err))
		}
	}
	return errors.Join(errs...)
}

// noteWrapped writes a note to stderr as "perflab: " and text, broken at
// spaces into lines of at most 80 columns, the later ones indented.
func noteWrapped(w io.Writer, text string) {
	for i, l := range wrap(text, 80-len("perflab: ")) {
		if i == 0 {
			fmt.Fprintln(w, "perflab:", l)
		} else {
			fmt.Fprintln(w, "  "+l)
		}
	}
}

// runOne measures scenario i of plan, stores and pushes the run through
// internal/lab, and says what happens: progress and notes on stderr, the
// table or JSON on stdout.
func runOne(ctx context.Context, io *IO, o *RunOptions, st *store.Store, plan *lab.MeasurePlan, i int) error {
	sp := plan.Scenarios[i]
	v := &runView{progress: newProgress(io, plan.Estimate(i)), o: o, st: st, scenario: sp.Scenario.Name, cases: len(sp.Cases), prof: plan.Profile}
	res, err := plan.Measure(ctx, st, i, v, lab.MeasureOptions{Push: o.pusher, Wrap: wrapSaver})
	var pe *lab.PlanError
	switch {
	case errors.As(err, &pe):
		return usagef(err)
	case res != nil && res.Dir != "" && errors.Is(err, runner.ErrInterrupted):
		return &ExitError{Code: exitInterrupted, Err: err}
	}
	return err
}

// runView shows one scenario's measurement as internal/lab reports it.
type runView struct {
	*progress
	o        *RunOptions
	st       *store.Store
	scenario string
	cases    int
	prof     []string
}

var _ lab.MeasureEvents = (*runView)(nil)

func (v *runView) Started(run *model.Run) {
	noteWrapped(v.io.Err, fmt.Sprintf("%s; GOMAXPROCS=%d GOGC=%s", announcement(v.scenario, v.cases, v.o.Count, v.o.Time, v.prof, v.estimate), run.Env.GOMAXPROCS, run.Env.GOGC))
	if v.o.Count < runner.MinIntervalReps && v.o.Until == "" {
		// Said before the rounds, not only after them as a ±∞; wrapped,
		// as on one line it ran to 95 columns.
		noteWrapped(v.io.Err, runner.TooFewForInterval(v.o.Count))
	}
}

func (v *runView) Finished() { v.endLine() }

func (v *runView) Stored(run *model.Run, dir string) error {
	if v.o.JSON {
		if err := writeJSON(v.io.Out, run); err != nil {
			return err
		}
	} else {
		writeTable(v.io.Out, run, v.o.Wide, v.o.Verbose)
	}
	// A line each, to copy: on one line the paths ran to 190 columns.
	fmt.Fprintf(v.io.Err, "perflab: saved %s\n  benchstat %s\n  %s\n", dir, filepath.Join(dir, "results.txt"), v.io.cmd("show "+run.ID+lab.StoreArg(v.st.Root)))
	return nil
}

func (v *runView) Pushing(run *model.Run, url string) {
	fmt.Fprintf(v.io.Err, "perflab: pushing run %s to %s\n", run.ID, url)
}

// Pushed writes the push's summary briefly (failures and totals) to
// stderr: stdout is the run's table or JSON.
func (v *runView) Pushed(sum pyroscope.Summary) { sum.WriteBrief(v.io.Err) }

// announcement says what a run is about to do and how long it should
// take: "cipher-cache: 24 cases, 10 rounds of 200ms each, then profiling;
// about 2m10s". With --profile none there is no profiling to announce.
func announcement(scenario string, cases, count int, rep time.Duration, prof []string, est time.Duration) string {
	then := "then profiling"
	if len(prof) == 0 {
		then = "no profiling"
	}
	return fmt.Sprintf("%s: %s, %s of %v each, %s; about %s",
		scenario, report.Count(cases, "case"), report.Count(count, "round"), rep, then, roughly(est))
}

// wrapSaver, when set (by tests), wraps the store's writer a run saves
// through: a test makes profile writes fail with it.
var wrapSaver func(runner.Saver) runner.Saver

// roughly writes an estimate as people say it: "40s", "2m10s".
func roughly(d time.Duration) string {
	if d < time.Minute {
		return d.Round(time.Second).String()
	}
	return d.Round(10 * time.Second).String()
}
