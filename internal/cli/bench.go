package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/lab"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/runner"
	"github.com/perflab/perflab/internal/store"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// BenchOptions are the flags of `perflab bench`.
type BenchOptions struct {
	Packages    []string
	Bench       string
	Tags        string
	Race        bool
	GCFlags     string
	Count       int
	Time        time.Duration
	CPU         []int
	Work        []string
	Rules       string
	Profile     []string
	ProfileTime time.Duration
	Out         string
	JSON        bool
	Wide        bool
	Verbose     bool
	Seed        uint64
	Args        []string
	// Dir is where the go command runs (tests set it; "" is the current
	// directory).
	Dir string
}

// goTestFlags are the go test spellings bench accepts with one dash, as
// go test users type them, and the flags they are.
var goTestFlags = map[string]string{
	"-bench": "--bench", "-count": "--count", "-benchtime": "--time", "-cpu": "--cpu", "-o": "-o",
	"-tags": "--tags", "-race": "--race", "-gcflags": "--gcflags",
}

// goTestArgs rewrites go test's one-dash flags (-bench X, -bench=X,
// -benchtime 2s) to their perflab spelling; pflag would read -bench as
// the shorthands -b -e -n….
func goTestArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		name, value, hasValue := strings.Cut(a, "=")
		if to, ok := goTestFlags[name]; ok && !strings.HasPrefix(name, "--") {
			if hasValue {
				a = to + "=" + value
			} else {
				a = to
			}
		}
		out = append(out, a)
	}
	return out
}

func newBenchCmd(io *IO, runF runFunc[BenchOptions]) *cobra.Command {
	opts := &BenchOptions{}
	cmd := &cobra.Command{
		Use:   "bench [packages] [-bench regexp] [flags]",
		Short: "Measure and profile a package's go test benchmarks, and store the run",
		Long: `Run the benchmarks a package already has (func BenchmarkX(b *testing.B)) as a
perflab run: build its test binary once, run every benchmark (sub-benchmarks
included) --count times in shuffled, interleaved rounds, one process per
repetition, then once more with the execution tracer for its wall-clock profile
and its budget: where each op's time goes (work, lock, wait, alloc, gc, sched).
The budget holds only what the benchmark's timer timed (not the setup before
b.ResetTimer, nor b.StopTimer sections), and goroutines it waits for are followed.
Work is the package's own code unless --work says otherwise.
The run is stored under --out; results.txt is benchstat's format, with go test's
names. Results go to stdout (a table, or JSON with --json); progress to stderr.`,
		Example: `  perflab bench ./cache
  perflab bench ./cache -bench 'Get/keys=128' --count 20 --cpu 1,4
  perflab bench ./... -bench . --work '^example.com/cache\.' --profile none`,
		// go test's -bench is one dash and several letters, which pflag
		// cannot parse: the flags are parsed here, after goTestArgs.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			f := cmd.Flags()
			if err := f.Parse(goTestArgs(args)); err != nil {
				if errors.Is(err, pflag.ErrHelp) {
					return cmd.Help()
				}
				return flagErrors(cmd, err)
			}
			if help, _ := f.GetBool("help"); help {
				return cmd.Help()
			}
			opts.Packages = f.Args()
			opts.Args = io.Args
			return runF.or(runBench)(cmd.Context(), io, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Bench, "bench", ".", "benchmarks to run, a `regexp` as go test -bench takes it (also -bench)")
	f.IntVar(&opts.Count, "count", 10, "timed repetitions per benchmark (also -count)")
	f.DurationVar(&opts.Time, "time", time.Second, "go test -benchtime of a first, calibrating run of each benchmark; every repetition runs the b.N it picks (also -benchtime)")
	f.IntSliceVar(&opts.CPU, "cpu", nil, "GOMAXPROCS values, each a case (threads=N) of every benchmark (default GOMAXPROCS; also -cpu)")
	f.StringVar(&opts.Tags, "tags", "", "build tags, a comma-separated `list` as go build -tags takes it (also -tags)")
	f.BoolVar(&opts.Race, "race", false, "build with the race detector, as go build -race (also -race); it slows what it measures")
	f.StringVar(&opts.GCFlags, "gcflags", "", "go build -gcflags, such as all=-N -l (also -gcflags)")
	f.StringArrayVar(&opts.Work, "work", nil, "functions whose time is work, a `regexp` on their full name (repeatable; default the package's own code)")
	f.StringVar(&opts.Rules, "rules", "", "file of extra classification rules")
	f.StringSliceVar(&opts.Profile, "profile", []string{"wall", "cpu"}, "profiles to capture: wall,cpu or none")
	f.DurationVar(&opts.ProfileTime, "profile-time", time.Second, "length of each benchmark's profiling run")
	storeFlag(f, &opts.Out)
	f.BoolVar(&opts.JSON, "json", false, "print each run's report as JSON instead of a table (run.json in the store has every repetition)")
	f.BoolVar(&opts.Wide, "wide", false, "one table row per variant with every column, whatever the width")
	f.BoolVar(&opts.Verbose, "verbose", false, "show every warning and note, each case's in full")
	f.Uint64Var(&opts.Seed, "seed", 0, "seed for the order of benchmarks in each round (default random)")
	return cmd
}

func runBench(ctx context.Context, io *IO, o *BenchOptions) error {
	switch {
	case o.Count < 1:
		return usagef(fmt.Errorf("--count %d: want at least 1", o.Count))
	case o.Time <= 0:
		return usagef(fmt.Errorf("--time %s: want a positive duration, such as 1s", o.Time))
	case o.ProfileTime <= 0:
		return usagef(fmt.Errorf("--profile-time %s: want a positive duration, such as 1s", o.ProfileTime))
	}
	profile := true
	switch strings.Join(o.Profile, ",") {
	case "none", "":
		profile = false
	case "wall", "cpu", "wall,cpu", "cpu,wall":
	default:
		return usagef(fmt.Errorf("--profile %s: perflab bench captures wall,cpu (from one traced run) or none", strings.Join(o.Profile, ",")))
	}
	cl, err := lab.LoadClassification(o.Rules)
	if err != nil {
		return usagef(err)
	}
	if _, err := cl.Base().WithWork(o.Work...); err != nil {
		return usagef(fmt.Errorf("--work: %w", err))
	}
	lo := lab.BenchOptions{
		Dir: o.Dir, Packages: o.Packages, Bench: o.Bench, Tags: o.Tags, Race: o.Race, GCFlags: o.GCFlags, Count: o.Count, Time: o.Time, CPU: o.CPU,
		Profile: profile, ProfileTime: o.ProfileTime, Work: o.Work, Rules: cl.Base(), Seed: o.Seed, Args: o.Args,
		Log: benchLog(io),
	}
	plan, err := lab.PlanBench(ctx, lo)
	if err != nil && ctx.Err() != nil {
		// Not "context canceled": what ended it, and that nothing ran.
		by := ""
		var sig *signalError
		if errors.As(context.Cause(ctx), &sig) {
			by = " " + sig.Error()
		}
		return &ExitError{Code: exitInterrupted, Err: fmt.Errorf("interrupted%s while building and listing the benchmarks: nothing was measured or saved", by)}
	}
	var pe *lab.PlanError
	if errors.As(err, &pe) {
		return usagef(err)
	}
	if err != nil {
		return err
	}
	defer plan.Close()
	for _, n := range plan.Notes {
		noteWrapped(io.Err, n)
	}
	// The compiler's message as it wrote it: not wrapped, every line.
	for _, u := range plan.Unbuilt {
		fmt.Fprintf(io.Err, "perflab: %s\n", report.SafeText(u.Err.Error()))
	}
	then := "then one profiling run each"
	if !profile {
		then = "no profiling"
	}
	noteWrapped(io.Err, fmt.Sprintf("%s: %s, %s, one process per repetition at the b.N a first run of %v picks, %s",
		strings.Join(plan.Packages(), ", "), report.Count(plan.Cases(), "benchmark"), report.Count(o.Count, "round"), o.Time, then))
	st := store.Open(store.Dir(o.Out))
	runs, runErr := plan.Run(ctx, st)
	if io.ErrIsTerminal {
		fmt.Fprint(io.Err, "\r\033[K")
	}
	if errors.As(runErr, &pe) {
		return usagef(runErr)
	}
	for _, r := range runs {
		if o.JSON {
			if err := writeJSON(io.Out, r.Run); err != nil {
				return err
			}
			// The table says what counted as work; with JSON, stderr does.
			if cl := r.Run.Config.Classification; cl != nil && profile {
				noteWrapped(io.Err, "work: functions matching "+report.SafeText(strings.Join(cl.Work, " or ")))
			}
		} else {
			writeBenchTable(io.Out, r.Run, o.Wide, o.Verbose)
		}
		fmt.Fprintf(io.Err, "perflab: saved %s\n  benchstat %s\n  %s\n", r.Dir, filepath.Join(r.Dir, store.ResultsFile), io.cmd("show "+r.Run.ID+lab.StoreArg(st.Root)))
	}
	if runErr != nil {
		if errors.Is(runErr, runner.ErrInterrupted) {
			return &ExitError{Code: exitInterrupted, Err: runErr}
		}
		return runErr
	}
	var unbuilt []string
	for _, u := range plan.Unbuilt {
		unbuilt = append(unbuilt, u.ImportPath)
	}
	var failed []string
	total := 0
	for _, r := range runs {
		for _, c := range r.Run.Cases {
			total++
			if c.Status == model.StatusFailed {
				failed = append(failed, c.Bench)
			}
		}
	}
	var errs []error
	if len(unbuilt) > 0 {
		// Exit 1, as for a failed benchmark: the plan was right, and the
		// packages that built are measured and saved.
		errs = append(errs, fmt.Errorf("%d of %s did not build (the others are measured and saved; the go command's message is above): %s",
			len(unbuilt), report.Count(len(unbuilt)+len(runs), "package"), strings.Join(unbuilt, ", ")))
	}
	errs = append(errs, lab.FailedError(failed, total, "benchmark"))
	return errors.Join(errs...)
}

// writeBenchTable writes a bench run's table, what counted as work, and
// why each failed benchmark failed.
func writeBenchTable(w io.Writer, run *model.Run, wide, verbose bool) {
	writeTable(w, run, wide, verbose)
	if cl := run.Config.Classification; cl != nil && len(run.Config.Profile) > 0 {
		line := "work: functions matching " + report.Safe(strings.Join(cl.Work, " or "))
		if len(cl.Work) == 1 && cl.Work[0] == lab.WorkPatterns(run.Package)[0] {
			line += " (the package's own code; --work to change)"
		}
		// Wrapped at spaces like the table above it: on one line the
		// default pattern ran to 137 columns (a pattern itself is not
		// broken).
		for i, l := range wrap(line, 80) {
			if i > 0 {
				l = "  " + l
			}
			fmt.Fprintln(w, l)
		}
	}
	for _, c := range run.Cases {
		if c.Status == model.StatusFailed {
			fmt.Fprintf(w, "%s failed: %s\n", report.Safe(c.Bench), report.Safe(firstLineOf(c.Error)))
		}
	}
}

// benchLog prints the plan's and run's progress to stderr. On a terminal
// each line overwrites the last. Elsewhere (a CI log, a file) a line says
// what phase began: each package built and listed, each round (not the
// benchmark that happens to run first in it, which read as if it were
// the only one) with the time so far, and each profiling run.
func benchLog(io *IO) func(string) {
	last := ""
	start := time.Now()
	return func(line string) {
		if io.ErrIsTerminal {
			fmt.Fprintf(io.Err, "\r\033[K%s", line)
			return
		}
		phase, _, _ := strings.Cut(line, ":")
		key := line
		switch f := strings.Fields(phase); {
		case len(f) == 2 && f[0] == "listing":
			// "listing pkg.BenchmarkX": once per package.
			pkg, _, _ := strings.Cut(f[1], ".")
			key = "listing the benchmarks of " + pkg
			line = key
		case len(f) == 2 && f[0] == "round":
			key = phase
			line = fmt.Sprintf("%s (%s so far)", phase, time.Since(start).Round(time.Second))
		}
		if key != last {
			fmt.Fprintln(io.Err, "perflab:", report.SafeText(line))
		}
		last = key
	}
}
