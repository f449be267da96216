package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/units"
	"github.com/perflab/perflab/profiles"
)

// TextOptions control WriteText.
type TextOptions struct {
	// Width is the terminal width the table must fit (default 80).
	// Columns that do not fit are left out, and the output says which.
	Width int
	// Wide puts every column in one table, whatever its width.
	Wide bool
	// Verbose shows every warning, notes included, with each case's own
	// sentence; by default a case's warnings are one short line each
	// under its block, and notes (Info) are counted, not shown.
	Verbose bool
}

// shown says whether a warning is printed under opts.
func (o TextOptions) shown(w Warning) bool { return o.Verbose || w.ShownByDefault() }

// marked says whether a row gets a mark for what affects.
func (o TextOptions) marked(r *Row, affects Affects) bool {
	if o.Verbose {
		return r.Marked(affects, Info)
	}
	return r.Marked(affects, Caution)
}

// mark is what a row's variant cell gets when it has a warning shown
// under its block.
const mark = " !"

// WriteText renders the report as the CLI prints it: a heading, then per
// group a timing block, a budget block and the verdict, then notes and
// warnings. By default every line fits opts.Width columns.
func WriteText(w io.Writer, rep *Run, opts TextOptions) error {
	if opts.Width <= 0 {
		opts.Width = 80
	}
	tw := &textWriter{w: w}
	run := rep.Run
	// An incomplete run's reason may be long (a lost profile names its
	// case): then it goes under the header, wrapped to the width.
	head := fmt.Sprintf("%s  %s  %s", run.ID, run.Env.GoVersion, rep.Status)
	if status, why, ok := strings.Cut(rep.Status, ": "); ok && width(head) > opts.Width {
		tw.linef("%s  %s  %s:", run.ID, run.Env.GoVersion, status)
		tw.wrap(why, opts.Width, "  ")
	} else {
		tw.linef("%s", head)
	}
	machine := fmt.Sprintf("cpu: %s  GOMAXPROCS=%d GOGC=%s", strings.TrimSpace(run.Env.CPU), run.Env.GOMAXPROCS, run.Env.GOGC)
	if run.Env.Commit != "" {
		dirty := ""
		if run.Env.Dirty {
			dirty = "+dirty"
		}
		commit := fmt.Sprintf("commit %.12s%s", run.Env.Commit, dirty)
		// go test's cpu: line may be long ("Oxide Virtual Turin-like
		// Processor" made 89 columns): then the commit goes under it.
		if width(machine)+2+width(commit) > opts.Width {
			machine += "\n  " + commit
		} else {
			machine += "  " + commit
		}
	}
	for _, l := range strings.Split(machine, "\n") {
		tw.linef("%s", l)
	}
	if rep.Machine != "" {
		tw.wrap("machine during the rounds: "+rep.Machine, opts.Width, "")
	}
	legend := fmt.Sprintf("time/op is the median of %s ± its 95%% confidence interval.", rep.Reps)
	switch {
	case rep.HasWindow && run.Config.Trace == "slices":
		legend += " The budget splits time/op by the worker goroutines' time in the execution trace of traced repetitions beside timed ones, as long and in the same rounds; bg gc/op is the GC's background CPU per op, in cpu/op but in no worker's time."
	case rep.HasWindow:
		legend += " The budget splits time/op by the worker goroutines' time in the execution trace of a profiling window; bg gc/op is the GC's background CPU per op, in cpu/op but in no worker's time."
	case rep.HasBudget:
		legend += " The budget is % of time/op."
	}
	if rep.TracerLeftOut {
		legend += " " + TracerLeftOut
	}
	if rep.NoBudget != "" {
		legend += " " + rep.NoBudget
	}
	if rep.HasErr {
		legend += " The budget's ± is its widest share's 95% interval from the CPU samples that split running time, in points."
	}
	if rep.Untrusted() {
		legend += " " + UntrustedMark + " marks a budget that cannot be trusted, with the reason under it."
	}
	tw.wrap(legend, opts.Width, "")

	hidden := map[string]bool{}
	hiddenNotes := 0
	for _, g := range rep.Groups {
		tw.linef("")
		tw.linef("%s", g.Title())
		wide := rep.timingTable(&g, true, opts)
		if rep.HasBudget {
			b := rep.budgetTable(&g, true, opts)
			n := len(profiles.Categories)
			if rep.HasErr {
				n++ // and the ± after them
			}
			wide.cols = append(wide.cols, b.cols[1:1+n]...)
			if b.mark != nil {
				wide.cols = append(wide.cols, b.mark)
			}
			wide.notes = b.notes
		}
		if opts.Wide || wide.total() <= opts.Width {
			// One row per variant when everything fits.
			wide.write(tw, 0)
		} else {
			t := rep.timingTable(&g, false, opts)
			for _, name := range t.fit(opts.Width) {
				hidden[name] = true
			}
			t.write(tw, opts.Width)
			if b := rep.budgetTable(&g, false, opts); b.rows() > 0 {
				b.cols[0].head = "budget"
				b.write(tw, opts.Width)
			}
		}
		if g.Verdict != nil {
			tw.wrap(g.Verdict.String(), opts.Width, "  ")
		}
		if g.Advice != "" {
			tw.wrap(g.Advice, opts.Width, "  ")
		}
		for _, r := range g.Rows {
			for _, wn := range r.Warnings {
				if wn.Grouped && !opts.Verbose {
					continue // marked on the row, worded once under warnings:
				}
				if !opts.shown(wn) {
					hiddenNotes++
					continue
				}
				msg := wn.Message
				if opts.Verbose && wn.Detail != "" {
					msg = wn.Detail
				}
				tw.wrap("! "+variantName(r.Case)+": "+msg, opts.Width, "  ")
			}
		}
	}
	if len(hidden) > 0 {
		var names []string
		for _, c := range optionalOrder {
			if hidden[c] {
				names = append(names, c)
			}
		}
		tw.linef("")
		tw.wrap(fmt.Sprintf("left out to fit %d columns: %s (--wide shows every column)", opts.Width, strings.Join(names, ", ")), opts.Width, "")
	}
	if len(rep.Notes) > 0 {
		tw.linef("")
		tw.wrap("allocation rate vs B/op (rate = B/op × ops/s: it follows throughput; B/op is the cost of one operation):", opts.Width, "")
		for _, n := range rep.Notes {
			tw.wrap(n, opts.Width, "  ")
		}
	}
	var runWarnings []Warning
	for _, wn := range rep.Warnings {
		if opts.shown(wn) {
			runWarnings = append(runWarnings, wn)
		} else {
			hiddenNotes++
		}
	}
	if len(runWarnings) > 0 {
		tw.linef("")
		tw.linef("warnings:")
		for _, wn := range runWarnings {
			tw.wrap(wn.String(), opts.Width, "  ")
		}
	}
	if hiddenNotes > 0 {
		tw.linef("")
		tw.wrap(Count(hiddenNotes, "note")+" left out (--verbose shows them)", opts.Width, "")
	}
	return tw.err
}

// optionalOrder is the order columns are left out in when a table does not
// fit: the allocation rate first (B/op is the cost of one operation), then
// throughput (time/op says it too).
var optionalOrder = []string{"alloc MB/s", "ops/s", "MB/s"}

// variantName is a case's name in its group's table and warnings.
func variantName(c *model.Case) string {
	if c.Variant == "" {
		return c.Name
	}
	return c.Variant
}

func (rep *Run) timingTable(g *Group, wide bool, opts TextOptions) *table {
	t := &table{}
	variant := t.add("variant", false, "")
	timeCol := t.add(units.Label("ns/op"), true, "")
	ci := t.add("±", true, "")
	cpu := t.add(units.Label("cpu-ns/op"), true, "")
	var bg *column
	if wide && rep.HasWindow {
		bg = t.add("bg gc/op", true, "")
	}
	ops := t.add(units.Label("ops/s"), true, "ops/s")
	var mb *column
	if rep.HasMB {
		mb = t.add(units.Label("MB/s"), true, "MB/s")
	}
	bop := t.add(units.Label("B/op"), true, "")
	allocs := t.add(units.Label("allocs/op"), true, "")
	rate := t.add(units.Label("alloc-MB/s"), true, "alloc MB/s")
	extra := make([]*column, len(rep.Metrics))
	for i, u := range rep.Metrics {
		extra[i] = t.add(units.Label(u), true, "")
	}
	for _, r := range g.Rows {
		t.row(r.Message)
		name := r.Case.Variant
		// The wide layout has the budget on the same row.
		if opts.marked(&r, AffectsTime) || wide && rep.HasBudget && opts.marked(&r, AffectsBudget) {
			name += mark
		}
		variant.cells = append(variant.cells, name)
		if !r.OK {
			for _, c := range t.cols[1:] {
				c.cells = append(c.cells, "")
			}
			continue
		}
		ns, _ := r.Stat("ns/op")
		timeCol.cells = append(timeCol.cells, Value(ns.Median, "ns/op"))
		ci.cells = append(ci.cells, CI(ns.Median, ns.MedianLo, ns.MedianHi))
		cpu.cells = append(cpu.cells, r.Cell("cpu-ns/op"))
		if bg != nil {
			bg.cells = append(bg.cells, bgCell(&r))
		}
		ops.cells = append(ops.cells, r.Cell("ops/s"))
		if mb != nil {
			mb.cells = append(mb.cells, r.Cell("MB/s"))
		}
		bop.cells = append(bop.cells, r.Cell("B/op"))
		allocs.cells = append(allocs.cells, r.Cell("allocs/op"))
		rate.cells = append(rate.cells, r.Cell("alloc-MB/s"))
		for i, u := range rep.Metrics {
			extra[i].cells = append(extra[i].cells, r.Cell(u))
		}
	}
	// An optional column no case has a figure for is not shown, nor
	// named as left out: a perflab bench run has no allocation rate.
	for _, c := range t.cols {
		if c.optional != "" && !slices.ContainsFunc(c.cells, func(s string) bool { return s != "" }) {
			c.hidden = true
		}
	}
	return t
}

func bgCell(r *Row) string {
	if r.Case.Window == nil {
		return "-"
	}
	return Value(r.Case.Window.BackgroundGCNsPerOp, "ns/op")
}

// budgetTable has a row per case with a budget, or with all, a row per
// case (blank without a budget) to sit beside the timing table's.
func (rep *Run) budgetTable(g *Group, all bool, opts TextOptions) *table {
	t := &table{}
	variant := t.add("variant", false, "")
	cats := make([]*column, len(profiles.Categories))
	for i, c := range profiles.Categories {
		cats[i] = t.add(string(c), true, "")
	}
	var errCol *column
	if rep.HasErr {
		errCol = t.add("±", true, "")
	}
	var bg *column
	if rep.HasWindow {
		bg = t.add("bg gc/op", true, "")
	}
	for _, r := range g.Rows {
		if r.Untrusted && (all || r.OK) {
			t.mark = t.add("", false, "")
			break
		}
	}
	for _, r := range g.Rows {
		if !all && (!r.OK || !r.HasBudget) {
			continue
		}
		t.row("")
		name := r.Case.Variant
		if !all && opts.marked(&r, AffectsBudget) {
			name += mark
		}
		variant.cells = append(variant.cells, name)
		if t.mark != nil {
			cell := ""
			if r.Untrusted {
				cell = UntrustedMark
			}
			t.mark.cells = append(t.mark.cells, cell)
		}
		var notes []string
		if r.Untrusted {
			notes = append(notes, UntrustedMark+" untrusted: "+r.Trust)
		}
		if r.SchedNote != "" {
			notes = append(notes, r.SchedNote)
		}
		t.notes = append(t.notes, notes)
		for i := range profiles.Categories {
			cell := "-"
			if r.HasBudget {
				cell = Share(r.Budget[i])
			} else if !r.OK {
				cell = ""
			}
			cats[i].cells = append(cats[i].cells, cell)
		}
		if errCol != nil {
			cell := ""
			if r.HasErr {
				cell = ErrCell(r.ErrMax)
			} else if r.HasBudget {
				cell = "-"
			}
			errCol.cells = append(errCol.cells, cell)
		}
		if bg != nil {
			bg.cells = append(bg.cells, bgCell(&r))
		}
	}
	return t
}

// table is a small column layout: the first column left-aligned, the rest
// right-aligned, two spaces between, indented by two. A row with a message
// (a failed case) shows the message after its first cell and does not
// widen any column.
type table struct {
	cols []*column
	msgs []string
	// notes are lines written under a row, by row (nil: none): a
	// budget's trust mark's reason and its sched breakdown.
	notes [][]string
	// mark is the budget table's column of trust marks, when a row
	// has one.
	mark *column
}

// minSchedNote is the sched share of a budget from which the row gets a
// line saying what the goroutines were doing when they lost their CPU.
const minSchedNote = 0.05

type column struct {
	head     string
	right    bool
	optional string // name in optionalOrder, if the column may be left out
	cells    []string
	hidden   bool
}

func (t *table) add(head string, right bool, optional string) *column {
	c := &column{head: head, right: right, optional: optional}
	t.cols = append(t.cols, c)
	return c
}

func (t *table) row(msg string) { t.msgs = append(t.msgs, msg) }

func (t *table) rows() int { return len(t.msgs) }

// width is the number of columns s takes once made Safe, as it is written.
func width(s string) int { return utf8.RuneCountInString(Safe(s)) }

func (c *column) width() int {
	w := width(c.head)
	for _, s := range c.cells {
		w = max(w, width(s))
	}
	return w
}

func (t *table) total() int {
	n := 2
	for i, c := range t.cols {
		if c.hidden {
			continue
		}
		if i > 0 {
			n += 2
		}
		n += c.width()
	}
	return n
}

// fit hides optional columns, in optionalOrder, until the table fits
// width, and returns the names it hid.
func (t *table) fit(w int) []string {
	var hid []string
	for _, name := range optionalOrder {
		if t.total() <= w {
			break
		}
		for _, c := range t.cols {
			if c.optional == name && !c.hidden {
				c.hidden = true
				hid = append(hid, name)
			}
		}
	}
	return hid
}

func (t *table) write(tw *textWriter, maxWidth int) {
	widths := make([]int, len(t.cols))
	for i, c := range t.cols {
		widths[i] = c.width()
	}
	line := func(cell func(c *column) string, msg string) {
		msg = Safe(msg)
		var b strings.Builder
		b.WriteString("  ")
		for i, c := range t.cols {
			if c.hidden {
				continue
			}
			s := Safe(cell(c))
			if i == 0 {
				if msg != "" {
					b.WriteString(s + strings.Repeat(" ", widths[i]-width(s)) + "  " + msg)
					break
				}
				b.WriteString(s + strings.Repeat(" ", widths[i]-width(s)))
				continue
			}
			b.WriteString("  ")
			pad := strings.Repeat(" ", widths[i]-width(s))
			if c.right {
				b.WriteString(pad + s)
			} else {
				b.WriteString(s + pad)
			}
		}
		out := strings.TrimRight(b.String(), " ")
		if maxWidth > 0 && width(out) > maxWidth && msg != "" {
			r := []rune(out)
			out = string(r[:maxWidth-1]) + "…"
		}
		tw.linef("%s", out)
	}
	line(func(c *column) string { return c.head }, "")
	for r, msg := range t.msgs {
		line(func(c *column) string { return c.cells[r] }, msg)
		if r < len(t.notes) {
			for _, n := range t.notes[r] {
				if maxWidth > 0 {
					tw.wrap(n, maxWidth, "    ")
				} else {
					tw.linef("    %s", n)
				}
			}
		}
	}
}

// textWriter writes lines and keeps the first error.
type textWriter struct {
	w   io.Writer
	err error
}

func (tw *textWriter) linef(format string, args ...any) {
	if tw.err == nil {
		// Names and messages come from run.json and profiles: escape
		// control characters in every line (Safe).
		_, tw.err = fmt.Fprintf(tw.w, "%s\n", Safe(fmt.Sprintf(format, args...)))
	}
}

// wrap writes s as lines of at most width columns, breaking at spaces;
// continuation lines are indented two more than the first.
func (tw *textWriter) wrap(s string, w int, indent string) {
	words := strings.Fields(s)
	line := indent
	cont := indent + "  "
	for _, word := range words {
		switch {
		case line == indent || line == cont:
			line += word
		case width(line)+1+width(word) <= w:
			line += " " + word
		default:
			tw.linef("%s", line)
			line = cont + word
		}
	}
	if line != indent && line != cont {
		tw.linef("%s", line)
	}
}
