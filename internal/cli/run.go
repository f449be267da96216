package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab"
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
	until       float64
	// Push is a Pyroscope server to send the stored run to, with at most
	// PushTimeout per profile.
	Push        string
	PushTimeout time.Duration
	pusher      *pyroscope.Client
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
				return usagef(errors.New("name a scenario to run (see perflab list)"))
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
	f.DurationVar(&opts.Warmup, "warmup", 300*time.Millisecond, "warmup per case before timing")
	f.StringSliceVar(&opts.Profile, "profile", runner.DefaultProfiles, "profiles to capture: wall,cpu,mutex,block,fgprof or none")
	f.DurationVar(&opts.ProfileTime, "profile-time", time.Second, "profiling window per case")
	f.StringVar(&opts.Trace, "trace", runner.TraceSlices, "where the budget's trace is taken: slices (a short traced repetition beside each timed one, in the rounds) or window (one window per case after the rounds)")
	storeFlag(f, &opts.Out)
	f.BoolVar(&opts.JSON, "json", false, "print the report as JSON instead of a table (one document per scenario; run.json in the store has every repetition)")
	f.BoolVar(&opts.Verbose, "verbose", false, "show every warning and note, each case's in full")
	f.StringVar(&opts.Until, "until", "", "after --count rounds, keep adding rounds until every case's time/op is within ± this `percent` (e.g. 3%)")
	f.DurationVar(&opts.UntilMax, "until-max", 10*time.Minute, "time cap on the rounds --until adds")
	f.BoolVar(&opts.Wide, "wide", false, "one table row per variant with every column, whatever the width (default: fit 80 columns)")
	f.StringVar(&opts.Rules, "rules", "", "file of extra classification rules")
	f.Uint64Var(&opts.Seed, "seed", 0, "seed for the order of cases in each round (default random)")
	f.StringVar(&opts.Push, "push", "", "after storing the run, send its profiles to the Pyroscope server at `URL` (see perflab push)")
	f.DurationVar(&opts.PushTimeout, "push-timeout", pyroscope.DefaultTimeout, "with --push: longest time to spend on one profile, retries included")
	return cmd
}

// selection turns -p, --variant and --threads into a Selection for s,
// ignoring parameters s does not have when several scenarios run.
func (o *RunOptions) selection(s *perflab.Scenario, strict bool) (perflab.Selection, error) {
	sel := perflab.Selection{Params: map[string][]string{}, Threads: o.Threads}
	for _, v := range o.Variants {
		if _, err := s.Variant(v); err != nil {
			if strict {
				return sel, err
			}
			continue
		}
		sel.Variants = append(sel.Variants, v)
	}
	if !strict && len(o.Variants) > 0 && len(sel.Variants) == 0 {
		return sel, fmt.Errorf("none of --variant %s is a variant of %s", strings.Join(o.Variants, ","), s.Name)
	}
	for _, p := range o.Params {
		name, values, ok := strings.Cut(p, "=")
		if !ok || name == "" || values == "" {
			return sel, fmt.Errorf("-p %q: want name=value[,value…]", p)
		}
		list := strings.Split(values, ",")
		if name == "threads" {
			if len(o.Threads) > 0 {
				// One would silently win over the other.
				return sel, fmt.Errorf("--threads %s and -p %s both give goroutine counts: give them once", joinInts(o.Threads), p)
			}
			for _, v := range list {
				n, err := strconv.Atoi(v)
				if err != nil {
					return sel, fmt.Errorf("-p threads=%s: %q is not a goroutine count", values, v)
				}
				sel.Threads = append(sel.Threads, n)
			}
			continue
		}
		if _, err := s.Param(name); err != nil {
			if strict {
				return sel, err
			}
			continue
		}
		sel.Params[name] = append(sel.Params[name], list...)
	}
	return sel, nil
}

// checkVariants fails for an empty --variant, which would otherwise run
// every variant, and an empty name in its list.
func (o *RunOptions) checkVariants() error {
	if o.variantsSet && len(o.Variants) == 0 {
		return errors.New("--variant is empty: name the variants to run, or leave --variant out for all (see perflab list)")
	}
	for _, v := range o.Variants {
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("--variant %s: an empty variant name", strings.Join(o.Variants, ","))
		}
	}
	return nil
}

// unknownScenario is Lookup's error for name, with a hint when name is
// not a scenario but something else a user might type after one: a
// variant (perflab run cipher-cache mutex) or a parameter (keys=128).
// names are the scenario arguments.
func unknownScenario(name string, names []string, err error) error {
	if k, v, ok := strings.Cut(name, "="); ok && k != "" && v != "" {
		return fmt.Errorf("unknown scenario %q: for a parameter, use -p %s", name, name)
	}
	var named []*perflab.Scenario
	for _, n := range names {
		if s, err := perflab.Lookup(n); err == nil {
			named = append(named, s)
		}
	}
	variantOf := func(list []*perflab.Scenario) []string {
		var of []string
		for _, s := range list {
			if _, err := s.Variant(name); err == nil {
				of = append(of, s.Name)
			}
		}
		return of
	}
	if of := variantOf(named); len(of) > 0 {
		return fmt.Errorf("unknown scenario %q: it is a variant of %s; to run only it, use --variant %s", name, strings.Join(of, ", "), name)
	}
	if of := variantOf(perflab.Scenarios()); len(of) > 0 {
		return fmt.Errorf("unknown scenario %q: it is a variant of %s (perflab run %s --variant %s)", name, strings.Join(of, ", "), of[0], name)
	}
	return err
}

// checkKnown fails for a -p name or --variant that none of the scenarios
// has: with several scenarios each one ignores what it lacks, so a typo
// would otherwise pass silently.
func (o *RunOptions) checkKnown(scenarios []*perflab.Scenario) error {
	for _, p := range o.Params {
		name, _, _ := strings.Cut(p, "=")
		known := name == "threads"
		for _, s := range scenarios {
			if _, err := s.Param(name); err == nil {
				known = true
			}
		}
		if !known {
			var all []string
			for _, s := range scenarios {
				for _, p := range s.Params {
					all = append(all, p.Name)
				}
			}
			return fmt.Errorf("-p %s: none of %s has a parameter %q%s (see perflab list)", p, strings.Join(o.Scenarios, ", "), name, didYouMean(name, append(all, "threads")))
		}
	}
	for _, v := range o.Variants {
		known := false
		var all []string
		for _, s := range scenarios {
			if _, err := s.Variant(v); err == nil {
				known = true
			}
			for _, sv := range s.Variants {
				all = append(all, sv.Name)
			}
		}
		if !known {
			return fmt.Errorf("--variant %s: none of %s has that variant%s (see perflab list)", v, strings.Join(o.Scenarios, ", "), didYouMean(v, all))
		}
	}
	return nil
}

func (o *RunOptions) profiles() ([]string, error) {
	if len(o.Profile) == 1 && (o.Profile[0] == "none" || o.Profile[0] == "") {
		return []string{}, nil
	}
	for _, p := range o.Profile {
		if p == "none" {
			return nil, fmt.Errorf("--profile %s: none cannot be combined with profiles: give --profile none alone, or the profiles to capture", strings.Join(o.Profile, ","))
		}
		if !slices.Contains(runner.ProfileKinds, p) {
			return nil, fmt.Errorf("--profile %s: unknown profile %q%s (want %s or none)", strings.Join(o.Profile, ","), p, didYouMean(p, runner.ProfileKinds), strings.Join(runner.ProfileKinds, ", "))
		}
	}
	return o.Profile, nil
}

func runRun(ctx context.Context, io *IO, o *RunOptions) error {
	// Check everything the user typed before measuring anything.
	if err := o.checkVariants(); err != nil {
		return usagef(err)
	}
	var scenarios []*perflab.Scenario
	var plans []plan
	for i, name := range o.Scenarios {
		if slices.Contains(o.Scenarios[:i], name) {
			return usagef(fmt.Errorf("scenario %s is named twice: each scenario runs once a run (for more repetitions, use --count)", name))
		}
		s, err := perflab.Lookup(name)
		if err != nil {
			return usagef(unknownScenario(name, o.Scenarios, err))
		}
		scenarios = append(scenarios, s)
	}
	if len(scenarios) > 1 {
		// Before each scenario's selection, which drops what it lacks:
		// a name none of them has is a typo, said as one.
		if err := o.checkKnown(scenarios); err != nil {
			return usagef(err)
		}
	}
	for _, s := range scenarios {
		sel, err := o.selection(s, len(o.Scenarios) == 1)
		if err != nil {
			return usagef(err)
		}
		cases, err := s.Matrix(sel)
		if err != nil {
			return usagef(err)
		}
		plans = append(plans, plan{s: s, sel: sel, cases: len(cases)})
	}
	prof, err := o.profiles()
	if err != nil {
		return usagef(err)
	}
	var until float64
	if o.Until != "" {
		t, err := parseThreshold(o.Until)
		if err != nil || t <= 0 {
			return usagef(fmt.Errorf("--until %q: want a percentage above 0, such as 3%%", o.Until))
		}
		until = t
	}
	o.until = until
	switch {
	case o.Count < 1:
		return usagef(fmt.Errorf("--count %d: want at least 1", o.Count))
	case o.Time <= 0:
		return usagef(fmt.Errorf("--time %s: want a positive duration, such as 200ms", o.Time))
	case o.Warmup < 0:
		return usagef(fmt.Errorf("--warmup %s: want 0 or a positive duration, such as 300ms", o.Warmup))
	case o.ProfileTime <= 0:
		return usagef(fmt.Errorf("--profile-time %s: want a positive duration, such as 1s", o.ProfileTime))
	case o.Trace != runner.TraceSlices && o.Trace != runner.TraceWindow:
		return usagef(fmt.Errorf("--trace %q: want %s or %s", o.Trace, runner.TraceSlices, runner.TraceWindow))
	}
	cl, err := loadClassification(o.Rules)
	if err != nil {
		return usagef(err)
	}
	if o.Push != "" {
		if len(prof) == 0 {
			return usagef(errors.New("--push sends the run's profiles, and --profile none captures none"))
		}
		if o.pusher, err = pyroscopeClientTimeout(o.Push, "", "", "", o.PushTimeout); err != nil {
			return err
		}
	}
	st := store.Open(store.Dir(o.Out))
	var errs []error
	for i, s := range scenarios {
		err := runOne(ctx, io, o, st, plans[i], prof, cl)
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

// plan is one scenario of a run command, checked before anything runs.
type plan struct {
	s     *perflab.Scenario
	sel   perflab.Selection
	cases int
}

func runOne(ctx context.Context, io *IO, o *RunOptions, st *store.Store, p plan, prof []string, cl *classification) (err error) {
	s, sel := p.s, p.sel
	// Before Create, so a bad rule leaves no partial run behind.
	rules, recorded, err := cl.forScenario(s)
	if err != nil {
		return usagef(err)
	}
	opts := runner.Options{
		Selection: sel, Count: o.Count, Time: o.Time, Warmup: o.Warmup,
		Profile: prof, ProfileTime: o.ProfileTime, Trace: o.Trace, Seed: o.Seed,
		Until: o.until, UntilMax: o.UntilMax,
	}
	run := runner.NewRun(s, opts, o.Args, recorded)
	w, err := st.Create(run)
	if err != nil {
		return err
	}
	ncases := p.cases
	est := estimate(ncases, o.Count, o.Time, o.Warmup, o.ProfileTime, prof)
	prog := newProgress(io, est)
	var save runner.Saver = w
	if wrapSaver != nil {
		save = wrapSaver(w)
	}
	r := &runner.Runner{Scenario: s, Opts: opts, Run: run, Save: save, Progress: prog, Rules: rules}
	noteWrapped(io.Err, fmt.Sprintf("%s; GOMAXPROCS=%d GOGC=%s", announcement(s.Name, ncases, o.Count, o.Time, prof, est), run.Env.GOMAXPROCS, run.Env.GOGC))
	if o.Count < runner.MinIntervalReps && o.Until == "" {
		// Said before the rounds, not only after them as a ±∞.
		fmt.Fprintln(io.Err, "perflab:", runner.TooFewForInterval(o.Count))
	}
	runErr := r.Execute(ctx)
	prog.endLine()
	if errors.Is(runErr, runner.ErrInterrupted) {
		// The runner's note is the message printed now, which says what
		// was kept; the stored note says by what and where, short enough
		// for the run's header line.
		run.Note = interruptedNote(ctx, run, prog)
	}
	dir, err := w.Commit()
	if err != nil {
		return errors.Join(runErr, err)
	}
	if o.JSON {
		if err := writeJSON(io.Out, run); err != nil {
			return err
		}
	} else {
		writeTable(io.Out, run, o.Wide, o.Verbose)
	}
	showArgs := run.ID
	if st.Root != store.DefaultDir {
		showArgs += " -o " + st.Root
	}
	// A line each, to copy: on one line the paths ran to 190 columns.
	fmt.Fprintf(io.Err, "perflab: saved %s\n  benchstat %s\n  perflab show %s\n", dir, filepath.Join(dir, "results.txt"), showArgs)
	var pushErr error
	if o.pusher != nil && !errors.Is(runErr, runner.ErrInterrupted) {
		// The run is stored already: a failed push loses nothing and
		// `perflab push` can send it later.
		pushErr = pushStoredRun(ctx, io, io.Err, true, o.pusher, st, run, pyroscope.PushOptions{})
	}
	if errors.Is(runErr, runner.ErrInterrupted) {
		return &ExitError{Code: exitInterrupted, Err: runErr}
	}
	// A failed push must not hide failed cases, nor the other way round.
	defer func() { err = errors.Join(err, pushErr) }()
	if runErr == nil {
		// Every other case is measured and saved; still say so in the
		// exit code, so a script or CI notices a broken variant.
		var failed []string
		for _, c := range run.Cases {
			if c.Status == store.StatusFailed {
				failed = append(failed, c.Name)
			}
		}
		switch {
		case len(failed) == len(run.Cases):
			// A case can fail after some rounds and keep them, so not
			// report.Unmeasured, which is "" for a run that measured.
			runErr = fmt.Errorf("%s: %s", report.AllFailed(len(failed)), strings.Join(failed, ", "))
		case len(failed) > 0:
			runErr = fmt.Errorf("%d of %s failed (the others are measured and saved): %s", len(failed), report.Count(len(run.Cases), "case"), strings.Join(failed, ", "))
		}
	}
	return runErr
}

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

// interruptedNote is the stored note of a run the context ended:
// "interrupted by SIGINT in round 3/10".
func interruptedNote(ctx context.Context, run *store.Run, prog *progress) string {
	by := ""
	var sig *signalError
	if errors.As(context.Cause(ctx), &sig) {
		by = sig.Error()
	}
	where := prog.where()
	if !run.Measured() {
		where = "before any case was measured"
	}
	return store.InterruptedNote(by, where)
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
