package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/store"
	"github.com/spf13/cobra"
	"golang.org/x/perf/benchmath"
)

// CompareOptions are the flags of `perflab compare`.
type CompareOptions struct {
	Refs    []string
	Base    string
	Metrics []string
	Dir     string
}

var defaultCompareMetrics = []string{"ns/op", "cpu-ns/op", "B/op", "allocs/op"}

func newCompareCmd(io *IO) *cobra.Command {
	o := &CompareOptions{}
	cmd := &cobra.Command{
		Use:   "compare OLD NEW | compare RUN --base VARIANT",
		Short: "Say which differences between two runs, cases or variants are significant",
		Long: `Compare measured cases metric by metric, like benchstat: the median of each side
with its 95% confidence interval, the change, and the Mann–Whitney U test on the
repetitions. "~" means no significant difference at p < 0.05; "~ cannot tell"
means there were too few repetitions for any difference to be significant.

  perflab compare OLD-RUN NEW-RUN          every case the two runs share, by name
  perflab compare RUN/CASE RUN/CASE        two single cases (CASE is a name or its slug)
  perflab compare RUN --base mutex         each variant against mutex, parameters matched

A run id may be "latest".`,
		Example: `  perflab compare 20261130-111905-cipher-cache latest
  perflab compare latest --base mutex --metric ns/op,cpu-ns/op`,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.Base == "" && len(args) != 2 || o.Base != "" && len(args) != 1 {
				return usagef(errors.New("give two runs or cases (OLD NEW), or one run with --base VARIANT"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Refs = args
			return compareRun(io, o)
		},
	}
	cmd.Flags().StringVar(&o.Base, "base", "", "compare every variant of one run against this `variant`")
	cmd.Flags().StringSliceVar(&o.Metrics, "metric", defaultCompareMetrics, "metrics to compare (units as in run.json: ns/op, cpu-ns/op, ops/s, B/op, allocs/op, hits/op, MB/s, …)")
	cmd.Flags().StringVarP(&o.Dir, "out", "o", "", "run store directory (default $"+store.EnvDir+" or "+store.DefaultDir+")")
	return cmd
}

// pair is two cases to compare, with the label of the row.
type pair struct {
	label string
	a, b  *store.Case
}

func compareRun(io *IO, o *CompareOptions) error {
	st := store.Open(store.Dir(o.Dir))
	var pairs []pair
	var titleA, titleB string
	if o.Base != "" {
		ref, err := st.Resolve(o.Refs[0])
		if err != nil {
			return err
		}
		run := ref.Run
		if pairs, err = variantPairs(run, o.Base); err != nil {
			return usagef(err)
		}
		titleA, titleB = o.Base, "variant"
	} else {
		runA, caseA, err := loadRef(st, o.Refs[0])
		if err != nil {
			return err
		}
		runB, caseB, err := loadRef(st, o.Refs[1])
		if err != nil {
			return err
		}
		titleA, titleB = runA.ID, runB.ID
		switch {
		case caseA != nil && caseB != nil:
			pairs = []pair{{caseA.Name + " vs " + caseB.Name, caseA, caseB}}
			if caseA.Name == caseB.Name {
				pairs[0].label = caseA.Name
			}
		case caseA == nil && caseB == nil:
			for i := range runA.Cases {
				if c, ok := runB.Case(runA.Cases[i].Name); ok {
					pairs = append(pairs, pair{runA.Cases[i].Name, &runA.Cases[i], c})
				}
			}
			if len(pairs) == 0 {
				return fmt.Errorf("runs %s and %s share no case names (compare two cases with RUN/CASE RUN/CASE)", runA.ID, runB.ID)
			}
		default:
			return usagef(errors.New("compare a run with a run, or a case with a case"))
		}
	}
	for _, unit := range o.Metrics {
		writeComparison(io.Out, unit, titleA, titleB, pairs)
	}
	return nil
}

// loadRef loads "RUN", "RUN/CASE" or a run or case directory; the case is
// nil for a whole run.
func loadRef(st *store.Store, ref string) (*store.Run, *store.Case, error) {
	r, err := st.Resolve(ref)
	if err != nil {
		return nil, nil, err
	}
	return r.Run, r.Case, nil
}

// variantPairs pairs every case of run with the base variant's case at the
// same parameters and goroutine count.
func variantPairs(run *store.Run, base string) ([]pair, error) {
	bases := map[string]*store.Case{}
	for i := range run.Cases {
		if c := &run.Cases[i]; c.Variant == base {
			bases[report.GroupKey(run, c)] = c
		}
	}
	if len(bases) == 0 {
		var names []string
		seen := map[string]bool{}
		for _, c := range run.Cases {
			if !seen[c.Variant] {
				seen[c.Variant] = true
				names = append(names, c.Variant)
			}
		}
		return nil, fmt.Errorf("run %s has no variant %q (it has %s)", run.ID, base, strings.Join(names, ", "))
	}
	var out []pair
	for i := range run.Cases {
		c := &run.Cases[i]
		if b, ok := bases[report.GroupKey(run, c)]; ok && c.Variant != base {
			out = append(out, pair{report.GroupKey(run, c) + "  " + c.Variant, b, c})
		}
	}
	return out, nil
}

// writeComparison prints one metric's block, benchstat style.
func writeComparison(w io.Writer, unit, titleA, titleB string, pairs []pair) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\t%s\t%s\tchange\tverdict\n", unit, titleA, titleB)
	var warnings []string
	seen := map[string]bool{}
	rows := 0
	for _, p := range pairs {
		if p.a.Status != store.StatusOK || p.b.Status != store.StatusOK {
			continue
		}
		ms := compare.Cases(p.a, p.b, []string{unit})
		if len(ms) == 0 {
			continue
		}
		m := ms[0]
		rows++
		verdict := m.Verdict + " "
		if verdict == "~ " {
			verdict = "" // the change column says it already
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s(p=%.3f n=%d+%d)\n", p.label,
			summaryText(m.A, unit), summaryText(m.B, unit), m.Delta(), verdict, m.Cmp.P, m.Cmp.N1, m.Cmp.N2)
		for _, e := range m.Warnings() {
			if !seen[e.Error()] {
				seen[e.Error()] = true
				warnings = append(warnings, e.Error())
			}
		}
	}
	if rows == 0 {
		return
	}
	tw.Flush()
	for _, msg := range warnings {
		fmt.Fprintf(w, "  warning: %s\n", msg)
	}
	fmt.Fprintln(w)
}

func summaryText(s benchmath.Summary, unit string) string {
	return fmtUnit(s.Center, unit) + " " + ciPct(s.Center, s.Lo, s.Hi)
}

// fmtUnit formats a value of unit for the comparison table.
func fmtUnit(v float64, unit string) string {
	switch unit {
	case "ns/op", "cpu-ns/op":
		return fmtNs(v)
	case "ops/s":
		return fmtSI(v)
	}
	if v != 0 && math.Abs(v) < 0.01 {
		// Keep tiny values visible: a verdict on "0.000" reads as noise.
		return strconv.FormatFloat(v, 'g', 2, 64)
	}
	return fmtNum(v)
}

// ciPct is the 95% interval as ± percent of the median, as benchstat
// prints it; "±∞" when there were too few samples for one.
func ciPct(center, lo, hi float64) string {
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return "±∞"
	}
	if center == 0 {
		return "±0%"
	}
	return fmt.Sprintf("±%.0f%%", 100*math.Max(hi/center-1, 1-lo/center))
}
