package report

import (
	"encoding/json"
	"io"
	"math"

	"github.com/perflab/perflab/internal/units"
	"github.com/perflab/perflab/profiles"
)

// The JSON rendering of a report: what `perflab run --json` and `show
// --json` print. It is the report (groups, rows with their figures and
// budget shares, verdicts, warnings with kinds and severities), not the
// stored run: run.json, next to it in the store, has every repetition.

type jsonRun struct {
	ID        string        `json:"id"`
	Scenario  string        `json:"scenario"`
	Status    string        `json:"status"`
	Complete  bool          `json:"complete"`
	GoVersion string        `json:"go_version"`
	Commit    string        `json:"commit,omitempty"`
	Machine   string        `json:"machine,omitempty"`
	Reps      string        `json:"repetitions"`
	NoBudget  string        `json:"no_budget,omitempty"`
	Groups    []jsonGroup   `json:"groups"`
	Notes     []string      `json:"allocation_notes,omitempty"`
	Warnings  []Warning     `json:"warnings"`
	Units     []jsonUnitRef `json:"units"`
}

// jsonUnitRef names a unit the rows' stats use, with its table label, so a
// reader need not know perflab's unit names.
type jsonUnitRef struct {
	Unit  string `json:"unit"`
	Label string `json:"label"`
}

type jsonGroup struct {
	Title   string            `json:"title"`
	Params  map[string]string `json:"params,omitempty"`
	Threads int               `json:"threads,omitempty"`
	Rows    []jsonRow         `json:"rows"`
	Verdict *jsonVerdict      `json:"verdict,omitempty"`
	Advice  string            `json:"advice,omitempty"`
}

type jsonRow struct {
	Case    string              `json:"case"`
	Variant string              `json:"variant"`
	Status  string              `json:"status"`
	Message string              `json:"message,omitempty"`
	Stats   map[string]jsonStat `json:"stats,omitempty"`
	// Budget is each category's share of time/op (0–1).
	Budget map[string]float64 `json:"budget,omitempty"`
	// BudgetErr is, for the categories with running time, the half-width
	// of a 95% interval on its share from the CPU samples (0–1).
	BudgetErr map[string]float64 `json:"budget_err,omitempty"`
	// Untrusted marks a budget that cannot be trusted, Trust says why;
	// SchedBy says what preempted goroutines were doing.
	Untrusted bool      `json:"budget_untrusted,omitempty"`
	Trust     string    `json:"budget_trust,omitempty"`
	SchedBy   string    `json:"sched_by,omitempty"`
	Warnings  []Warning `json:"warnings,omitempty"`
}

// jsonStat is a metric's median with its 95% interval; an interval that
// could not be computed (too few repetitions) is left out.
type jsonStat struct {
	Median float64  `json:"median"`
	Lo     *float64 `json:"lo,omitempty"`
	Hi     *float64 `json:"hi,omitempty"`
	N      int      `json:"n"`
	Text   string   `json:"text"`
}

type jsonVerdict struct {
	Sentence    string  `json:"sentence"`
	Fastest     string  `json:"fastest"`
	RunnerUp    string  `json:"runner_up"`
	Speedup     float64 `json:"speedup"`
	P           float64 `json:"p_adjusted"`
	Significant bool    `json:"significant"`
	CannotTell  bool    `json:"cannot_tell,omitempty"`
}

func finite(v float64) *float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}

// WriteJSON renders the report as JSON.
func WriteJSON(w io.Writer, rep *Run) error {
	run := rep.Run
	out := jsonRun{ID: run.ID, Scenario: run.Scenario, Status: rep.Status, Complete: run.Complete,
		GoVersion: run.Env.GoVersion, Commit: run.Env.Commit, Machine: rep.Machine, Reps: rep.Reps,
		NoBudget: rep.NoBudget, Notes: rep.Notes, Warnings: rep.Warnings, Groups: []jsonGroup{}}
	if out.Warnings == nil {
		out.Warnings = []Warning{}
	}
	used := map[string]bool{}
	for _, g := range rep.Groups {
		jg := jsonGroup{Title: g.Title(), Threads: g.Threads, Advice: g.Advice, Rows: []jsonRow{}}
		if len(g.Params) > 0 {
			jg.Params = map[string]string{}
			for _, p := range g.Params {
				jg.Params[p.Name] = p.Value
			}
		}
		for _, r := range g.Rows {
			c := r.Case
			jr := jsonRow{Case: c.Name, Variant: c.Variant, Status: string(c.Status), Message: r.Message, Warnings: r.Warnings}
			if r.OK {
				jr.Stats = map[string]jsonStat{}
				for u, st := range c.Stats {
					if st.N == 0 {
						continue
					}
					used[u] = true
					jr.Stats[u] = jsonStat{Median: jsonSafe(st.Median), Lo: finite(st.MedianLo), Hi: finite(st.MedianHi), N: st.N, Text: units.Format(st.Median, u)}
				}
			}
			if r.HasBudget {
				jr.Untrusted, jr.Trust, jr.SchedBy = r.Untrusted, r.Trust, r.SchedBy
				jr.Budget = map[string]float64{}
				for _, cat := range profiles.Categories {
					jr.Budget[string(cat)] = math.Round(1e4*r.Budget[cat.Index()]) / 1e4
				}
				if r.HasErr {
					jr.BudgetErr = map[string]float64{}
					for _, cat := range profiles.Categories {
						if e := r.Err[cat.Index()]; e > 0 {
							jr.BudgetErr[string(cat)] = math.Round(1e4*e) / 1e4
						}
					}
				}
			}
			jg.Rows = append(jg.Rows, jr)
		}
		if v := g.Verdict; v != nil {
			jg.Verdict = &jsonVerdict{Sentence: v.String(), Fastest: v.Fastest, RunnerUp: v.RunnerUp,
				Speedup: jsonSafe(v.Speedup), P: jsonSafe(v.P), Significant: v.Significant, CannotTell: v.CannotTell}
		}
		out.Groups = append(out.Groups, jg)
	}
	var names []string
	for u := range used {
		names = append(names, u)
	}
	for _, u := range units.Sort(names) {
		out.Units = append(out.Units, jsonUnitRef{Unit: u, Label: units.Label(u)})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// jsonSafe is v, or 0 for what JSON cannot hold (NaN, ±Inf from a tampered
// run.json): encoding/json refuses those.
func jsonSafe(v float64) float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0
	}
	return v
}
