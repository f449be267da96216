package cli

import (
	"fmt"
	"io"
	"math"
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
