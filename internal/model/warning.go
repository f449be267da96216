package model

import (
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// WarningKind names what a warning is about, so that a report groups,
// ranks and words warnings by kind rather than by parsing the runner's
// sentences (issue 24).
type WarningKind string

// The kinds of case warnings the runner records.
const (
	// WarnFewReps: too few repetitions for a confidence interval
	// (benchmath needs 6 at 95%). Figure: the repetitions.
	WarnFewReps WarningKind = "few-reps"
	// WarnWideCI: time/op's 95% interval is wide. Figure: its half-width
	// in percent.
	WarnWideCI WarningKind = "wide-ci"
	// WarnTwoSpeeds: the repetitions fall into two groups far apart.
	WarnTwoSpeeds WarningKind = "two-speeds"
	// WarnUntil: --until's precision was not reached within --until-max.
	// Figure: the half-width reached, in percent.
	WarnUntil WarningKind = "until"
	// WarnInterrupted: the case was interrupted before it was measured.
	WarnInterrupted WarningKind = "interrupted"
	// WarnAbandoned: an interrupt abandoned a repetition.
	WarnAbandoned WarningKind = "abandoned"
	// WarnProfiling: profiling failed or was interrupted; no budget.
	WarnProfiling WarningKind = "profiling"
	// WarnWindowDrift: the profiling window's time/op strayed from the
	// timed median. Figure: the difference in percent, signed.
	WarnWindowDrift WarningKind = "window-drift"
	// WarnWindowGC: the window's GC cycles per op differed from the timed
	// repetitions'. Figure: the ratio.
	WarnWindowGC WarningKind = "window-gc"
	// WarnOccupancy: workers were busy for only part of the window.
	// Figure: the busy share in percent.
	WarnOccupancy WarningKind = "occupancy"
	// WarnStarved: the case got fewer CPUs than its workers wanted,
	// because another process had them. Figure: the CPUs it got.
	WarnStarved WarningKind = "starved"
	// WarnWindowContended: another process kept the workers from a CPU in
	// the profiling window only, or, where the kernel's records cannot say
	// whose threads had it, the workers waited for one there only.
	WarnWindowContended WarningKind = "window-contended"
	// WarnWindowSteal: the hypervisor stole CPU time in the window.
	// Figure: the stolen share in percent.
	WarnWindowSteal WarningKind = "window-steal"
	// WarnFewSamples: too few CPU samples to split running time. Figure:
	// the samples.
	WarnFewSamples WarningKind = "few-cpu-samples"
	// WarnUntimed: a benchmark's profile holds time outside its timed
	// loop (perflab bench). Figure: that share in percent.
	WarnUntimed WarningKind = "untimed"
	// WarnOther is any other warning, and every warning of a run stored
	// before warnings had kinds whose sentence is not recognised.
	WarnOther WarningKind = "other"
)

// Warning is one measurement warning of a case, as a value: its kind, the
// one figure that may differ between the cases that share it (a report
// shows it as a range over them), and the sentence for this case.
type Warning struct {
	Kind    WarningKind `json:"kind"`
	Figure  float64     `json:"figure,omitempty"`
	Message string      `json:"message"`
}

// Warn makes a warning. A figure JSON cannot hold (an interval of ±Inf
// from too few repetitions) is recorded as none: run.json must save.
func Warn(kind WarningKind, figure float64, message string) Warning {
	if math.IsInf(figure, 0) || math.IsNaN(figure) {
		figure = 0
	}
	return Warning{Kind: kind, Figure: figure, Message: message}
}

func (w Warning) String() string { return w.Message }

// UnmarshalJSON reads a warning, or a run stored before warnings had
// kinds, which wrote each as its sentence: the kind is then recovered from
// the sentence's opening words (legacyKinds), the figure from its first
// number, so old runs group as new ones do.
func (w *Warning) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*w = legacyWarning(s)
		return nil
	}
	type plain Warning
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*w = Warning(p)
	if w.Kind == "" {
		w.Kind = WarnOther
	}
	return nil
}

// legacyKinds are the opening words of the sentences runs stored before
// warnings had kinds, in the runner's wording of the time. This is the one
// place perflab reads a warning's words, and only for those runs.
var legacyKinds = []struct {
	prefix string
	kind   WarningKind
}{
	{"need ", WarnFewReps},
	{"time/op confidence interval", WarnWideCI},
	{"time/op ran at two speeds", WarnTwoSpeeds},
	{"interrupted during setup", WarnInterrupted},
	{"a repetition was abandoned", WarnAbandoned},
	{"profiling", WarnProfiling},
	{"the profiling window's time/op", WarnWindowDrift},
	{"the profiling window ran", WarnWindowGC},
	{"workers were busy", WarnOccupancy},
	{"got ", WarnStarved},
	{"another process on the cores", WarnWindowContended},
	{"the hypervisor gave", WarnWindowSteal},
	{"the split of running time", WarnFewSamples},
}

var untilRE = regexp.MustCompile(`^time/op ±\d+% after \d+ rounds`)

var firstNumber = regexp.MustCompile(`[-+]?\d+(\.\d+)?`)

func legacyWarning(s string) Warning {
	w := Warning{Kind: WarnOther, Message: s}
	for _, k := range legacyKinds {
		if strings.HasPrefix(s, k.prefix) {
			w.Kind = k.kind
			break
		}
	}
	if untilRE.MatchString(s) {
		w.Kind = WarnUntil
	}
	// A two-speeds sentence starts with a repetition count, not its
	// figure (the speeds' ratio): left unknown.
	if m := firstNumber.FindString(s); m != "" && w.Kind != WarnOther && w.Kind != WarnTwoSpeeds {
		w.Figure, _ = strconv.ParseFloat(m, 64)
	}
	return w
}
