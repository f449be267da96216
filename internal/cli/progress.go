package cli

import (
	"fmt"
	"strings"
	"time"
)

// progress prints run progress to stderr: a redrawn bar on a terminal,
// one line per phase otherwise (logs, CI).
type progress struct {
	io     *IO
	phase  string
	total  int
	done   int
	start  time.Time
	last   time.Time
	width  int
	inline bool
}

func newProgress(io *IO) *progress {
	// Bar and name fit in 80 columns: a redrawn line that wraps can no
	// longer be erased with \r.
	return &progress{io: io, inline: io.ErrIsTerminal, width: 20}
}

func (p *progress) Phase(name string, total int) {
	p.endLine()
	p.phase, p.total, p.done, p.start = name, total, 0, time.Now()
	if !p.inline {
		fmt.Fprintf(p.io.Err, "perflab: %s (%d cases)\n", name, total)
	}
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
	if r := []rune(name); len(r) > 28 {
		name = "…" + string(r[len(r)-27:])
	}
	fmt.Fprintf(p.io.Err, "\r\033[K%-18s [%s%s] %d/%d %s", p.phase,
		strings.Repeat("█", filled), strings.Repeat("·", p.width-filled), p.done, p.total, name)
}

func (p *progress) Warn(msg string) {
	p.endLine()
	fmt.Fprintf(p.io.Err, "perflab: warning: %s\n", msg)
}

func (p *progress) endLine() {
	if p.inline && p.phase != "" {
		fmt.Fprint(p.io.Err, "\r\033[K")
	}
}
