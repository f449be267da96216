package cli

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/perflab/perflab/internal/runner"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/profiles"
)

// fixedUnits have their own columns; other per-op metrics reported by a
// scenario (hits/op, …) get columns after them.
var fixedUnits = map[string]bool{"ns/op": true, "cpu-ns/op": true, "ops/s": true, "B/op": true,
	"allocs/op": true, "alloc-MB/s": true, "gc/op": true, "gc-cpu-%": true, "MB/s": true}

// writeTable prints a run's results: one block per parameter combination
// (and goroutine count), one row per variant, with the time budget split
// into categories as a share of time/op.
func writeTable(w io.Writer, run *store.Run) {
	status := "complete"
	if !run.Complete {
		status = "INCOMPLETE: " + run.Note
	}
	fmt.Fprintf(w, "%s  %s  %s\n", run.ID, run.Env.GoVersion, status)
	fmt.Fprintf(w, "cpu: %s  GOMAXPROCS=%d GOGC=%s", run.Env.CPU, run.Env.GOMAXPROCS, run.Env.GOGC)
	if run.Env.Commit != "" {
		dirty := ""
		if run.Env.Dirty {
			dirty = "+dirty"
		}
		fmt.Fprintf(w, "  commit %.12s%s", run.Env.Commit, dirty)
	}
	reps := fmt.Sprintf("%d", run.Config.Count)
	if !run.Complete {
		reps = fmt.Sprintf("up to %d", run.Config.Count)
	}
	fmt.Fprintf(w, "\ntime/op is the median of %s repetitions ± its 95%% confidence interval; budget is %% of time/op\n", reps)
	hasBG := false
	for _, c := range run.Cases {
		hasBG = hasBG || c.Window != nil
	}
	if hasBG {
		fmt.Fprintln(w, "budget: the worker goroutines' time in the profiling window's execution trace; bg gc/op: GC background workers' CPU, in cpu/op but in no worker's time")
	}

	// Group cases by everything but the variant, keeping first-seen order.
	var groups []string
	byGroup := map[string][]*store.Case{}
	for i := range run.Cases {
		c := &run.Cases[i]
		g := groupKey(c)
		if _, ok := byGroup[g]; !ok {
			groups = append(groups, g)
		}
		byGroup[g] = append(byGroup[g], c)
	}
	extra := extraMetrics(run)
	hasMB := false
	for _, c := range run.Cases {
		if _, ok := c.Stats["MB/s"]; ok {
			hasMB = true
		}
	}
	var warnings warningList
	var notes []string
	for _, g := range groups {
		notes = append(notes, allocNotes(g, byGroup[g])...)
		fmt.Fprintf(w, "\n%s\n", g)
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
		head := []string{"variant", "time/op", "±", "cpu/op"}
		if hasBG {
			head = append(head, "bg gc/op")
		}
		head = append(head, "ops/s")
		if hasMB {
			head = append(head, "MB/s")
		}
		head = append(head, "B/op", "allocs/op", "alloc MB/s")
		head = append(head, extra...)
		for _, cat := range profiles.Categories {
			head = append(head, string(cat))
		}
		fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
		for _, c := range byGroup[g] {
			if c.Status != store.StatusOK {
				msg := c.Status
				if c.Error != "" {
					msg += ": " + firstLineOf(c.Error)
				}
				fmt.Fprintf(tw, "%s\t  %s\n", c.Variant, msg) // unterminated: the message does not widen the time/op column
				continue
			}
			ns := c.Stats["ns/op"]
			row := []string{c.Variant, fmtNs(ns.Median), fmtPct(runner.HalfWidth(ns)), fmtNs(c.Stats["cpu-ns/op"].Median)}
			if hasBG {
				bg := "-"
				if c.Window != nil {
					bg = fmtNs(c.Window.BackgroundGCNsPerOp)
				}
				row = append(row, bg)
			}
			row = append(row, fmtSI(c.Stats["ops/s"].Median))
			if hasMB {
				row = append(row, fmtNum(c.Stats["MB/s"].Median))
			}
			row = append(row, fmtNum(c.Stats["B/op"].Median), fmtNum(c.Stats["allocs/op"].Median), fmtNum(c.Stats["alloc-MB/s"].Median))
			for _, u := range extra {
				if st, ok := c.Stats[u]; ok {
					row = append(row, fmt.Sprintf("%.3f", st.Median))
				} else {
					row = append(row, "")
				}
			}
			var total float64
			for _, v := range c.Budget {
				total += v
			}
			for _, cat := range profiles.Categories {
				if total == 0 {
					row = append(row, "-")
					continue
				}
				row = append(row, fmt.Sprintf("%.0f%%", 100*c.Budget[string(cat)]/total))
			}
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
			for _, wmsg := range c.Warnings {
				warnings.add(c.Name, wmsg)
			}
		}
		tw.Flush()
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "\nallocation rate vs B/op (rate = B/op × ops/s: it follows throughput; B/op is the cost of one operation):")
		for _, m := range notes {
			fmt.Fprintln(w, "  "+m)
		}
	}
	warnings.write(w)
}

// warningList groups the same warning across cases, so a noisy machine
// gives one line, not one per case. The first figure in a message (the 37
// of ±37%, a sample count) may differ within a group and is shown as its
// range over the group.
type warningList struct {
	order  []string
	groups map[string]*warningGroup
}

type warningGroup struct {
	cases    []string
	lo, hi   float64
	hasRange bool
}

var numRE = regexp.MustCompile(`\d+(\.\d+)?`)

func (l *warningList) add(caseName, msg string) {
	msg = firstLineOf(msg)
	key := msg
	if loc := numRE.FindStringIndex(msg); loc != nil {
		key = msg[:loc[0]] + "{}" + msg[loc[1]:]
	}
	if l.groups == nil {
		l.groups = map[string]*warningGroup{}
	}
	g, ok := l.groups[key]
	if !ok {
		g = &warningGroup{lo: math.Inf(1), hi: math.Inf(-1)}
		l.groups[key] = g
		l.order = append(l.order, key)
	}
	g.cases = append(g.cases, caseName)
	if m := numRE.FindString(msg); m != "" {
		v, _ := strconv.ParseFloat(m, 64)
		g.lo, g.hi, g.hasRange = math.Min(g.lo, v), math.Max(g.hi, v), true
	}
}

func (l *warningList) write(w io.Writer) {
	if len(l.order) == 0 {
		return
	}
	fmt.Fprintln(w, "\nwarnings:")
	for _, key := range l.order {
		g := l.groups[key]
		msg := key
		if g.hasRange {
			r := strconv.FormatFloat(g.lo, 'f', -1, 64)
			if g.hi != g.lo {
				r += "–" + strconv.FormatFloat(g.hi, 'f', -1, 64)
			}
			msg = strings.Replace(msg, "{}", r, 1)
		}
		if len(g.cases) == 1 {
			fmt.Fprintf(w, "  %s: %s\n", g.cases[0], msg)
			continue
		}
		names := g.cases
		more := ""
		if len(names) > 3 {
			names, more = names[:3], fmt.Sprintf(", and %d more", len(g.cases)-3)
		}
		fmt.Fprintf(w, "  %d cases: %s (%s%s)\n", len(g.cases), msg, strings.Join(names, ", "), more)
	}
}

func groupKey(c *store.Case) string {
	keys := make([]string, 0, len(c.Params))
	for k := range c.Params {
		keys = append(keys, k)
	}
	// Case names list parameters in the scenario's order; recover it.
	order := map[string]int{}
	for i, part := range strings.Split(c.Name, "/") {
		k, _, _ := strings.Cut(part, "=")
		order[k] = i
	}
	sort.Slice(keys, func(i, j int) bool { return order[keys[i]] < order[keys[j]] })
	parts := make([]string, 0, len(keys)+1)
	for _, k := range keys {
		parts = append(parts, k+"="+c.Params[k])
	}
	parts = append(parts, fmt.Sprintf("threads=%d", c.Threads))
	return strings.Join(parts, " ")
}

func extraMetrics(run *store.Run) []string {
	seen := map[string]bool{}
	for _, c := range run.Cases {
		for u := range c.Stats {
			if !fixedUnits[u] {
				seen[u] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for u := range seen {
		out = append(out, u)
	}
	sort.Strings(out)
	return out
}

func fmtNs(ns float64) string {
	switch {
	case ns == 0:
		return "0"
	case ns < 10:
		return fmt.Sprintf("%.2fns", ns)
	case ns < 1e3:
		return fmt.Sprintf("%.1fns", ns)
	case ns < 1e6:
		return fmt.Sprintf("%.2fµs", ns/1e3)
	case ns < 1e9:
		return fmt.Sprintf("%.2fms", ns/1e6)
	}
	return fmt.Sprintf("%.2fs", ns/1e9)
}

func fmtPct(f float64) string {
	if math.IsInf(f, 0) {
		return "±∞"
	}
	return fmt.Sprintf("±%.0f%%", 100*f)
}

func fmtSI(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.2fG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func fmtNum(v float64) string {
	switch {
	case v == 0:
		return "0"
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 1:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.3f", v)
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
