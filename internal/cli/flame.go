package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	goio "io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/pyroscope"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/profiles"
	"github.com/perflab/perflab/profiles/flame"
	"github.com/spf13/cobra"
)

// FlameOptions are the flags of `perflab flame`.
type FlameOptions struct {
	Inputs     []string // one profile, or base and new with Diff
	Out        string
	Format     string // svg, html or folded; default from Out's extension
	SampleType string
	Rules      string
	Work       []string
	Kind       string // profile kind inside a run case: wall, cpu, mutex, block
	Diff       bool
	Layout     string // with Diff: "new" or "base", the shape drawn
	Title      string
	Width      int
	MinWidth   float64
	// FromPyroscope reads the profile from a Pyroscope server instead:
	// the profiles of ProfileType matching Query over the last Since,
	// merged.
	FromPyroscope string
	Query         string
	ProfileType   string
	Since         time.Duration
	// Goroutine, for an execution trace, draws only the goroutines whose
	// root function matches it.
	Goroutine string
}

func newFlameCmd(io *IO, runF runFunc[FlameOptions]) *cobra.Command {
	opts := &FlameOptions{}
	cmd := &cobra.Command{
		Use:   "flame <profile.pb.gz | run-dir/case | -> [-o out.svg|out.html|out.folded]",
		Short: "Draw a category-coloured flame graph (SVG, interactive HTML, folded) of any pprof profile or Go execution trace",
		Long: `Draw a flame graph of a pprof profile: perflab's own (a run directory and case
name, or a case directory) or any other (go test -cpuprofile, /debug/pprof, fgprof,
Pyroscope exports). Frames are coloured by category (work, lock, wait, alloc, gc, sched,
other) with each category's share in the legend.

The output format follows -o's extension: .svg (static, no script), .html (one
self-contained interactive page: zoom, search, category highlights, icicle view,
focus on a function) or .folded (folded stacks for flamegraph.pl and speedscope).
Without -o an SVG goes to stdout. A profile of - is read from standard input.

With --diff, two profiles: the graph is the union of both, the base scaled to the
same total, drawn on the new profile's shape (--layout base for the base's), with
frames that exist only in the base hatched. A frame is coloured only if its change
in share is beyond sampling noise (a two-proportion test on its samples, with the
false-discovery rate held at 5% across frames): red for a larger share, blue for
a smaller one, grey within the noise. Tooltips give each frame's change with its
95% interval, the legend each category's.

A Go execution trace (go test -trace, runtime/trace, a flight recorder's snapshot)
is drawn as its exact wall-clock profile: each goroutine's time running (split by
the trace's CPU samples, when the CPU profiler was on too) and off the CPU at the
stack it stopped at, coloured by why (lock, wait, gc, sched); all goroutines but
the runtime's, or those started in functions matching --goroutine.

Work is what --work patterns (or, for a stored run, the scenario's patterns as
recorded with the run) match; without them the program's own code is "other".
--rules adds rules from a file, one "category regexp" a line (see docs/manual.md); a
stored run's own --rules are recorded with it and applied after these.

With --from-pyroscope, the merged profiles of --profile-type matching the label
selector --query over the last --since are drawn instead of a file; a
scenario="…" in the selector brings that scenario's work patterns. A tenant id
and basic auth come from $` + envPyroscopeTenant + `, $` + envPyroscopeUser + ` and
$` + envPyroscopePassword + `, as for perflab push.`,
		Example: `  perflab flame cpu.pb.gz -o cpu.svg
  perflab flame perflab-runs/<run-id>/variant=mutex/keys=1024/key=ssk/threads=4 -o mutex.html
  perflab flame --diff before.pb.gz after.pb.gz -o diff.html
  perflab flame mutex.pb.gz --sample-type delay --work '^example\.com/codec\.' -o m.svg
  perflab flame trace.out --goroutine 'testing\.\(\*B\)' --work '^example\.com/cache\.' -o bench.html
  perflab flame --from-pyroscope http://127.0.0.1:4040 --query '{service_name="perflab",scenario="cipher-cache"}' --profile-type wall --since 1h -o prod.html`,
		Args: args(cobra.RangeArgs(0, 2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Inputs = args
			return runF.or(flameRun)(cmd.Context(), io, opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Out, "output", "o", "", "output file: .svg, .html or .folded (default SVG on stdout)")
	f.StringVar(&opts.Format, "format", "", "output format when it cannot be told from -o: svg, html or folded")
	f.StringVar(&opts.SampleType, "sample-type", "", "sample type to draw: cpu, samples, time, delay, contentions, alloc_space… (default the profile's)")
	f.StringVar(&opts.Rules, "rules", "", "`file` of extra classification rules, one \"category regexp\" a line")
	f.StringArrayVar(&opts.Work, "work", nil, "`regexp` of function names that are the useful work (repeatable)")
	f.StringVar(&opts.Kind, "kind", "wall", "profile kind to draw from a run case: wall, cpu, mutex or block")
	f.BoolVar(&opts.Diff, "diff", false, "compare two profiles: --diff base new")
	f.StringVar(&opts.Layout, "layout", "new", "with --diff: draw on the new or the base profile's shape")
	f.StringVar(&opts.Title, "title", "", "title (default from the input)")
	f.IntVar(&opts.Width, "width", 1200, "SVG width in pixels")
	f.Float64Var(&opts.MinWidth, "min-width", 0.1, "leave out frames narrower than this many pixels (SVG)")
	f.StringVar(&opts.FromPyroscope, "from-pyroscope", "", "draw the merged profiles from the Pyroscope server at `URL` instead of a file")
	// The default is said in the usage, not as the flag's default, which
	// pflag would print escaped ({service_name=\"perflab\"}): copied, the
	// server refuses it.
	f.StringVar(&opts.Query, "query", "", "with --from-pyroscope: label selector of the profiles to merge (default "+defaultQuery+")")
	f.StringVar(&opts.ProfileType, "profile-type", "wall", "with --from-pyroscope: wall, cpu, mutex, block or a full Pyroscope profile type id")
	f.DurationVar(&opts.Since, "since", time.Hour, "with --from-pyroscope: how far back to read")
	f.StringVar(&opts.Goroutine, "goroutine", "", "for an execution trace: draw only goroutines started in a function matching this `regexp` (default all)")
	return cmd
}

func flameRun(ctx context.Context, io *IO, o *FlameOptions) error {
	switch {
	case o.FromPyroscope != "" && (len(o.Inputs) > 0 || o.Diff):
		return usagef(errors.New("--from-pyroscope draws one merged profile: give no profile file and no --diff"))
	case o.FromPyroscope == "" && len(o.Inputs) == 0:
		return usagef(errors.New("name a profile to draw, or read one with --from-pyroscope URL"))
	}
	if o.Diff != (len(o.Inputs) == 2) {
		if o.Diff {
			return usagef(errors.New("--diff needs two profiles: --diff base new"))
		}
		return usagef(errors.New("one profile, or two with --diff"))
	}
	format, err := flameFormat(o.Out, o.Format)
	if err != nil {
		return usagef(err)
	}
	if o.Diff && format == "folded" {
		return usagef(errors.New("--diff writes SVG or HTML, not folded stacks"))
	}
	if (o.Out == "" || o.Out == "-") && io.OutIsTerminal && format != "folded" {
		return usagef(fmt.Errorf("flame writes %s: give -o file.svg (or .html, .folded), or redirect the output", strings.ToUpper(format)))
	}
	layout, err := flame.ParseLayout(o.Layout)
	if err != nil {
		return usagef(fmt.Errorf("--layout: %w", err))
	}
	rules := profiles.DefaultRules()
	if o.Rules != "" {
		if rules, err = profiles.LoadRules(o.Rules); err != nil {
			return usagef(err)
		}
	}
	var inputs []*flameInput
	if o.FromPyroscope != "" {
		in, err := pyroscopeFlameInput(ctx, o)
		if err != nil {
			return err
		}
		inputs = append(inputs, in)
	}
	if n := countOf(o.Inputs, "-"); n > 1 {
		return usagef(errors.New("flame: standard input (-) can be only one of the profiles"))
	}
	var goroutine *regexp.Regexp
	if o.Goroutine != "" {
		if goroutine, err = regexp.Compile(o.Goroutine); err != nil {
			return usagef(fmt.Errorf("--goroutine: %w", err))
		}
	}
	for _, arg := range o.Inputs {
		// An execution trace is drawn as its exact wall-clock profile.
		in, isTrace, err := openTraceInput(io, arg, goroutine, rules)
		if err != nil {
			return err
		}
		if !isTrace {
			if goroutine != nil {
				return usagef(fmt.Errorf("--goroutine selects goroutines of an execution trace, and %s is not one", arg))
			}
			if in, err = openFlameInput(io, arg, o.Kind); err != nil {
				return err
			}
		}
		inputs = append(inputs, in)
	}
	// --rules first, then what the inputs bring (a stored run's recorded
	// rules and work patterns, a scenario's), then --work: for a stored
	// case and no flags, the rules the run was classified with.
	var user []profiles.Rule
	var work []string
	for _, in := range inputs {
		if in.warning != "" {
			fmt.Fprintf(io.Err, "perflab: warning: %s\n", report.SafeText(in.warning))
		}
		user = append(user, in.user...)
		work = append(work, in.work...)
	}
	work = append(work, o.Work...)
	if rules, err = rules.WithUser(user...); err != nil {
		return err // UserRules checked them; not the user's typing
	}
	if rules, err = rules.WithWork(work...); err != nil {
		return usagef(err)
	}
	last := inputs[len(inputs)-1]
	// The tree is only drawn: DrawnOnly keeps the frames the SVG or page
	// shows (issue 26: a million unique stacks are 25 million frames).
	opts := flame.Options{Title: o.Title, SampleType: o.SampleType, Rules: rules, Width: o.Width, MinWidth: o.MinWidth, Layout: layout, DrawnOnly: true}
	if opts.Title == "" {
		opts.Title = last.title
		if o.Diff {
			opts.Title = inputs[0].title + " → " + last.title
		}
	}

	// The output is streamed to its file or stdout, never held whole
	// (issue 14): each writer refuses, before writing, output over its
	// budget (flame.DefaultMaxOutput, profiles.MaxFolded).
	write := func(w goio.Writer) error {
		if format == "folded" {
			idx, err := last.src.SampleIndex(o.SampleType)
			if err != nil {
				return usagef(err)
			}
			return last.src.WriteFolded(w, idx)
		}
		var t *flame.Tree
		var err error
		if o.Diff {
			t, err = flame.DiffSource(inputs[0].src, last.src, opts)
		} else {
			t, err = flame.BuildSource(last.src, opts)
		}
		if err != nil {
			return usagef(err)
		}
		if format == "html" {
			return t.WriteHTML(w)
		}
		return t.WriteSVG(w)
	}
	if o.Out == "" || o.Out == "-" {
		bw := bufio.NewWriterSize(io.Out, 64<<10)
		if err := write(bw); err != nil {
			return err
		}
		return bw.Flush()
	}
	// A file is written whole or not at all: into a temporary file next
	// to it, renamed into place at the end.
	f, err := os.CreateTemp(filepath.Dir(o.Out), "."+filepath.Base(o.Out)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	cw := &countingWriter{w: f}
	bw := bufio.NewWriterSize(cw, 64<<10)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), o.Out)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(io.Err, "wrote %s (%s)\n", o.Out, report.Count(int(cw.n), "byte"))
	return nil
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w goio.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func flameFormat(out, format string) (string, error) {
	if format == "" {
		switch ext := strings.ToLower(filepath.Ext(out)); ext {
		case ".svg", "":
			format = "svg"
		case ".html", ".htm":
			format = "html"
		case ".folded", ".txt":
			format = "folded"
		default:
			return "", fmt.Errorf("cannot tell the format of %q: use .svg, .html or .folded, or --format", out)
		}
	}
	switch format {
	case "svg", "html", "folded":
		return format, nil
	}
	return "", fmt.Errorf("unknown --format %q (svg, html or folded)", format)
}

// flameInput is a profile to draw, with what is known about where it came
// from: for a stored run's case, the rules its run was classified with.
type flameInput struct {
	src   *flame.Source
	title string
	user  []profiles.Rule // rules recorded with a stored run
	work  []string        // work patterns recorded, or of the scenario
	// warning says why a stored run's recorded classification was not
	// used, if it was not.
	warning string
}

// classifyAs takes the classification inputs of stored run: those recorded
// in its run.json, so a run made by another binary (a user's own, with its
// own scenario) is drawn as it was classified; for a run stored before
// they were recorded, or when what is recorded is refused (a tampered
// run.json, a category this version does not know), the work patterns of
// the scenario if this binary has it.
func (in *flameInput) classifyAs(run *store.Run) {
	if c := run.Config.Classification; c != nil {
		user, err := c.UserRules()
		if err == nil {
			in.user, in.work = user, c.Work
			return
		}
		in.warning = fmt.Sprintf("run %s: the classification recorded in run.json is refused (%v); using ", run.ID, err)
		if _, lerr := perflab.Lookup(run.Scenario); lerr != nil {
			in.warning += "the built-in rules only (" + run.Scenario + " is not in this binary, so nothing is work)"
		} else {
			in.warning += "this binary's work patterns for " + run.Scenario
		}
	}
	if s, err := perflab.Lookup(run.Scenario); err == nil {
		in.work = s.Work
	} else if in.warning == "" {
		in.warning = "run " + run.ID + " was stored without its classification rules, and " + run.Scenario +
			" is not in this binary: nothing is work (draw it with the binary that made it, or give --work)"
	}
}

// openFlameInput opens a profile file, or a stored case in any form a
// command takes one (a case directory, "run-dir/case name", ID/CASE,
// latest/CASE). A stored case's profile is read through its store, by the
// path its run.json records: the store refuses symbolic links, files that
// are not regular and paths out of the run, so a tampered run cannot make
// flame read (or hang on) anything else.
func openFlameInput(io *IO, arg, kind string) (*flameInput, error) {
	if arg == "-" {
		// A profile piped in (curl …/debug/pprof/profile | perflab flame
		// -): read with the same limits as a file.
		src, err := flame.ReadSource(io.In, profiles.Limits{})
		if err != nil {
			return nil, fmt.Errorf("standard input: %w", err)
		}
		return &flameInput{src: src, title: "stdin"}, nil
	}
	if fi, err := os.Stat(arg); err == nil && !fi.IsDir() {
		// A profile file of a stored run (<run>/cases/<slug>/cpu.pb.gz) is
		// read through its store and classified with its scenario's work
		// patterns, like its case.
		caseDir := filepath.Dir(arg)
		runDir := filepath.Dir(filepath.Dir(caseDir))
		if _, err := os.Lstat(filepath.Join(runDir, "run.json")); err == nil && filepath.Base(filepath.Dir(caseDir)) == "cases" {
			if ref, err := store.Open("").Resolve(runDir); err == nil {
				rel := "cases/" + filepath.Base(caseDir) + "/" + filepath.Base(arg)
				src, err := readStoredProfile(ref.Store, ref.Run, rel)
				if err != nil {
					return nil, err
				}
				in := &flameInput{src: src, title: ref.Run.Scenario + " " + filepath.Base(caseDir) + " (" + filepath.Base(arg) + ")"}
				in.classifyAs(ref.Run)
				return in, nil
			} else if errors.Is(err, store.ErrRefused) {
				return nil, err
			}
		}
		src, err := readProfileFile(arg)
		if err != nil {
			return nil, err
		}
		return &flameInput{src: src, title: filepath.Base(arg)}, nil
	}
	// resolve, as show and compare do: "latest" says which newer runs,
	// that measured nothing, it passed by.
	ref, err := resolve(io, store.Open(store.Dir("")), arg)
	if err != nil {
		if errors.Is(err, store.ErrNoRun) || errors.Is(err, store.ErrNoRuns) || errors.Is(err, store.ErrInvalidID) {
			return nil, usagef(fmt.Errorf("%s: no such profile file, case directory or run case", arg))
		}
		if errors.Is(err, store.ErrNoCase) {
			return nil, usagef(fmt.Errorf("%w (see `perflab show`)", err))
		}
		return nil, err
	}
	run, c := ref.Run, ref.Case
	if c == nil {
		return nil, usagef(fmt.Errorf("%s is a whole run: name a case, e.g. %s/<case> (see `perflab show %s`)", arg, arg, run.ID))
	}
	rel, ok := c.Profiles[kind]
	if !ok {
		has := mapKeys(c.Profiles)
		if len(has) == 0 {
			return nil, fmt.Errorf("case %s has no profiles (a run made with --profile none?)", c.Name)
		}
		return nil, fmt.Errorf("case %s has no %s profile%s (it has %s)", c.Name, kind, didYouMean(kind, has), strings.Join(has, ", "))
	}
	src, err := readStoredProfile(ref.Store, run, rel)
	if err != nil {
		return nil, err
	}
	in := &flameInput{src: src, title: run.Scenario + " " + c.Name + " (" + kind + ")"}
	in.classifyAs(run)
	return in, nil
}

// defaultQuery is the label selector --query defaults to: the runs
// perflab push sent under its default service name.
const defaultQuery = `{service_name="perflab"}`

// scenarioLabel finds scenario="name" in a label selector.
var scenarioLabel = regexp.MustCompile(`\bscenario\s*=\s*"([^"]+)"`)

// pyroscopeFlameInput fetches the merged profile; when the selector names
// one scenario, its work patterns classify the frames as for a lab run.
func pyroscopeFlameInput(ctx context.Context, o *FlameOptions) (*flameInput, error) {
	c, err := pyroscopeClient(o.FromPyroscope, "", "", "")
	if err != nil {
		return nil, err
	}
	if _, err := pyroscope.ParseProfileType(o.ProfileType); err != nil {
		return nil, usagef(err)
	}
	if o.Since <= 0 {
		return nil, usagef(fmt.Errorf("--since %v: give how far back to read, such as 15m, 1h or 24h", o.Since))
	}
	if o.Query == "" {
		o.Query = defaultQuery
	}
	p, err := c.Fetch(ctx, o.Query, o.ProfileType, o.Since)
	if err != nil {
		return nil, err
	}
	in := &flameInput{src: flame.NewSource(p), title: fmt.Sprintf("%s %s, last %s", o.ProfileType, o.Query, o.Since)}
	if m := scenarioLabel.FindStringSubmatch(o.Query); m != nil {
		if s, err := perflab.Lookup(m[1]); err == nil {
			in.work = s.Work
		}
	}
	return in, nil
}

// readStoredProfile reads file rel of run through its store, with the
// limits every profile is read with (profiles.Limits' defaults), decoded
// for drawing (flame.ReadSource: no profile.Profile).
func readStoredProfile(st *store.Store, run *store.Run, rel string) (*flame.Source, error) {
	f, _, err := st.OpenFile(run.ID, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	src, err := flame.ReadSource(f, profiles.Limits{})
	if err != nil {
		return nil, fmt.Errorf("%s of run %s: %w", rel, run.ID, err)
	}
	return src, nil
}

// readProfileFile reads a profile file the user named: a regular file
// (a FIFO or a device would hang or never end), with the same limits.
func readProfileFile(path string) (*flame.Source, error) {
	f, _, err := store.OpenUserFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	src, err := flame.ReadSource(f, profiles.Limits{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return src, nil
}

// countOf is how many of xs are x.
func countOf(xs []string, x string) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}

func mapKeys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
