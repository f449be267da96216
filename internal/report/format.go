package report

import (
	"fmt"
	"math"
	"strconv"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/units"
)

// Value formats a measurement in its unit: the unit table's one formatter
// (internal/units), so every renderer writes numbers alike.
func Value(v float64, unit string) string { return units.Format(v, unit) }

// Number formats a plain number as units.Number does.
func Number(v float64) string { return units.Number(v) }

// CI formats a median's interval as benchstat prints it: "±3%", or "±∞"
// with too few repetitions for one.
func CI(center, lo, hi float64) string {
	hw := model.Stat{Median: center, MedianLo: lo, MedianHi: hi}.HalfWidth()
	if math.IsInf(hw, 0) {
		return "±∞"
	}
	return fmt.Sprintf("±%.0f%%", 100*hw)
}

// Ratio writes a ratio as "×2.5", "×0.4" or, from ten, "×12".
func Ratio(r float64) string {
	if r >= 10 {
		return fmt.Sprintf("×%.0f", r)
	}
	return fmt.Sprintf("×%.2g", r)
}

// Share writes a fraction as a whole percentage, "71%".
func Share(f float64) string {
	return fmt.Sprintf("%.0f%%", 100*f)
}

// ErrCell formats a share's sampling error in points: "±3", and "±0.4"
// under one point, where a whole number would read as exact; "±<0.1"
// under 0.05, where "±0.0" would (a share every one of thousands of
// samples fell in has an error, only a small one).
func ErrCell(f float64) string {
	switch p := 100 * f; {
	case p <= 0:
		return "±0"
	case p < 0.05:
		return "±<0.1"
	case p < 0.95:
		return fmt.Sprintf("±%.1f", p)
	}
	return fmt.Sprintf("±%.0f", 100*f)
}

// Count writes n and a noun, singular for one and plural otherwise: "1
// case", "12 cases", "0 rows". noun is the singular; every noun perflab
// counts (case, round, repetition, row, CPU, byte, slice) takes an s.
// Every count in CLI and report text goes through it, so no sentence says
// "1 cases".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
