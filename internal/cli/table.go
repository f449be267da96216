package cli

import (
	"io"
	"strings"

	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/store"
)

// writeTable prints a run's results as internal/report renders them: one
// block per parameter combination (and goroutine count), fitting 80
// columns unless wide.
func writeTable(w io.Writer, run *store.Run, wide bool) {
	report.WriteText(w, report.Build(run), report.TextOptions{Wide: wide})
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
