package report

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// warningList groups the same warning across cases, so a noisy machine
// gives one line, not one per case. The first figure in a message (the 37
// of ±37%, a sample count) may differ within a group and is shown as its
// range over the group: the runner phrases its warnings with the varying
// figure first for this reason.
type warningList struct {
	order  []string
	groups map[string]*warningGroup
}

type warningGroup struct {
	cases    []string
	lo, hi   float64
	hasRange bool
	signed   bool // the figure was written with its sign
}

// numRE is a figure with its sign, so that "-44%" and "+12%" group apart
// from each other's magnitudes only by value.
var numRE = regexp.MustCompile(`[-+]?\d+(\.\d+)?`)

func (l *warningList) add(caseName, msg string) {
	msg = firstLine(msg)
	key := msg
	if loc := numRE.FindStringIndex(msg); loc != nil {
		key = msg[:loc[0]] + "{}" + msg[loc[1]:]
	}
	if l.groups == nil {
		l.groups = map[string]*warningGroup{}
	}
	g, ok := l.groups[key]
	if !ok {
		g = &warningGroup{lo: math.Inf(1), hi: math.Inf(-1)}
		l.groups[key] = g
		l.order = append(l.order, key)
	}
	g.cases = append(g.cases, caseName)
	if m := numRE.FindString(msg); m != "" {
		v, _ := strconv.ParseFloat(m, 64)
		g.signed = g.signed || m[0] == '-' || m[0] == '+'
		g.lo, g.hi, g.hasRange = math.Min(g.lo, v), math.Max(g.hi, v), true
	}
}

func (l *warningList) list() []Warning {
	var out []Warning
	for _, key := range l.order {
		g := l.groups[key]
		msg := key
		if g.hasRange {
			num := func(v float64) string {
				if g.signed && v >= 0 {
					return "+" + strconv.FormatFloat(v, 'f', -1, 64)
				}
				return strconv.FormatFloat(v, 'f', -1, 64)
			}
			r := num(g.lo)
			if g.hi != g.lo {
				// "-45 to -44" with signs: "-45–-44", or "-44–45" for a
				// range of negatives, would misread.
				sep := "–"
				if g.signed {
					sep = " to "
				}
				r += sep + num(g.hi)
			}
			msg = strings.Replace(msg, "{}", r, 1)
		}
		out = append(out, Warning{Message: msg, Cases: g.cases})
	}
	return out
}

// maxNamed is how many cases a warning names before "and N more": enough
// for a user to tell which rows of the table it is about (three left a
// make run's budget rows unmarked: "and 4 more"), short of a page.
const maxNamed = 12

// String is the warning as one line: "case: message", or for several
// cases "in each of 5 cases: message (a, b, c, d, e)". The runner
// words each message for one case ("its workers"): "in each of" keeps it
// singular where "5 cases: … its workers" read wrong.
func (w Warning) String() string {
	if len(w.Cases) == 1 {
		return w.Cases[0] + ": " + w.Message
	}
	names := w.Cases
	more := ""
	if len(names) > maxNamed {
		names, more = names[:maxNamed], ", and "+strconv.Itoa(len(w.Cases)-maxNamed)+" more"
	}
	return "in each of " + Count(len(w.Cases), "case") + ": " + w.Message + " (" + strings.Join(names, ", ") + more + ")"
}
