// Package perflab is the public API for writing perflab scenarios.
//
// A scenario is a question about performance ("is a digest cache behind a lock
// worth it?") answered by measuring several implementation variants across a
// parameter matrix and a set of goroutine counts. Scenarios are compile-time
// plugins: a package registers its scenario in init, like a database/sql
// driver, and the perflab binary (or a user's own main) blank-imports it.
//
// The shape follows testing.B and JMH:
//
//   - Variant.New builds the shared state of one case (JMH's Scope.Benchmark)
//     outside every timed region.
//   - Case.NewWorker builds the state of one worker goroutine (JMH's
//     Scope.Thread), also outside the timed region. A case with threads=4 gets
//     exactly four workers, whatever GOMAXPROCS is.
//   - Worker.Run(n) is the hot loop: it performs n operations. The loop is the
//     scenario's own, exactly as with b.N, so the harness adds one call per
//     repetition, not per operation.
//
// Optional capabilities are small interfaces found by type assertion:
// a Worker may implement Counter to report scenario metrics (cache hits), a
// Case may implement Byteser to report throughput in MB/s and io.Closer to
// release resources.
//
// The same variants run under plain `go test -bench` through
// [github.com/perflab/perflab/perflabtest.BenchmarkScenario], under the
// case names `perflab run` gives them. `perflab new NAME` writes a module
// with a scenario, its test and benchmark, and a main that runs it.
package perflab

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Scenario describes one performance question: its parameters, its variants
// and which stack frames count as the useful work it measures.
type Scenario struct {
	// Name is the scenario's name on the command line, e.g. "cipher-cache".
	// It must be lower case letters, digits and dashes.
	Name string
	// Doc is a one-line summary shown by `perflab list`.
	Doc string
	// Long explains the original question in two or three sentences.
	Long string
	// Params are the dimensions of the matrix other than variant and threads,
	// in the order they appear in case names.
	Params []Param
	// Threads are the default goroutine counts; nil means {1}.
	Threads []int
	// Variants are the implementations being compared.
	Variants []Variant
	// Benchmark is the name of the scenario's `go test` benchmark function
	// that runs BenchmarkScenario, e.g. "BenchmarkUUIDHash"; results.txt
	// uses it so benchstat matches perflab's results with `go test -bench`
	// output. Empty means derived from Name ("cipher-cache" gives
	// "BenchmarkCipherCache").
	Benchmark string
	// OpsPerMicrosecond also reports throughput in ops/µs, the unit of
	// JMH's throughput mode, for scenarios whose original figures were
	// given in it.
	OpsPerMicrosecond bool
	// Work lists regular expressions (RE2, matched against full function
	// names such as "crypto/internal/fips140/sha256.blockSHANI") of the
	// frames that are this scenario's useful work. The classifier puts a
	// sample whose leaf-most classified frame matches one of them in the
	// "work" category.
	Work []string
}

// ParamKind says how a parameter's values are validated.
type ParamKind int

const (
	// StringParam parameters accept any value, or one of Param.Values if
	// set.
	StringParam ParamKind = iota
	// IntParam parameters accept decimal integers, optionally with a binary
	// size suffix: 16k and 16KiB mean 16384, 1M and 1MiB mean 1048576.
	IntParam
)

// String and Int are the first names of StringParam and IntParam.
//
// Deprecated: they read like the Params.String and Params.Int methods
// beside them; use StringParam and IntParam.
const (
	String = StringParam
	Int    = IntParam
)

// Param is one dimension of a scenario's matrix.
type Param struct {
	// Name is the parameter's name in -p name=value and in case names.
	Name string
	// Doc says what the parameter means, for perflab list.
	Doc  string
	Kind ParamKind
	// Default values, used when the user does not choose.
	Default []string
	// Values, if non-empty, are the only accepted values.
	Values []string
	// Min and Max bound an IntParam's values, inclusive, when Max is
	// positive (0 <= Min <= Max; Register refuses other bounds): a value
	// outside is refused when the matrix is read, before any case is set
	// up (keys=1G would otherwise end the process out of memory in New).
	Min, Max int
}

var valueRE = regexp.MustCompile(`^[A-Za-z0-9._:+-]+$`)

// Validate reports whether v is an acceptable value of p. Values are
// limited to letters, digits and ._:+- whatever the kind, because they
// become part of case names, benchfmt names and directory names.
func (p Param) Validate(v string) error {
	if !valueRE.MatchString(v) {
		return fmt.Errorf("parameter %s: value %q may only use letters, digits and ._:+-", p.Name, v)
	}
	if len(p.Values) > 0 {
		for _, a := range p.Values {
			if a == v {
				return nil
			}
		}
		return fmt.Errorf("parameter %s: unknown value %q%s (one of %s)", p.Name, v, orSuggest(v, p.Values), strings.Join(p.Values, ", "))
	}
	if p.Kind == IntParam {
		n, err := ParseInt(v)
		if err != nil {
			return fmt.Errorf("parameter %s: %v", p.Name, err)
		}
		if p.Max > 0 && (n < p.Min || n > p.Max) {
			return fmt.Errorf("parameter %s: %s is out of range (%s)", p.Name, v, p.Range())
		}
	}
	return nil
}

// Range says an IntParam's bounds as -p takes them, "1 to 1M"; "" when
// it has none.
func (p Param) Range() string {
	if p.Kind != IntParam || p.Max <= 0 {
		return ""
	}
	return FormatInt(p.Min) + " to " + FormatInt(p.Max)
}

// Variant is one implementation under test.
type Variant struct {
	// Name is the variant's name in --variant and in case names.
	Name string
	// Doc says what the variant does, for perflab list.
	Doc string
	// New builds the shared state of one case. It runs outside the timed
	// region; an error marks the case as failed and the run goes on with the
	// other cases. A variant that does not apply to a point of the matrix
	// returns an error wrapping ErrNotApplicable.
	New func(p Params) (Case, error)
}

// ErrNotApplicable is wrapped by a Variant.New error that says the variant
// does not exist at these parameters (crypto/tls has no lookup by name),
// as opposed to failing: results can show such a case as "n/a" rather than
// as a failure, and the testing.B adapter skips it.
var ErrNotApplicable = errors.New("not applicable")

// Case is the shared state of one case: a variant at one point of the
// parameter matrix.
type Case interface {
	// NewWorker returns the state of worker goroutine id (0 ≤ id < threads).
	// It is called outside the timed region, once for each id in order,
	// all before any worker runs: a case whose workers depend on how many
	// there are (a barrier, a token ring) knows the count by the first Run.
	NewWorker(id int) Worker
}

// Worker is the per-goroutine state of a case.
type Worker interface {
	// Run performs n operations. It is the timed region.
	Run(n int)
}

// Counter is implemented by a Worker that counts scenario events. Counts
// are cumulative; the harness takes the difference across each repetition,
// sums it over workers and reports it per operation in unit name+"/op"
// (for example hits/op, which for a cache lookup is the hit ratio). The
// profiling window's counts per operation are stored too (run.json's
// window.counts), so a scenario that times itself can hold the budget,
// which comes from that window, against its own figures.
type Counter interface {
	Counts() map[string]int64
}

// Byteser is implemented by a Case whose operations process a known number
// of bytes; the harness then reports throughput in MB/s, like
// testing.B.SetBytes.
type Byteser interface {
	Bytes() int64
}

// CaseFunc adapts a function to the Case interface.
type CaseFunc func(id int) Worker

// NewWorker calls f(id).
func (f CaseFunc) NewWorker(id int) Worker { return f(id) }

// WorkerFunc adapts a function to the Worker interface.
type WorkerFunc func(n int)

// Run calls f(n).
func (f WorkerFunc) Run(n int) { f(n) }

// Params holds the value of every parameter for one case.
type Params map[string]string

// String returns the value of parameter name. It panics if the scenario has
// no such parameter, which is a programming error in the scenario.
func (p Params) String(name string) string {
	v, ok := p[name]
	if !ok {
		names := make([]string, 0, len(p))
		for n := range p {
			names = append(names, n)
		}
		sort.Strings(names)
		panic(fmt.Sprintf("perflab: no parameter %q among %s", name, strings.Join(names, ", ")))
	}
	return v
}

// Int returns the value of an Int parameter. Values were validated before
// the case was built, so a parse failure is a programming error and panics.
func (p Params) Int(name string) int {
	n, err := ParseInt(p.String(name))
	if err != nil {
		panic(fmt.Sprintf("perflab: parameter %q: %v", name, err))
	}
	return n
}

var sizeRE = regexp.MustCompile(`^(\d+)\s*([kKmMgG]?)(i?[bB])?$`)

// ParseInt parses a decimal integer with an optional binary size suffix
// (k, KiB, M, MiB, G, GiB; all powers of 1024).
func ParseInt(s string) (int, error) {
	m := sizeRE.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q is not an integer or size (e.g. 128, 16k, 1MiB)", s)
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, fmt.Errorf("%q: %v", s, err)
	}
	shift := map[string]uint{"": 0, "k": 10, "K": 10, "m": 20, "M": 20, "g": 30, "G": 30}[m[2]]
	if shift > 0 && n > (1<<(62-shift)) {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n << shift, nil
}

// FormatInt writes n ≥ 0 as ParseInt reads it, with the largest binary
// suffix that divides it: 1024 is "1k", 1<<20 "1M", 1000 "1000". (ParseInt
// reads no negative number, which FormatInt writes plainly.)
func FormatInt(n int) string {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"G", 30}, {"M", 20}, {"k", 10}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.Itoa(n>>u.shift) + u.suffix
		}
	}
	return strconv.Itoa(n)
}
