package report

import (
	"fmt"
	"math"
	"strconv"

	"github.com/perflab/perflab/internal/store"
	"golang.org/x/perf/benchunit"
)

// hugeValue is where Value stops scaling: 1e18 ns is 31 years an op.
const hugeValue = 1e18

// Value formats a measurement in its unit, the one way every renderer
// writes numbers: times with SI prefixes as benchstat does (214.7ns,
// 1.23µs), rates with SI prefixes above 1000 (4.03M), counts and bytes per
// operation as plain numbers (0.876 allocs/op, not 876.2m), percentages with
// one decimal. NaN and infinities are "—".
func Value(v float64, unit string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	if math.Abs(v) >= hugeValue {
		// No measurement: a tampered or broken run.json. Three figures
		// and an exponent, not benchunit's 300 digits before "T".
		switch unit {
		case "ns/op", "cpu-ns/op":
			return strconv.FormatFloat(v, 'g', 3, 64) + "ns"
		case "sec/op", "cpu-sec/op":
			return strconv.FormatFloat(v, 'g', 3, 64) + "s"
		}
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	switch unit {
	case "sec/op", "cpu-sec/op":
		if v == 0 {
			return "0"
		}
		return benchunit.Scale(v, benchunit.Decimal) + "s"
	case "ns/op", "cpu-ns/op":
		if math.Abs(v) < 1 {
			// benchunit would write 0.00005000ns; below a nanosecond two
			// decimals say all a timer can.
			if v == 0 {
				return "0"
			}
			if math.Abs(v) < 0.01 {
				return "<0.01ns"
			}
			return strconv.FormatFloat(v, 'f', 2, 64) + "ns"
		}
		return benchunit.Scale(v*1e-9, benchunit.Decimal) + "s"
	case "ops/s", "alloc-MB/s", "MB/s", "ops/µs":
		if math.Abs(v) >= 1000 {
			return benchunit.Scale(v, benchunit.Decimal)
		}
	case "gc-cpu-%":
		return fmt.Sprintf("%.1f%%", v)
	}
	return Number(v)
}

// Number formats a plain number: three significant figures below 1000,
// SI prefixes from 10,000, and never a milli- or micro- prefix. A value too
// small for three decimals is "<0.001", so a tiny non-zero figure never
// reads as a zero beside a real 0.
func Number(v float64) string {
	switch a := math.Abs(v); {
	case v == 0:
		return "0"
	case a >= 1e4:
		return benchunit.Scale(v, benchunit.Decimal)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a < 0.001:
		if v < 0 {
			return ">-0.001"
		}
		return "<0.001"
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// CI formats a median's interval as benchstat prints it: "±3%", or "±∞"
// with too few repetitions for one.
func CI(center, lo, hi float64) string {
	hw := store.Stat{Median: center, MedianLo: lo, MedianHi: hi}.HalfWidth()
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
