package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/lab"
	"github.com/perflab/perflab/internal/report"
	"github.com/spf13/cobra"
)

// ListOptions are the flags of `perflab list`.
type ListOptions struct {
	Names []string
	Long  bool
}

func newListCmd(io *IO, runF runFunc[ListOptions]) *cobra.Command {
	o := &ListOptions{}
	cmd := &cobra.Command{
		Use:   "list [scenario...]",
		Short: "List scenarios with their variants and parameters",
		RunE: func(cmd *cobra.Command, a []string) error {
			o.Names = a
			return runF.or(func(_ context.Context, io *IO, o *ListOptions) error { return listRun(io, o.Names, o.Long) })(cmd.Context(), io, o)
		},
	}
	cmd.Flags().BoolVarP(&o.Long, "long", "l", false, "also explain each scenario's original question and list its work patterns")
	return cmd
}

func listRun(io *IO, names []string, long bool) error {
	var scenarios []*perflab.Scenario
	if len(names) == 0 {
		scenarios = perflab.Scenarios()
	} else {
		long = true
		for _, n := range names {
			s, err := lab.LookupScenario(n, io.Cmd)
			if err != nil {
				return usagef(err)
			}
			scenarios = append(scenarios, s)
		}
	}
	if len(scenarios) == 0 {
		fmt.Fprintln(io.Err, "no scenarios are registered (import github.com/perflab/perflab/scenarios/all)")
		return nil
	}
	writeList(io.Out, scenarios, long, io.cmd("flame"))
	return nil
}

// workHint says where the frame names a scenario's Work patterns match
// come from, after a long listing; flame is the command that draws a
// case's flame graph (perflab flame, go run . flame).
func workHint(flame string) string {
	return "Work patterns are RE2 expressions matched against full function names " +
		"(crypto/md5.block, example.com/you/pkg.(*worker).Run). To see the names in a " +
		"profile: go tool pprof -top perflab-runs/ID/cases/CASE/cpu.pb.gz; " +
		flame + " on a case draws them coloured by category."
}

// writeList writes scenarios as `perflab list` does; long adds each
// one's question and work patterns, and the hint on frame names, which
// names flame as the command that draws them.
func writeList(out io.Writer, scenarios []*perflab.Scenario, long bool, flame string) {
	for i, s := range scenarios {
		if i > 0 {
			fmt.Fprintln(out)
		}
		// A scenario's texts come from its package, which may be anyone's:
		// escaped, like a run's names (issue 26: a description's escape
		// codes reached the terminal raw).
		for j, line := range wrap(s.Name+" — "+s.Doc, listWidth) {
			if j > 0 {
				line = "  " + line
			}
			fmt.Fprintln(out, report.Safe(line))
		}
		if long && s.Long != "" {
			for _, line := range wrap(s.Long, listWidth-2) {
				fmt.Fprintf(out, "  %s\n", report.Safe(line))
			}
		}
		var vs, ps []listItem
		for _, v := range s.Variants {
			vs = append(vs, listItem{report.Safe(v.Name), v.Doc})
		}
		for _, p := range s.Params {
			doc := p.Doc
			if len(p.Values) > 0 {
				doc += " (one of " + strings.Join(p.Values, ", ") + ")"
			}
			if r := p.Range(); r != "" {
				doc += " (" + r + ")"
			}
			ps = append(ps, listItem{report.Safe(p.Name), doc + "; default " + strings.Join(p.Default, ",")})
		}
		ps = append(ps, listItem{"threads", "worker goroutines per case (--threads); default " + joinInts(s.DefaultThreads())})
		fmt.Fprintln(out, "  variants:")
		writeItems(out, vs)
		fmt.Fprintln(out, "  parameters (-p name=v1,v2):")
		writeItems(out, ps)
		if long {
			fmt.Fprintln(out, "  work (frames the time budget counts as work):")
			if len(s.Work) == 0 {
				fmt.Fprintln(out, "    none: the scenario's own code counts as other")
			}
			for _, w := range s.Work {
				// Escaped, as the scenario's other texts; broken into
				// lines of 80 columns, as a pattern has no spaces
				// for wrap: one ran to 132 (suite-lookup's).
				for j, line := range breakPattern(report.Safe(w), listWidth-4, listWidth-6) {
					if j > 0 {
						line = "  " + line
					}
					fmt.Fprintf(out, "    %s\n", line)
				}
			}
		}
	}
	if long {
		fmt.Fprintln(out)
		for _, line := range wrap(workHint(flame), listWidth) {
			fmt.Fprintln(out, line)
		}
	}
}

// breakPattern breaks a regular expression into a first line of at most
// first runes and others of at most rest, after a '|' where it can, else
// after a '/', else anywhere but after a backslash: the pattern is its
// lines joined. Breaking after an alternative's '|' keeps each line a
// whole alternative or more, as a person reads one.
func breakPattern(p string, first, rest int) []string {
	var lines []string
	width := first
	for utf8.RuneCountInString(p) > width {
		bar, slash, hard := -1, -1, -1
		n := 0
		for i, r := range p {
			if n == width {
				break
			}
			n++
			end := i + utf8.RuneLen(r)
			switch {
			case r == '|':
				bar = end
			case r == '/':
				slash = end
			}
			if r != '\\' {
				hard = end
			}
		}
		cut := bar
		if cut <= 0 {
			cut = slash
		}
		if cut <= 0 {
			cut = hard
		}
		if cut <= 0 {
			break // width 1 and a backslash: give up rather than loop
		}
		lines = append(lines, p[:cut])
		p = p[cut:]
		width = rest
	}
	return append(lines, p)
}

// listWidth is the width `perflab list` keeps to.
const listWidth = 80

type listItem struct{ name, doc string }

// writeItems prints names in a column and their docs beside them, wrapped
// so every line fits listWidth, continuation lines under the doc column.
func writeItems(w io.Writer, items []listItem) {
	col := 0
	for _, it := range items {
		col = max(col, len(it.name))
	}
	indent := 4 + col + 2
	for _, it := range items {
		lines := wrap(it.doc, max(listWidth-indent, 20))
		if len(lines) == 0 {
			lines = []string{""} // no doc: the name all the same
		}
		for j, line := range lines {
			name := ""
			if j == 0 {
				name = it.name
			}
			fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("    %-*s  %s", col, name, report.Safe(line)), " "))
		}
	}
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

// wrap breaks text into lines of at most width runes at spaces.
func wrap(text string, width int) []string {
	var lines []string
	var cur strings.Builder
	n := 0 // columns in cur: runes, not bytes (a name may be "é")
	for _, w := range strings.Fields(text) {
		if n > 0 && n+1+utf8.RuneCountInString(w) > width {
			lines = append(lines, cur.String())
			cur.Reset()
			n = 0
		}
		if n > 0 {
			cur.WriteByte(' ')
			n++
		}
		cur.WriteString(w)
		n += utf8.RuneCountInString(w)
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}
