// Package units is perflab's one table of the metrics it knows: each
// unit's run.json name, the label every table prints, its place in the
// order tables and results.txt use, and how a value of it is written.
// Every renderer (the CLI's tables, the web pages, compare, results.txt)
// asks here, so a unit is named, ordered and formatted in one place
// (issue 24 found six lists and two label maps that disagreed: "cpu/op"
// in the CLI, "CPU/op" on the web).
package units

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"golang.org/x/perf/benchunit"
)

// Unit is one metric perflab knows.
type Unit struct {
	// Name is the unit as run.json and results.txt write it: "ns/op".
	Name string
	// Label is what every table prints for it: "time/op".
	Label string
	// Bench says results.txt writes it (benchstat reads it there). ops/s
	// is left out: benchstat derives nothing from it that ns/op does not
	// already say. Older or imported runs' sec/op is benchfmt's own.
	Bench bool
	// Headline says the web's run table shows it; the others are on
	// every case's page (the allocation rate and GC figures, which the
	// budget and B/op speak for, so the run table fits 1280 px).
	Headline bool
	// Standard says every measured case of a perflab run has it; a
	// scenario's own metrics (hits/op…) are not.
	Standard bool
	// HigherBetter says a larger value is better (throughput).
	HigherBetter bool
	// ZeroFloor is how much the metric must rise from nothing (a base
	// median of 0, where a relative threshold says nothing) for the rise
	// to count: a sync.Pool refilled after each repetition's GC allocates
	// 0.001 B/op, which is not a regression against 0. Zero counts any
	// rise.
	ZeroFloor float64
}

// table is in the order tables show units; a scenario's own metrics follow
// it, sorted.
var table = []Unit{
	{Name: "ns/op", Label: "time/op", Bench: true, Headline: true, Standard: true},
	{Name: "sec/op", Label: "time/op", Bench: true, Headline: true},
	{Name: "cpu-ns/op", Label: "cpu/op", Bench: true, Headline: true, Standard: true},
	{Name: "cpu-sec/op", Label: "cpu/op", Headline: true},
	{Name: "ops/s", Label: "ops/s", Headline: true, Standard: true, HigherBetter: true},
	{Name: "MB/s", Label: "MB/s", Bench: true, Headline: true, HigherBetter: true},
	{Name: "B/op", Label: "B/op", Bench: true, Headline: true, Standard: true, ZeroFloor: 1},
	{Name: "allocs/op", Label: "allocs/op", Bench: true, Headline: true, Standard: true, ZeroFloor: 0.01},
	{Name: "alloc-MB/s", Label: "alloc MB/s", Bench: true, Standard: true},
	{Name: "gc/op", Label: "gc/op", Bench: true, Standard: true},
	{Name: "gc-cpu-%", Label: "gc cpu", Bench: true, Standard: true},
}

var byName = func() map[string]int {
	m := make(map[string]int, len(table))
	for i, u := range table {
		m[u.Name] = i
	}
	return m
}()

// Compared is the metrics a comparison covers unless told otherwise
// (perflab compare's --metric, the web's compare pages), by label.
func Compared() []string { return []string{"time/op", "cpu/op", "B/op", "allocs/op"} }

// Lookup returns the known unit name, and whether perflab knows it. A
// scenario's own unit is returned with its name as its label.
func Lookup(name string) (Unit, bool) {
	if i, ok := byName[name]; ok {
		return table[i], true
	}
	return Unit{Name: name, Label: name}, false
}

// HigherBetter says a larger value of unit is better: the table's
// throughputs, and the built-in scenarios' own hits/op (a cache's hit
// rate), which is not in the table because tables order it as a
// scenario's metric.
func HigherBetter(unit string) bool {
	u, _ := Lookup(unit)
	return u.HigherBetter || unit == "hits/op"
}

// ZeroFloor is unit's Unit.ZeroFloor, 0 for a unit the table does not know.
func ZeroFloor(unit string) float64 {
	u, _ := Lookup(unit)
	return u.ZeroFloor
}

// Known is the table, in its order (a copy).
func Known() []Unit { return append([]Unit(nil), table...) }

// Standard is the units every measured case of a perflab run has, in the
// table's order.
func Standard() []string {
	var out []string
	for _, u := range table {
		if u.Standard {
			out = append(out, u.Name)
		}
	}
	return out
}

// Bench is the known units results.txt writes, in order.
func Bench() []string {
	var out []string
	for _, u := range table {
		if u.Bench {
			out = append(out, u.Name)
		}
	}
	return out
}

// Label is what tables print for unit: "time/op" for ns/op, "cpu/op" for
// cpu-ns/op; a unit perflab does not know is its own label.
func Label(unit string) string {
	u, _ := Lookup(unit)
	return u.Label
}

// Parse is the run.json unit of a metric named by its label ("time/op" is
// ns/op) or by its unit; a name it does not know is returned unchanged.
func Parse(name string) string {
	if _, ok := byName[name]; ok {
		return name
	}
	for _, u := range table {
		if u.Label == name {
			return u.Name
		}
	}
	return name
}

// Sort orders unit names as tables show them: the table's order, then
// the rest sorted. It sorts names in place and returns them.
func Sort(names []string) []string {
	rank := func(n string) int {
		if i, ok := byName[n]; ok {
			return i
		}
		return len(table)
	}
	sort.SliceStable(names, func(i, j int) bool {
		ri, rj := rank(names[i]), rank(names[j])
		if ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
	return names
}

// hugeValue is where Format stops scaling: 1e18 ns is 31 years an op.
const hugeValue = 1e18

// Format writes a measurement in its unit, the one way every renderer
// writes numbers: times with SI prefixes as benchstat does (214.7ns,
// 1.23µs), rates with SI prefixes above 1000 (4.03M), counts and bytes per
// operation as plain numbers (0.876 allocs/op, not 876.2m), percentages with
// one decimal. NaN and infinities are "—".
func Format(v float64, unit string) string {
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
