package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/lab"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/units"
	"github.com/spf13/cobra"
)

// CompareOptions are the flags of `perflab compare`.
type CompareOptions struct {
	Refs      []string
	Base      string
	Metrics   []string
	Dir       string
	Threshold string
	FailOn    string
	Format    string
	JSON      bool
	// metricsSet says --metric was given: a metric it names that no
	// compared case measured is then a warning (the defaults are not).
	metricsSet bool
	// passed is what resolving "latest" said of newer runs it passed
	// by (resolveNoted), which a gate refuses.
	passed []string
}

var defaultCompareMetrics = units.Compared()

func newCompareCmd(io *IO, runF runFunc[CompareOptions]) *cobra.Command {
	o := &CompareOptions{}
	cmd := &cobra.Command{
		Use:   "compare OLD NEW | compare RUN --base VARIANT",
		Short: "Say which differences between two runs, cases or variants are real and large enough to matter",
		Long: `Compare measured cases metric by metric: the median of each side with its 95%
confidence interval, the change with its confidence interval, and a test on the
repetitions. Within one run (--base, or two cases of one run) the repetitions pair
by round and the test is Wilcoxon's signed-rank on per-round differences; across
runs it is Mann–Whitney U. The p-values are adjusted for the number of rows
(Benjamini–Hochberg, per metric). A change is "better" or "worse" only when it is
significant after that adjustment and its interval lies wholly beyond
--threshold; "~" otherwise, "~ (not beyond 5%)" when significant but not clearly beyond the
threshold, "cannot tell" when there were too few repetitions.

  perflab compare OLD-RUN NEW-RUN    every case the two runs share, by name
  perflab compare RUN/CASE RUN/CASE  two single cases (CASE: its name or slug)
  perflab compare RUN --base mutex   each variant against mutex, by parameters

A run may be an id, "latest", or a run directory. As a CI gate, --fail-on
regression exits 1 when any compared metric regressed, 2 on a usage error, and 3
when the comparison could not be made (no shared cases, an empty run, a run
against itself) or the gate cannot judge something: an incomplete run, a case that
failed, went missing, is duplicated or has no repetitions, or repetitions too few
for a change to be significant. It exits 0 only when everything was judged and
nothing regressed, and says on stderr why it did not.`,
		Example: `  perflab compare 20261130-111905-cipher-cache latest
  perflab compare latest --base mutex --metric time/op,cpu/op
  perflab compare base-run new-run --fail-on regression --format md > summary.md`,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.Base == "" && len(args) != 2 || o.Base != "" && len(args) != 1 {
				return usagef(errors.New("give two runs or cases (OLD NEW), or one run with --base VARIANT"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Refs = args
			o.metricsSet = cmd.Flags().Changed("metric")
			return runF.or(func(_ context.Context, io *IO, o *CompareOptions) error { return compareRun(io, o) })(cmd.Context(), io, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Base, "base", "", "compare every variant of one run against this `variant`")
	f.StringSliceVar(&o.Metrics, "metric", defaultCompareMetrics, "metrics to compare, as the tables name them (time/op, cpu/op, ops/s, B/op, allocs/op, alloc-MB/s, hits/op, …); ns/op and cpu-ns/op, as run.json names them, also work")
	storeFlag(f, &o.Dir)
	f.StringVar(&o.Threshold, "threshold", "5%", "smallest change that counts as better or worse, e.g. 5% or 0 for any significant change")
	f.StringVar(&o.FailOn, "fail-on", "", "exit 1 when the comparison finds this: regression")
	f.StringVar(&o.Format, "format", "text", "output format: text, md (Markdown for a pull request) or json")
	f.BoolVar(&o.JSON, "json", false, "same as --format json")
	return cmd
}

// parseThreshold reads "5%", "5" (percent) or "0".
func parseThreshold(s string) (float64, error) {
	t := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	v, err := strconv.ParseFloat(t, 64)
	// !(v >= 0): NaN, which compares false with every change, would pass
	// every gate (issue 26).
	if err != nil || !(v >= 0) || v >= 100 {
		return 0, fmt.Errorf("--threshold %q: want a percentage from 0 to 100, such as 5%%", s)
	}
	if v == 0 {
		return -1, nil // compare.Options: negative means none
	}
	return v / 100, nil
}

func compareRun(io *IO, o *CompareOptions) error {
	thr, err := parseThreshold(o.Threshold)
	if err != nil {
		return usagef(err)
	}
	if o.JSON {
		o.Format = "json"
	}
	switch o.Format {
	case "text", "md", "json":
	default:
		return usagef(fmt.Errorf("--format %q: want text, md or json", o.Format))
	}
	switch o.FailOn {
	case "", "regression":
	default:
		return usagef(fmt.Errorf("--fail-on %q: want regression", o.FailOn))
	}
	st := store.Open(store.Dir(o.Dir))
	c, pr, err := comparison(io, st, o)
	if err != nil {
		var ee *ExitError
		if !errors.Is(err, store.ErrUnreadable) && (isUsageError(err) || errors.As(err, &ee) || notFound(err)) {
			return err
		}
		// A store that cannot be read: nothing was compared, which a
		// gate must not take for a regression (1).
		return &ExitError{Code: exitCannotJudge, Err: err}
	}
	units, err := lab.MetricUnits(o.Metrics, pr.Pairs)
	if err != nil {
		return usagef(err)
	}
	req := lab.GateRequest{Units: units, Passed: o.passed}
	for _, u := range lab.Measure(c, pr, units, thr) {
		if o.metricsSet && !c.Unusable && len(c.Metrics) > 0 {
			// Named, and a metric perflab knows, but no compared case has
			// it: say so rather than leave the gate one metric short.
			c.Warnings = append(c.Warnings, report.Warning{Kind: report.KindNotCompared, Severity: report.Caution, Affects: report.AffectsRun,
				Message: fmt.Sprintf("--metric %s: no compared case measured it (not compared)", report.MetricName(u))})
			req.Unmeasured = append(req.Unmeasured, u)
		}
	}
	// The gate is judged before the output is written, so that --json
	// carries its verdict and reasons.
	var gateErr error
	if o.FailOn == "regression" {
		g := lab.JudgeGate(c, pr, req)
		c.Gate = gateReport(g)
		gateErr = gateError(g)
	}
	switch o.Format {
	case "json":
		err = report.WriteCompareJSON(io.Out, c)
	case "md":
		err = report.WriteCompareMarkdown(io.Out, c)
	default:
		err = report.WriteCompareText(io.Out, c, 80)
	}
	if err != nil {
		return err
	}
	if c.Unusable {
		if o.Format == "text" && io.OutIsTerminal && io.ErrIsTerminal {
			// The table just said why, on the same screen.
			return &ExitError{Code: exitCannotJudge, Err: errors.New("cannot compare (the reason is above)")}
		}
		return &ExitError{Code: exitCannotJudge, Err: errors.New("cannot compare: " + c.Reason)}
	}
	return gateErr
}

// comparison resolves the references into the pairs to compare and the
// report's sides, cases only one side has and warnings.
func comparison(io *IO, st *store.Store, o *CompareOptions) (*report.Comparison, compare.Pairing, error) {
	var pr compare.Pairing
	// Each side may name latest (latest/a and latest/b): its note is
	// said, and refused by a gate, once.
	resolve := func(io *IO, st *store.Store, ref string) (*store.Ref, error) {
		r, note, err := resolveNoted(io, st, ref)
		if note != "" && !slices.Contains(o.passed, note) {
			sayPassed(io, note)
			o.passed = append(o.passed, note)
		}
		return r, err
	}
	if o.Base != "" {
		ref, err := resolve(io, st, o.Refs[0])
		if err != nil {
			return nil, pr, err
		}
		if ref.Case != nil {
			return nil, pr, usagef(errors.New("--base compares the variants of a whole run: give a run, not a case"))
		}
		c, pr, err := lab.CompareVariants(ref.Run, o.Base, io.Cmd)
		if err != nil {
			return nil, pr, usagef(err)
		}
		return c, pr, nil
	}
	ra, err := resolve(io, st, o.Refs[0])
	if err != nil {
		return nil, pr, err
	}
	rb, err := resolve(io, st, o.Refs[1])
	if err != nil {
		return nil, pr, err
	}
	c, pr, err := lab.CompareRefs(ra, rb, [2]string{o.Refs[0], o.Refs[1]})
	if errors.Is(err, lab.ErrMixedRefs) {
		return nil, pr, usagef(err)
	}
	return c, pr, err
}
