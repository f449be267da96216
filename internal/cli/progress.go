package cli

import (
	"fmt"
	"github.com/perflab/perflab/internal/report"
	"strings"
	"time"
	"unicode/utf8"
)

// progress prints run progress to stderr: a redrawn line on a terminal,
// one line per phase otherwise (logs, CI). The line shows the phase, a bar,
// the time elapsed against the run's estimate, and the case, its variant
// first, so it fits 80 columns: a redrawn line that wraps can no longer be
// erased with \r.
type progress struct {
	io       *IO
	phase    string
	total    int
	done     int
	began    time.Time // the run's start
	estimate time.Duration
	last     time.Time
	width    int
	inline   bool
}

// lineWidth is the width the redrawn line keeps within.
const lineWidth = 79

func newProgress(io *IO, estimate time.Duration) *progress {
	return &progress{io: io, inline: io.ErrIsTerminal, width: 12, began: time.Now(), estimate: estimate}
}

func (p *progress) Phase(name string, total int) {
	p.endLine()
	p.phase, p.total, p.done = name, total, 0
	if !p.inline {
		fmt.Fprintf(p.io.Err, "perflab: %s (%s) %s\n", name, report.Count(total, "case"), p.clock())
	}
}

// clock is "0:42 of ~2:10": time since the run began, and the estimate
// made before it (or, once past it, just the elapsed time).
func (p *progress) clock() string {
	el := time.Since(p.began)
	if p.estimate <= 0 || el > p.estimate {
		return minSec(el)
	}
	return minSec(el) + " of ~" + minSec(p.estimate)
}

func minSec(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

func (p *progress) Step(name string) {
	p.done++
	if !p.inline {
		return
	}
	// Redraw at most 10 times a second; the last step always draws.
	if now := time.Now(); now.Sub(p.last) < 100*time.Millisecond && p.done < p.total {
		return
	}
	p.last = time.Now()
	filled := 0
	if p.total > 0 {
		filled = p.width * p.done / p.total
	}
	head := fmt.Sprintf("%-16s [%s%s] %d/%d %s ", p.phase,
		strings.Repeat("█", filled), strings.Repeat("·", p.width-filled), p.done, p.total, p.clock())
	fmt.Fprintf(p.io.Err, "\r\033[K%s%s", head, shortCase(name, lineWidth-utf8.RuneCountInString(head)))
}

// shortCase writes a case name for the progress line: "mutex keys=1024
// key=ssk threads=4" without the "variant=" key, cut at the end to n
// columns so the variant is always visible.
func shortCase(name string, n int) string {
	s := strings.ReplaceAll(strings.TrimPrefix(name, "variant="), "/", " ")
	r := []rune(s)
	if n < 2 {
		return ""
	}
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func (p *progress) Warn(msg string) {
	p.endLine()
	fmt.Fprintf(p.io.Err, "perflab: warning: %s\n", report.SafeText(msg))
}

func (p *progress) endLine() {
	if p.inline && p.phase != "" {
		fmt.Fprint(p.io.Err, "\r\033[K")
	}
}
