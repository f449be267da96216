package cli

import (
	"io"
	"strings"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/report"
)

// writeTable prints a run's results as internal/report renders them: one
// block per parameter combination (and goroutine count), fitting 80
// columns unless wide; verbose shows every warning and note in full.
func writeTable(w io.Writer, run *model.Run, wide, verbose bool) {
	report.WriteText(w, report.Build(run), report.TextOptions{Wide: wide, Verbose: verbose})
}

// writeJSON prints a run's report as JSON: what the table says, as data.
// The stored run, every repetition included, is run.json in the store.
func writeJSON(w io.Writer, run *model.Run) error {
	return report.WriteJSON(w, report.Build(run))
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
