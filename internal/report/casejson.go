package report

import (
	"encoding/json"
	"io"
	"math"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/units"
)

// jsonCase is one case as `perflab show RUN/CASE --json` prints it: what
// WriteCaseText and the web's case page say, in the words of a row of the
// run's JSON (stats keyed by unit, budget shares), with the run it is in.
type jsonCase struct {
	Run         string              `json:"run"`
	Scenario    string              `json:"scenario"`
	RunComplete bool                `json:"run_complete"`
	Case        string              `json:"case"`
	Variant     string              `json:"variant"`
	Params      map[string]string   `json:"params,omitempty"`
	Threads     int                 `json:"threads,omitempty"`
	Status      string              `json:"status"`
	Error       string              `json:"error,omitempty"`
	Stats       map[string]jsonStat `json:"stats,omitempty"`
	// Budget is each category's share of the median time/op (0–1),
	// BudgetNS its time per op.
	Budget   map[string]float64 `json:"budget,omitempty"`
	BudgetNS map[string]float64 `json:"budget_ns_per_op,omitempty"`
	// BudgetErr is the half-width of a 95% interval on a share from the
	// CPU samples, for the categories with running time (0–1).
	BudgetErr map[string]float64 `json:"budget_err,omitempty"`
	Untrusted bool               `json:"budget_untrusted,omitempty"`
	Trust     string             `json:"budget_trust,omitempty"`
	SchedBy   string             `json:"sched_by,omitempty"`
	Warnings  []Warning          `json:"warnings"`
	Profiles  map[string]string  `json:"profiles,omitempty"`
	// Units are the stats' units in the order the case page lists them,
	// with their labels.
	Units []jsonUnitRef `json:"units"`
}

// WriteCaseJSON renders one case of run as JSON: every metric it measured
// with its interval, its budget, its warnings and its profiles' files.
// run.json in the store has its repetitions.
func WriteCaseJSON(w io.Writer, run *model.Run, rc *Case) error {
	c := rc.Case
	out := jsonCase{Run: run.ID, Scenario: run.Scenario, RunComplete: run.Complete,
		Case: c.Name, Variant: c.Variant, Params: c.Params, Threads: c.Threads, Status: string(c.Status), Error: c.Error,
		Warnings: caseWarnings(c.Name, rc.Warnings), Profiles: c.Profiles, Units: []jsonUnitRef{}}
	for _, m := range rc.Metrics {
		st, ok := c.Stats[m.Unit]
		if !ok || st.N == 0 {
			continue
		}
		if out.Stats == nil {
			out.Stats = map[string]jsonStat{}
		}
		out.Stats[m.Unit] = jsonStat{Median: jsonSafe(st.Median), Lo: finite(st.MedianLo), Hi: finite(st.MedianHi), N: st.N, Text: units.Format(st.Median, m.Unit)}
		out.Units = append(out.Units, jsonUnitRef{Unit: m.Unit, Label: m.Label})
	}
	if len(rc.Budget) > 0 {
		out.Budget, out.BudgetNS = map[string]float64{}, map[string]float64{}
		for _, p := range rc.Budget {
			out.Budget[p.Category] = math.Round(1e4*jsonSafe(p.Share)) / 1e4
			out.BudgetNS[p.Category] = jsonSafe(p.NS)
			if p.Err > 0 {
				if out.BudgetErr == nil {
					out.BudgetErr = map[string]float64{}
				}
				out.BudgetErr[p.Category] = math.Round(1e4*jsonSafe(p.Err)) / 1e4
			}
		}
		out.Untrusted, out.Trust, out.SchedBy = rc.Untrusted, rc.Trust, rc.SchedBy
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// caseWarnings are case name's warnings ws as the run's report gives a
// row's: each with its kind, severity, the row it affects, the kind's
// wording and the case's own sentence.
func caseWarnings(name string, ws []model.Warning) []Warning {
	var all []caseWarning
	for _, w := range ws {
		all = append(all, caseWarning{name: name, w: w})
	}
	// One measured case: nothing is grouped into a run's line.
	_, perRow := groupWarnings(all, 1)
	if ws := perRow[[2]int{}]; ws != nil {
		return ws
	}
	return []Warning{}
}
