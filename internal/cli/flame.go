package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	goio "io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/lab"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/store"
	"github.com/spf13/cobra"
)

// FlameOptions are the flags of `perflab flame`.
type FlameOptions struct {
	Inputs []string // one profile, or base and new with Diff
	Out    string
	// Store is the run store a RUN/CASE input is read from: what the
	// other commands' -o/--out is (flame's -o is Out).
	Store string
	// StoreAsOut is a --out given to flame: refused, since it is the
	// store elsewhere and could pass for --output here.
	StoreAsOut string
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
A stored case, RUN/CASE, is read from the run store --store (the directory the
other commands take as -o/--out; default $PERFLAB_DIR or perflab-runs).

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
	f.StringVar(&opts.Store, "store", "", "run store `directory` a RUN/CASE is read from, the other commands' -o/--out (default $"+store.EnvDir+" or "+store.DefaultDir+")")
	f.StringVar(&opts.StoreAsOut, "out", "", "refused: the output file is -o/--output, the run store --store")
	_ = f.MarkHidden("out")
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
	f.StringVar(&opts.Query, "query", "", "with --from-pyroscope: label selector of the profiles to merge (default "+lab.DefaultQuery+")")
	f.StringVar(&opts.ProfileType, "profile-type", "wall", "with --from-pyroscope: wall, cpu, mutex, block or a full Pyroscope profile type id")
	f.DurationVar(&opts.Since, "since", time.Hour, "with --from-pyroscope: how far back to read")
	f.StringVar(&opts.Goroutine, "goroutine", "", "for an execution trace: draw only goroutines started in a function matching this `regexp` (default all)")
	return cmd
}

func flameRun(ctx context.Context, io *IO, o *FlameOptions) error {
	switch {
	case o.StoreAsOut != "":
		return usagef(fmt.Errorf("--out %s: flame's output file is -o/--output, and the run store, which the other commands take as -o/--out, is --store here", o.StoreAsOut))
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
	req := lab.FlameRequest{
		Inputs: o.Inputs, Stdin: io.In, Kind: o.Kind, Diff: o.Diff, Layout: o.Layout, Rules: o.Rules, Work: o.Work,
		SampleType: o.SampleType, Title: o.Title, Width: o.Width, MinWidth: o.MinWidth, Goroutine: o.Goroutine,
		// resolve, as show and compare do: "latest" says which newer runs,
		// that measured nothing, it passed by.
		Resolve:  func(ref string) (*store.Ref, error) { return resolve(io, store.Open(store.Dir(o.Store)), ref) },
		StoreDir: store.Dir(o.Store),
		Cmd:      io.Cmd,
		Traced:   func(t lab.TraceInput) { sayTrace(io, t) },
	}
	if o.FromPyroscope != "" {
		url, tenant, user, password := pyroscopeServer(o.FromPyroscope, "", "", "")
		req.Pyroscope = &lab.PyroscopeQuery{URL: url, TenantID: tenant, User: user, Password: password, Query: o.Query, ProfileType: o.ProfileType, Since: o.Since}
	}
	fl, err := lab.PlanFlame(ctx, req)
	if err != nil {
		return labUsage(err)
	}
	for _, in := range fl.Inputs {
		if in.Warning != "" {
			noteWrapped(io.Err, "warning: "+report.SafeText(in.Warning))
		}
	}

	// The output is streamed to its file or stdout, never held whole
	// (issue 14): each writer refuses, before writing, output over its
	// budget (flame.DefaultMaxOutput, profiles.MaxFolded).
	write := func(w goio.Writer) error {
		if format == "folded" {
			return labUsage(fl.WriteFolded(w))
		}
		t, err := fl.Tree()
		if err != nil {
			return labUsage(err)
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

// sayTrace says on stderr what an execution trace held and what of it
// is drawn.
func sayTrace(io *IO, t lab.TraceInput) {
	// Wrapped at 80 columns, as run's and bench's notes are: on one line
	// each ran to 130 and 160.
	noteWrapped(io.Err, fmt.Sprintf("%s: execution trace of %s, %d goroutines (the runtime's and profilers' left out); drawn: %s",
		report.SafeText(t.Name), t.Span.Round(time.Millisecond), t.Goroutines, report.SafeText(t.Drawn)))
	if t.CPUSamples == 0 {
		noteWrapped(io.Err, "the trace has no CPU samples, so running time is not split by what ran: trace with the CPU profiler on too (go test -trace t.out -cpuprofile c.out)")
	}
}
