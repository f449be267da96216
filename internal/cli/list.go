package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/perflab/perflab"
	"github.com/spf13/cobra"
)

func newListCmd(io *IO) *cobra.Command {
	var long bool
	cmd := &cobra.Command{
		Use:   "list [scenario...]",
		Short: "List scenarios with their variants and parameters",
		RunE: func(cmd *cobra.Command, args []string) error {
			return listRun(io, args, long)
		},
	}
	cmd.Flags().BoolVarP(&long, "long", "l", false, "also explain each scenario's original question")
	return cmd
}

func listRun(io *IO, names []string, long bool) error {
	var scenarios []*perflab.Scenario
	if len(names) == 0 {
		scenarios = perflab.Scenarios()
	} else {
		long = true
		for _, n := range names {
			s, err := perflab.Lookup(n)
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
	for i, s := range scenarios {
		if i > 0 {
			fmt.Fprintln(io.Out)
		}
		fmt.Fprintf(io.Out, "%s — %s\n", s.Name, s.Doc)
		if long && s.Long != "" {
			for _, line := range wrap(s.Long, 76) {
				fmt.Fprintf(io.Out, "  %s\n", line)
			}
		}
		tw := tabwriter.NewWriter(io.Out, 2, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "  variants:")
		for _, v := range s.Variants {
			fmt.Fprintf(tw, "    %s\t%s\n", v.Name, v.Doc)
		}
		fmt.Fprintln(tw, "  parameters (-p name=v1,v2):")
		for _, p := range s.Params {
			allowed := ""
			if len(p.Values) > 0 {
				allowed = " (one of " + strings.Join(p.Values, ", ") + ")"
			}
			fmt.Fprintf(tw, "    %s\t%s%s\tdefault %s\n", p.Name, p.Doc, allowed, strings.Join(p.Default, ","))
		}
		fmt.Fprintf(tw, "    threads\tworker goroutines per case (--threads)\tdefault %s\n", joinInts(s.DefaultThreads()))
		tw.Flush()
	}
	return nil
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
	for _, w := range strings.Fields(text) {
		if cur.Len() > 0 && cur.Len()+1+len(w) > width {
			lines = append(lines, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(w)
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}
