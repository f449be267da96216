package report

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/model"
)

// Severity ranks a warning: what a reader sees by default.
type Severity int

const (
	// Info is a note a curious reader may want (--verbose, or the web's
	// toggle): nothing in the table is wrong because of it.
	Info Severity = iota
	// Caution says a figure or a budget is less sure than it looks.
	Caution
	// Severe says something was not measured or cannot be trusted at all.
	Severe
)

func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Severe:
		return "severe"
	}
	return "caution"
}

// MarshalText writes the severity's name in JSON.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Affects says which row of a case a warning is about.
type Affects string

const (
	// AffectsTime: the timing row (time/op and its interval).
	AffectsTime Affects = "time"
	// AffectsBudget: the budget row (the profiling window's shares).
	AffectsBudget Affects = "budget"
	// AffectsRun: the whole run (the machine).
	AffectsRun Affects = "run"
)

// Run-level warning kinds: the report's own, from the run's rounds.
const (
	KindSteal      model.WarningKind = "machine-steal"
	KindContention model.WarningKind = "contention"
	// The kinds of a comparison's warnings (Comparison.Warnings): a
	// setting or the machine differs between the sides, the commit
	// does, the machines were busy differently, a side's run is
	// incomplete, a case failed or was n/a and is not compared, or too
	// few repetitions for a verdict.
	KindEnvDiffers  model.WarningKind = "env-differs"
	KindCommit      model.WarningKind = "commit-differs"
	KindLoadDiffers model.WarningKind = "load-differs"
	KindIncomplete  model.WarningKind = "run-incomplete"
	KindNotCompared model.WarningKind = "not-compared"
	KindCompareReps model.WarningKind = "too-few-reps"
)

// kindInfo is what the report knows of a kind of warning: how severe it
// is, which row it is about, whether it is routine (a condition of the
// machine more than of the case: shown once when most cases share it), and
// its line for a group of cases, with the figures' range for %s.
type kindInfo struct {
	severity Severity
	affects  Affects
	routine  bool
	// group words the warning for several cases, the run's line; "%s"
	// is the figures' range, written by figure. short words it for one
	// case's line under its block. Empty: the case's own sentence.
	group, short string
	figure       func(lo, hi float64) string
}

func pct(lo, hi float64) string { return rangeOf(lo, hi, false) + "%" }
func signedPcts(lo, hi float64) string {
	return rangeOf(lo, hi, true) + "%"
}
func plain(lo, hi float64) string { return rangeOf(lo, hi, false) }
func times(lo, hi float64) string { return rangeOf(lo, hi, false) + "×" }

var kinds = map[model.WarningKind]kindInfo{
	// The runner's one sentence (runner.TooFewForInterval), for one case
	// and for a group: one message about too few repetitions (issue 25).
	model.WarnFewReps: {Caution, AffectsTime, true, "", "", nil},
	model.WarnWideCI: {Caution, AffectsTime, true,
		"time/op's 95%% interval is wide (±%s): the machine is noisy or the case unstable; use more --count, a quieter machine, or compare cpu/op",
		"time/op's interval ±%s is wide: a noisy machine or an unstable case", pct},
	model.WarnTwoSpeeds: {Caution, AffectsTime, true,
		"time/op ran at two speeds, %s apart (a lock or scheduler state that flips between repetitions): its median and a comparison mix them; see the repetitions in results.txt",
		"time/op ran at two speeds, %s apart: the median mixes them (results.txt)", times},
	model.WarnUntil: {Caution, AffectsTime, false,
		"time/op's interval stayed at ±%s: --until was not reached within --until-max",
		"--until not reached within --until-max (±%s)", pct},
	model.WarnInterrupted: {Severe, AffectsTime, false,
		"interrupted during setup (calibration or warmup): not measured",
		"interrupted during setup: not measured", nil},
	model.WarnAbandoned: {Info, AffectsTime, false,
		"a repetition was abandoned when the run was interrupted: not counted",
		"a repetition abandoned at the interrupt: not counted", nil},
	model.WarnProfiling: {Severe, AffectsBudget, false, "", "", nil},
	model.WarnWindowDrift: {Caution, AffectsBudget, true,
		"the profiling window's time/op was %s off the timed median: the budget's shares come from that window, which behaved differently",
		"budget from a profiling window %s off the timed time/op", signedPcts},
	model.WarnWindowGC: {Caution, AffectsBudget, false,
		"the profiling window ran %s the timed repetitions' GC cycles per op: GC pacing differed, so the budget's gc and alloc shares are off",
		"gc and alloc shares off: the window ran %s the timed GC cycles/op", times},
	model.WarnOccupancy: {Info, AffectsBudget, false,
		"workers were busy %s of the profiling window (they finished unevenly); the budget splits their busy time",
		"workers busy %s of the profiling window (uneven finishing)", pct},
	model.WarnStarved: {Caution, AffectsTime, true,
		"got %s CPUs, fewer than its workers wanted: another process took the cores, so time/op and sched are inflated; compare cpu/op, or use a quieter machine",
		"got %s CPUs, fewer than it wanted: another process; compare cpu/op", plain},
	model.WarnWindowContended: {Caution, AffectsBudget, true,
		"the workers' threads waited for a CPU in the profiling window, not in the timed rounds, for another process or (where the kernel's records cannot say whose) their own process's threads: the budget's sched has that wait; rerun on a quieter machine",
		"threads waited for CPUs in the profiling window: sched inflated", nil},
	model.WarnWindowSteal: {Caution, AffectsBudget, true,
		"the hypervisor gave %s of the CPUs' time in the profiling window to other guests: the budget counts what the workers lost as running",
		"the hypervisor stole %s of the CPUs in the profiling window", pct},
	model.WarnFewSamples: {Info, AffectsBudget, false,
		"the split of running time (work, alloc, other…) rests on %s CPU samples (want 50 or more): use a longer --profile-time; blocked time is exact",
		"running time split by only %s CPU samples (--profile-time)", plain},
	model.WarnUntimed: {Caution, AffectsBudget, false,
		"%s of the benchmark goroutine's profiled time was outside its timed loop (setup, or StopTimer/StartTimer): the budget describes the whole function",
		"%s of the profiled time was outside the timed loop: in the budget", pct},
	KindSteal:      {Caution, AffectsRun, true, "", "", nil},
	KindContention: {Caution, AffectsRun, true, "", "", nil},
}

func infoOf(kind model.WarningKind) kindInfo {
	if k, ok := kinds[kind]; ok {
		return k
	}
	return kindInfo{severity: Caution, affects: AffectsTime}
}

// Warning is one warning of a report: a kind, how severe, what it is
// about, and the cases that have it. Message is its one line: the case's
// own sentence for one case, the kind's wording with the figures' range
// for several.
type Warning struct {
	Kind     model.WarningKind `json:"kind"`
	Severity Severity          `json:"severity"`
	Affects  Affects           `json:"affects"`
	Message  string            `json:"message"`
	// Detail is the case's own sentence, with all its figures, when
	// Message is the kind's shorter wording.
	Detail string `json:"detail,omitempty"`
	// Cases are the names of the cases that have it (none for a run's).
	Cases []string `json:"cases,omitempty"`
	// Of is how many measured cases the run has, for "in 9 of 24 cases".
	Of int `json:"of,omitempty"`
	// Lo and Hi are the range of the warning's figure over its cases.
	Lo float64 `json:"lo,omitempty"`
	Hi float64 `json:"hi,omitempty"`
	// Marked, on a run's warning about some of its cases, says their rows
	// carry a mark; Grouped, on a row's, says the run's warnings word it,
	// so the row has the mark and no line of its own.
	Marked  bool `json:"marked,omitempty"`
	Grouped bool `json:"grouped,omitempty"`
}

// ShownByDefault says whether every output shows the warning without
// being asked (--verbose, the web's notes toggle): caution and severe do,
// notes do not.
func (w Warning) ShownByDefault() bool { return w.Severity >= Caution }

// maxNamed is how many cases a warning names before "and N more": enough
// for a user to tell which rows of the table it is about (three left a
// make run's budget rows unmarked: "and 4 more"), short of a page.
const maxNamed = 12

// String is the warning as one line: "message" for a run's, "case:
// message" for one case's, "in 9 of 24 cases: message (a, b, …)" for
// several.
func (w Warning) String() string {
	switch {
	case len(w.Cases) == 0:
		return w.Message
	case len(w.Cases) == 1:
		return w.Cases[0] + ": " + w.Message
	}
	if w.Marked {
		return "in " + strconv.Itoa(len(w.Cases)) + " of " + Count(w.Of, "case") + " (marked !): " + w.Message
	}
	names := w.Cases
	more := ""
	if len(names) > maxNamed {
		names, more = names[:maxNamed], ", and "+strconv.Itoa(len(w.Cases)-maxNamed)+" more"
	}
	of := "each of " + Count(len(w.Cases), "case")
	if w.Of > len(w.Cases) {
		of = strconv.Itoa(len(w.Cases)) + " of " + Count(w.Of, "case")
	} else if w.Of == len(w.Cases) {
		// Every case: naming them all says nothing more.
		return "in all " + Count(w.Of, "case") + ": " + w.Message
	}
	return "in " + of + ": " + w.Message + " (" + strings.Join(names, ", ") + more + ")"
}

// caseWarning is a warning of one case, placed: the group and row it
// belongs to.
type caseWarning struct {
	group, row int
	name       string
	w          model.Warning
}

// groupWarnings decides where each case warning is shown. A routine kind
// that at least half of the measured cases share (a noisy machine) is one
// run-level line; every other warning stays with its case's row. Warnings
// of kind "other" (unrecognised sentences of old runs, or new kinds this
// report does not know) group by their sentence.
func groupWarnings(all []caseWarning, measured int) (run []Warning, perRow map[[2]int][]Warning) {
	type key struct {
		kind model.WarningKind
		msg  string
	}
	byKey := map[key][]caseWarning{}
	var order []key
	for _, cw := range all {
		k := key{kind: cw.w.Kind}
		if _, known := kinds[cw.w.Kind]; !known {
			k.msg = firstLine(cw.w.Message)
		}
		if _, ok := byKey[k]; !ok {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], cw)
	}
	perRow = map[[2]int][]Warning{}
	for _, k := range order {
		cws := byKey[k]
		info := infoOf(k.kind)
		names := uniqueNames(cws)
		if info.routine && len(names) >= 2 && 2*len(names) >= measured {
			w := Warning{Kind: k.kind, Severity: info.severity, Affects: info.affects, Cases: names, Of: measured}
			w.Lo, w.Hi = figureRange(cws)
			w.Message = groupMessage(info, cws, w.Lo, w.Hi)
			// Some cases, not all: mark their rows, as the run's line
			// cannot list them all.
			w.Marked = len(names) < measured
			run = append(run, w)
			if w.Marked {
				for _, cw := range cws {
					pos := [2]int{cw.group, cw.row}
					perRow[pos] = append(perRow[pos], Warning{Kind: k.kind, Severity: info.severity, Affects: info.affects,
						Message: w.Message, Detail: firstLine(cw.w.Message), Cases: []string{cw.name}, Lo: cw.w.Figure, Hi: cw.w.Figure, Grouped: true})
				}
			}
			continue
		}
		for _, cw := range cws {
			w := Warning{Kind: k.kind, Severity: info.severity, Affects: info.affects,
				Cases: []string{cw.name}, Lo: cw.w.Figure, Hi: cw.w.Figure}
			short := info
			short.group = info.short
			w.Message = groupMessage(short, []caseWarning{cw}, cw.w.Figure, cw.w.Figure)
			if full := firstLine(cw.w.Message); full != w.Message {
				w.Detail = full
			}
			pos := [2]int{cw.group, cw.row}
			perRow[pos] = append(perRow[pos], w)
		}
	}
	return run, perRow
}

func uniqueNames(cws []caseWarning) []string {
	var out []string
	seen := map[string]bool{}
	for _, cw := range cws {
		if !seen[cw.name] {
			seen[cw.name] = true
			out = append(out, cw.name)
		}
	}
	return out
}

func figureRange(cws []caseWarning) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, cw := range cws {
		lo, hi = math.Min(lo, cw.w.Figure), math.Max(hi, cw.w.Figure)
	}
	return lo, hi
}

// groupMessage words a group's warning: the kind's wording with the range
// of figures, or the first case's sentence when the kind has none.
func groupMessage(info kindInfo, cws []caseWarning, lo, hi float64) string {
	if info.group == "" {
		return firstLine(cws[0].w.Message)
	}
	if info.figure != nil && lo == 0 && hi == 0 {
		// A run stored before warnings had figures, for a kind whose
		// sentence's first number is not its figure: the sentence.
		return firstLine(cws[0].w.Message)
	}
	if info.figure == nil || strings.Count(info.group, "%s") == 0 {
		return strings.ReplaceAll(info.group, "%%", "%")
	}
	return strings.ReplaceAll(strings.Replace(info.group, "%s", info.figure(lo, hi), 1), "%%", "%")
}

// rangeOf writes a range of figures: "12", "12–37", or with signs "-45 to
// +12" (a dash between signed figures would misread).
func rangeOf(lo, hi float64, signed bool) string {
	num := func(v float64) string {
		s := strconv.FormatFloat(v, 'f', -1, 64)
		if signed && v >= 0 {
			s = "+" + s
		}
		return s
	}
	if lo == hi {
		return num(lo)
	}
	if signed {
		return num(lo) + " to " + num(hi)
	}
	return num(lo) + "–" + num(hi)
}

// sortWarnings puts the severe first, keeping the order within a severity.
func sortWarnings(ws []Warning) {
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].Severity > ws[j].Severity })
}
