// Package suitelookup is the suite-lookup scenario: how should a fixed table
// of TLS cipher suites be searched by name or by id?
//
// A TLS library found suites by scanning the enum's values(), which copies
// the whole array on every call. In the original (Java, JMH) copy-then-scan
// cost ~125 ns wherever the suite was; scanning a static array cost 10–56 ns
// from the 1st to the ~30th entry; a hash map cost 11–13 ns flat.
//
// The variants are the original three (copy-scan, static-scan, map), a Go
// switch statement (which the compiler turns into a binary search or jump
// table), and the standard library's own lookup, crypto/tls.CipherSuiteName,
// which only goes from id to name. The table is the 25 suites crypto/tls
// implements followed by 35 more from the IANA registry (see table.go).
//
// Lookup inputs defeat pointer-equality shortcuts: every name looked up is a
// fresh copy (strings.Clone) of the table's string, so a comparison cannot
// succeed on "same pointer" and must compare bytes, as it would for a name
// parsed from a config file or the wire.
package suitelookup

import (
	"crypto/tls"
	"fmt"
	"strings"

	"github.com/perflab/perflab"
)

func init() {
	perflab.Register(Scenario)
}

// Scenario is the suite-lookup scenario, registered as "suite-lookup".
var Scenario = &perflab.Scenario{
	Name: "suite-lookup",
	Doc:  "find a TLS cipher suite by name or id: copy+scan, scan, map, switch, crypto/tls",
	Long: "A TLS library looked suites up by scanning values(), which copies the enum array on " +
		"every call. In Java copy-then-scan cost ~125 ns at any position, a static scan 10–56 ns " +
		"(1st … 30th entry), a hash map 11–13 ns flat. Which wins in Go, and what does " +
		"crypto/tls.CipherSuiteName cost?",
	Params: []perflab.Param{
		{Name: "by", Doc: "look up by IANA name (string compare) or by two-byte id", Default: []string{"name", "id"}, Values: []string{"name", "id"}},
		{Name: "position", Doc: "where the wanted suite sits in the 60-entry table", Default: []string{"first", "10th", "20th", "30th", "last"}, Values: []string{"first", "10th", "20th", "30th", "last"}},
	},
	Threads: []int{1},
	// The search itself: the scan loops, the generated switches, the map
	// probe and the string comparison and hashing under them. Copying the
	// table (values, then memmove) and crypto/tls building its suite lists
	// (CipherSuites, mallocgc) are deliberately not work: they are the
	// overhead the original review was about. Work patterns are consulted
	// before the built-in rules, so the map pattern leaves out map growth.
	Work: []string{
		`^github\.com/perflab/perflab/scenarios/suitelookup\.(scanName|scanID|switchByName|switchByID)$`,
		`^crypto/tls\.CipherSuiteName$`,
		`^runtime\.(memequal|cmpstring|mapaccess)`,
		`^(runtime\.)?memeqbody$`,
		`^internal/runtime/maps\.(runtime_mapaccess|\(\*Map\)\.get|\(\*table\)\.get|ctrlGroup\.|\(\*groupsReference\)\.|bitset\.|h1$|h2$)`,
		`^aeshashbody$`,
		`^runtime\.(memhash|strhash|aeshash)`,
	},
	Variants: []perflab.Variant{
		{Name: "copy-scan", Doc: "copy the table (like Java's values()) on every call, then scan the copy", New: newCase(copyScan)},
		{Name: "static-scan", Doc: "scan the package-level table in place", New: newCase(staticScan)},
		{Name: "map", Doc: "map[string]Suite / map[uint16]Suite built once", New: newCase(mapLookup)},
		{Name: "switch", Doc: "generated switch statement over all 60 names / ids", New: newCase(switchLookup)},
		{Name: "stdlib", Doc: "crypto/tls.CipherSuiteName(id); by=id only, suites crypto/tls knows only", New: newCase(stdlib)},
	},
}

// variant selects the loop a worker runs. Each variant has its own loop so
// the timed region calls the lookup directly: an indirect call would add a
// nanosecond or two to lookups that take only a few.
type variant int

const (
	copyScan variant = iota
	staticScan
	mapLookup
	switchLookup
	stdlib
)

// positions maps the position parameter to an index into table.
var positions = map[string]int{"first": 0, "10th": 9, "20th": 19, "30th": 29, "last": len(table) - 1}

// ringSize is the number of inputs each worker cycles through: that many
// separate copies of the wanted name (or id), so no two consecutive lookups
// see the same string pointer.
const ringSize = 64

type lookupCase struct {
	v      variant
	byName bool
	want   Suite
}

func newCase(v variant) func(perflab.Params) (perflab.Case, error) {
	return func(p perflab.Params) (perflab.Case, error) {
		pos, ok := positions[p.String("position")]
		if !ok {
			return nil, fmt.Errorf("unknown position %q", p.String("position"))
		}
		c := &lookupCase{v: v, byName: p.String("by") == "name", want: table[pos]}
		if v == stdlib {
			if c.byName {
				return nil, fmt.Errorf("%w: crypto/tls has no lookup by name", perflab.ErrNotApplicable)
			}
			if pos >= knownToTLS {
				// CipherSuiteName would return fmt.Sprintf("0x%04X", id).
				return nil, fmt.Errorf("%w: crypto/tls does not know suite %#04x", perflab.ErrNotApplicable, c.want.ID)
			}
		}
		return c, nil
	}
}

func (c *lookupCase) NewWorker(id int) perflab.Worker {
	if c.byName {
		w := &nameWorker{v: c.v, in: make([]string, ringSize)}
		for i := range w.in {
			w.in[i] = strings.Clone(c.want.Name)
		}
		return w
	}
	w := &idWorker{v: c.v, in: make([]uint16, ringSize)}
	for i := range w.in {
		// Loaded from memory in the loop, so the compiler cannot fold
		// the lookup of a constant.
		w.in[i] = c.want.ID
	}
	return w
}

// nameWorker looks names up and keeps the XOR of the ids found.
type nameWorker struct {
	v    variant
	in   []string
	pos  int
	sink uint16
}

func (w *nameWorker) Run(n int) {
	in, pos := w.in, w.pos
	var sink uint16
	switch w.v {
	case copyScan:
		for i := 0; i < n; i++ {
			s, _ := copyScanByName(in[pos&(ringSize-1)])
			sink ^= s.ID
			pos++
		}
	case staticScan:
		for i := 0; i < n; i++ {
			s, _ := scanByName(in[pos&(ringSize-1)])
			sink ^= s.ID
			pos++
		}
	case mapLookup:
		for i := 0; i < n; i++ {
			s := mapByName[in[pos&(ringSize-1)]]
			sink ^= s.ID
			pos++
		}
	case switchLookup:
		for i := 0; i < n; i++ {
			if j := switchByName(in[pos&(ringSize-1)]); j >= 0 {
				sink ^= table[j].ID
			}
			pos++
		}
	}
	w.pos, w.sink = pos, w.sink^sink
}

// idWorker looks ids up and keeps the XOR of the names' first bytes.
type idWorker struct {
	v    variant
	in   []uint16
	pos  int
	sink byte
}

func (w *idWorker) Run(n int) {
	in, pos := w.in, w.pos
	var sink byte
	switch w.v {
	case copyScan:
		for i := 0; i < n; i++ {
			s, _ := copyScanByID(in[pos&(ringSize-1)])
			sink ^= s.Name[len(s.Name)-1]
			pos++
		}
	case staticScan:
		for i := 0; i < n; i++ {
			s, _ := scanByID(in[pos&(ringSize-1)])
			sink ^= s.Name[len(s.Name)-1]
			pos++
		}
	case mapLookup:
		for i := 0; i < n; i++ {
			s := mapByID[in[pos&(ringSize-1)]]
			sink ^= s.Name[len(s.Name)-1]
			pos++
		}
	case switchLookup:
		for i := 0; i < n; i++ {
			if j := switchByID(in[pos&(ringSize-1)]); j >= 0 {
				sink ^= table[j].Name[len(table[j].Name)-1]
			}
			pos++
		}
	case stdlib:
		for i := 0; i < n; i++ {
			name := tls.CipherSuiteName(in[pos&(ringSize-1)])
			sink ^= name[len(name)-1]
			pos++
		}
	}
	w.pos, w.sink = pos, w.sink^sink
}

// values returns a copy of the table, like the values() method of a Java
// enum: callers may keep or modify it, so it cannot share the array.
func values() []Suite {
	s := make([]Suite, len(table))
	copy(s, table[:])
	return s
}

// copyScanByName is the original code: scan a fresh copy of the table. The
// copy (values) and the scan (scanName) are separate functions so profiles
// tell them apart; both inline.
func copyScanByName(name string) (Suite, bool) { return scanName(values(), name) }

func copyScanByID(id uint16) (Suite, bool) { return scanID(values(), id) }

// scanByName scans the table in place, with the same loop as copy-scan.
func scanByName(name string) (Suite, bool) { return scanName(table[:], name) }

func scanByID(id uint16) (Suite, bool) { return scanID(table[:], id) }

func scanName(suites []Suite, name string) (Suite, bool) {
	for i := range suites {
		if suites[i].Name == name {
			return suites[i], true
		}
	}
	return Suite{}, false
}

func scanID(suites []Suite, id uint16) (Suite, bool) {
	for i := range suites {
		if suites[i].ID == id {
			return suites[i], true
		}
	}
	return Suite{}, false
}

var (
	mapByName = make(map[string]Suite, len(table))
	mapByID   = make(map[uint16]Suite, len(table))
)

func init() {
	for _, s := range table {
		mapByName[s.Name] = s
		mapByID[s.ID] = s
	}
}
