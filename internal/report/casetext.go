package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/perflab/perflab/internal/model"
)

// WriteCaseText renders one case of run for a terminal (`perflab show
// RUN/CASE`), fitting cols columns (default 80): its status, every metric
// it measured with its interval, its time budget and its warnings. The
// web's case page lays out the same Case.
func WriteCaseText(w io.Writer, run *model.Run, rc *Case, cols int) error {
	if cols <= 0 {
		cols = 80
	}
	tw := &textWriter{w: w}
	c := rc.Case
	tw.wrap(c.Name, cols, "")
	status := "run " + run.ID
	if !run.Complete {
		status += " (incomplete)"
	}
	tw.linef("%s", status)
	if c.Status != model.StatusOK {
		msg := string(c.Status)
		if c.Error != "" {
			msg += ": " + firstLine(c.Error)
		}
		tw.wrap(msg, cols, "  ")
	}
	if len(rc.Metrics) > 0 {
		tw.linef("")
		lw := 0
		for _, m := range rc.Metrics {
			lw = max(lw, width(m.Label))
		}
		for _, m := range rc.Metrics {
			tw.linef("  %s  %s", pad(m.Label, lw), strings.TrimSpace(m.Cell.Text+" "+m.Cell.Err))
		}
	}
	if len(rc.Budget) > 0 {
		tw.linef("")
		tw.linef("time budget (splits the median time/op):")
		lw, vw, sw := 0, 0, 0
		for _, p := range rc.Budget {
			lw, vw, sw = max(lw, width(p.Category)), max(vw, width(Value(p.NS, "ns/op"))), max(sw, width(Share(p.Share)))
		}
		for _, p := range rc.Budget {
			v, sh := Value(p.NS, "ns/op"), Share(p.Share)
			line := fmt.Sprintf("  %s  %s%s  %s%s", pad(p.Category, lw), strings.Repeat(" ", vw-width(v)), v, strings.Repeat(" ", sw-width(sh)), sh)
			if p.Err > 0 {
				line += "  " + ErrCell(p.Err)
			}
			tw.linef("%s", line)
		}
		if rc.Untrusted {
			tw.wrap(UntrustedMark+" untrusted: "+rc.Trust, cols, "  ")
		}
		if rc.SchedBy != "" {
			tw.wrap(rc.SchedBy, cols, "  ")
		}
		if rc.TracerLeftOut != "" {
			tw.wrap(rc.TracerLeftOut, cols, "  ")
		}
		if rc.HasErr() {
			tw.wrap("± is a share's 95% interval from the CPU samples that place running time (and, under load, a wait for a CPU), in points; blocked time is exact.", cols, "  ")
		}
	}
	if len(rc.Warnings) > 0 {
		tw.linef("")
		tw.linef("warnings:")
		for _, wn := range rc.Warnings {
			tw.wrap(wn.Message, cols, "  ")
		}
	}
	return tw.err
}

// pad fills s with spaces to n columns.
func pad(s string, n int) string { return s + strings.Repeat(" ", max(0, n-width(s))) }
