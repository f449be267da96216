package lab

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/runner"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/suggest"
	"github.com/perflab/perflab/profiles"
)

// MeasureRequest is what `perflab run` asks for, as the user typed it.
type MeasureRequest struct {
	Scenarios []string
	Params    []string // name=v1,v2
	Variants  []string
	// VariantsSet says --variant was given: an empty one is an error, not
	// "every variant".
	VariantsSet bool
	Threads     []int
	Count       int
	Time        time.Duration
	Warmup      time.Duration
	// Profile lists the profile kinds; ["none"] is none.
	Profile     []string
	ProfileTime time.Duration
	Trace       string
	// Until is --until as a fraction (0: off); UntilMax its time cap.
	Until    float64
	UntilMax time.Duration
	// Rules is a rules file ("" for none).
	Rules string
	Seed  uint64
	// Args is the command line, recorded (redacted) in run.json.
	Args []string
	// Cmd is how the user runs perflab ("perflab", "go run ."), for the
	// errors' hints that name a command; "" is perflab.
	Cmd string
}

// CommandLine is the command line a hint tells the user to type: sub
// (such as "show --list") after cmd, the command they run perflab by
// ("perflab", "go run ."; "" is perflab). The CLI's hints and lab's
// errors both name commands through it.
func CommandLine(cmd, sub string) string {
	if cmd == "" {
		cmd = "perflab"
	}
	return cmd + " " + sub
}

// StoreArg is the -o flag a hint's command line needs to name the store
// at root: "" for the default store, which the command finds by itself.
func StoreArg(root string) string {
	if root == store.DefaultDir {
		return ""
	}
	return " -o " + root
}

// LookupScenario is perflab.Lookup whose error, for a scenario this
// binary lacks, names the command that lists the ones it has by cmd, the
// command the user runs perflab by (Lookup's says perflab list, which a
// module from perflab new, run by go run ., does not have).
func LookupScenario(name, cmd string) (*perflab.Scenario, error) {
	s, err := perflab.Lookup(name)
	if err != nil {
		var names []string
		for _, s := range perflab.Scenarios() {
			names = append(names, s.Name)
		}
		return nil, suggest.UnknownScenario(name, names, CommandLine(cmd, "list"))
	}
	return s, nil
}

// MeasurePlan is a checked request: every scenario found, every name the
// user typed known, every matrix expanded (once: the runner measures the
// cases planned here), the rules read. Nothing has been measured yet.
type MeasurePlan struct {
	Scenarios []ScenarioPlan
	// Profile is the profile kinds, none for --profile none.
	Profile []string
	req     MeasureRequest
	cl      *Classification
}

// ScenarioPlan is one scenario of a plan and its cases.
type ScenarioPlan struct {
	Scenario  *perflab.Scenario
	Selection perflab.Selection
	Cases     []perflab.CaseSpec
}

func planErr(err error) error { return &PlanError{Err: err} }

// PlanMeasure checks everything the user typed before anything is
// measured, and expands each scenario's matrix.
func PlanMeasure(req MeasureRequest) (*MeasurePlan, error) {
	if err := checkVariants(req); err != nil {
		return nil, planErr(err)
	}
	var scenarios []*perflab.Scenario
	for i, name := range req.Scenarios {
		if slices.Contains(req.Scenarios[:i], name) {
			return nil, planErr(fmt.Errorf("scenario %s is named twice: each scenario runs once a run (for more repetitions, use --count)", name))
		}
		s, err := LookupScenario(name, req.Cmd)
		if err != nil {
			return nil, planErr(unknownScenario(name, req.Scenarios, req.Cmd, err))
		}
		scenarios = append(scenarios, s)
	}
	if len(scenarios) > 1 {
		// Before each scenario's selection, which drops what it lacks:
		// a name none of them has is a typo, said as one.
		if err := checkKnown(req, scenarios); err != nil {
			return nil, planErr(err)
		}
	}
	p := &MeasurePlan{req: req}
	for _, s := range scenarios {
		sel, err := selection(req, s, len(req.Scenarios) == 1)
		if err != nil {
			return nil, planErr(err)
		}
		cases, err := s.Matrix(sel)
		if err != nil {
			return nil, planErr(err)
		}
		p.Scenarios = append(p.Scenarios, ScenarioPlan{Scenario: s, Selection: sel, Cases: cases})
	}
	prof, err := profileKinds(req.Profile)
	if err != nil {
		return nil, planErr(err)
	}
	p.Profile = prof
	switch {
	case req.Count < 1:
		return nil, planErr(fmt.Errorf("--count %d: want at least 1", req.Count))
	case req.Time <= 0:
		return nil, planErr(fmt.Errorf("--time %s: want a positive duration, such as 200ms", req.Time))
	case req.Warmup < 0:
		return nil, planErr(fmt.Errorf("--warmup %s: want 0 or a positive duration, such as 300ms", req.Warmup))
	case req.ProfileTime <= 0:
		return nil, planErr(fmt.Errorf("--profile-time %s: want a positive duration, such as 1s", req.ProfileTime))
	case req.Trace != runner.TraceSlices && req.Trace != runner.TraceWindow:
		return nil, planErr(fmt.Errorf("--trace %q: want %s or %s", req.Trace, runner.TraceSlices, runner.TraceWindow))
	}
	if p.cl, err = LoadClassification(req.Rules); err != nil {
		return nil, planErr(err)
	}
	return p, nil
}

// Measurement is one scenario of a plan, stored as a partial run and
// ready to measure.
type Measurement struct {
	Run    *model.Run
	Runner *runner.Runner
	Writer *store.Writer
}

// options are the runner's options for scenario i of the plan.
func (p *MeasurePlan) options(i int) runner.Options {
	sp, req := p.Scenarios[i], p.req
	return runner.Options{
		Selection: sp.Selection, Cases: sp.Cases, Count: req.Count, Time: req.Time, Warmup: req.Warmup,
		Profile: p.Profile, ProfileTime: req.ProfileTime, Trace: req.Trace, Seed: req.Seed,
		Until: req.Until, UntilMax: req.UntilMax,
	}
}

// Estimate is how long measuring scenario i of the plan should take
// (runner.Options.Estimate), before it starts.
func (p *MeasurePlan) Estimate(i int) time.Duration {
	return p.options(i).Estimate(len(p.Scenarios[i].Cases))
}

// Start creates the stored run of scenario i of the plan and the runner
// that measures it, with its progress and the saver it checkpoints through
// (the store's writer, or what wrap makes of it; nil for none). A rule the
// scenario cannot be classified with is a PlanError, found before the run
// is created.
func (p *MeasurePlan) Start(st *store.Store, i int, progress runner.Progress, wrap func(runner.Saver) runner.Saver) (*Measurement, error) {
	sp := p.Scenarios[i]
	rules, recorded, err := p.cl.ForScenario(sp.Scenario)
	if err != nil {
		return nil, planErr(err)
	}
	opts := p.options(i)
	run := runner.NewRun(sp.Scenario, opts, p.req.Args, recorded)
	w, err := st.Create(run)
	if err != nil {
		return nil, err
	}
	var save runner.Saver = w
	if wrap != nil {
		save = wrap(w)
	}
	r := &runner.Runner{Scenario: sp.Scenario, Opts: opts, Run: run, Save: save, Progress: progress, Rules: rules}
	return &Measurement{Run: run, Runner: r, Writer: w}, nil
}

// Classification is how a run's stacks are classified: the user's rules
// file, read once, then a scenario's work patterns, then the built-in Go
// rules.
type Classification struct {
	base *profiles.Rules
}

// LoadClassification reads the --rules file, if any.
func LoadClassification(rulesFile string) (*Classification, error) {
	base := profiles.DefaultRules()
	if rulesFile != "" {
		var err error
		if base, err = profiles.LoadRules(rulesFile); err != nil {
			return nil, fmt.Errorf("--rules: %w", err)
		}
	}
	return &Classification{base: base}, nil
}

// Base is the rules before any scenario's work patterns.
func (c *Classification) Base() *profiles.Rules { return c.base }

// ForScenario returns the rules that classify s's stacks and what run.json
// records of them, so that another binary classifies the stored run the
// same way. It refuses what readers would refuse
// (model.Classification.Check), so every stored run reads back as made.
func (c *Classification) ForScenario(s *perflab.Scenario) (*profiles.Rules, *model.Classification, error) {
	rules, err := c.base.WithWork(s.Work...)
	if err != nil {
		return nil, nil, err
	}
	rec := model.NewClassification(s.Work, c.base.User())
	if err := rec.Check(); err != nil {
		return nil, nil, fmt.Errorf("a run records at most what it can be read back with: %w", err)
	}
	return rules, rec, nil
}

func didYouMean(typed string, known []string) string {
	if dym := suggest.DidYouMean(typed, known); dym != "" {
		return ": " + dym
	}
	return ""
}

// checkVariants fails for an empty --variant, which would otherwise run
// every variant, and an empty name in its list.
func checkVariants(req MeasureRequest) error {
	if req.VariantsSet && len(req.Variants) == 0 {
		return fmt.Errorf("--variant is empty: name the variants to run, or leave --variant out for all (see %s)", CommandLine(req.Cmd, "list"))
	}
	for _, v := range req.Variants {
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("--variant %s: an empty variant name", strings.Join(req.Variants, ","))
		}
	}
	return nil
}

// unknownScenario is Lookup's error for name, with a hint when name is
// not a scenario but something else a user might type after one: a
// variant (perflab run cipher-cache mutex) or a parameter (keys=128).
// names are the scenario arguments; cmd is MeasureRequest.Cmd.
func unknownScenario(name string, names []string, cmd string, err error) error {
	if k, v, ok := strings.Cut(name, "="); ok && k != "" && v != "" {
		return fmt.Errorf("unknown scenario %q: for a parameter, use -p %s", name, name)
	}
	var named []*perflab.Scenario
	for _, n := range names {
		if s, err := perflab.Lookup(n); err == nil {
			named = append(named, s)
		}
	}
	variantOf := func(list []*perflab.Scenario) []string {
		var of []string
		for _, s := range list {
			if _, err := s.Variant(name); err == nil {
				of = append(of, s.Name)
			}
		}
		return of
	}
	if of := variantOf(named); len(of) > 0 {
		return fmt.Errorf("unknown scenario %q: it is a variant of %s; to run only it, use --variant %s", name, strings.Join(of, ", "), name)
	}
	if of := variantOf(perflab.Scenarios()); len(of) > 0 {
		return fmt.Errorf("unknown scenario %q: it is a variant of %s (%s)", name, strings.Join(of, ", "), CommandLine(cmd, "run "+of[0]+" --variant "+name))
	}
	return err
}

// checkKnown fails for a -p name or --variant that none of the scenarios
// has: with several scenarios each one ignores what it lacks, so a typo
// would otherwise pass silently.
func checkKnown(req MeasureRequest, scenarios []*perflab.Scenario) error {
	for _, p := range req.Params {
		name, _, _ := strings.Cut(p, "=")
		known := name == "threads"
		for _, s := range scenarios {
			if _, err := s.Param(name); err == nil {
				known = true
			}
		}
		if !known {
			var all []string
			for _, s := range scenarios {
				for _, p := range s.Params {
					all = append(all, p.Name)
				}
			}
			return fmt.Errorf("-p %s: none of %s has a parameter %q%s (see %s)", p, strings.Join(req.Scenarios, ", "), name, didYouMean(name, append(all, "threads")), CommandLine(req.Cmd, "list"))
		}
	}
	for _, v := range req.Variants {
		known := false
		var all []string
		for _, s := range scenarios {
			if _, err := s.Variant(v); err == nil {
				known = true
			}
			for _, sv := range s.Variants {
				all = append(all, sv.Name)
			}
		}
		if !known {
			return fmt.Errorf("--variant %s: none of %s has that variant%s (see %s)", v, strings.Join(req.Scenarios, ", "), didYouMean(v, all), CommandLine(req.Cmd, "list"))
		}
	}
	return nil
}

// profileKinds checks --profile: none alone, or kinds the runner knows.
func profileKinds(kinds []string) ([]string, error) {
	if len(kinds) == 1 && (kinds[0] == "none" || kinds[0] == "") {
		return []string{}, nil
	}
	for _, p := range kinds {
		if p == "none" {
			return nil, fmt.Errorf("--profile %s: none cannot be combined with profiles: give --profile none alone, or the profiles to capture", strings.Join(kinds, ","))
		}
		if !slices.Contains(runner.ProfileKinds, p) {
			return nil, fmt.Errorf("--profile %s: unknown profile %q%s (want %s or none)", strings.Join(kinds, ","), p, didYouMean(p, runner.ProfileKinds), strings.Join(runner.ProfileKinds, ", "))
		}
	}
	return kinds, nil
}

// Select is one scenario's selection and its cases, from -p, --variant
// and --threads as typed, every name checked: what soak measures, as run
// would.
func Select(s *perflab.Scenario, params, variants []string, threads []int) (perflab.Selection, []perflab.CaseSpec, error) {
	sel, err := selection(MeasureRequest{Params: params, Variants: variants, Threads: threads}, s, true)
	if err != nil {
		return sel, nil, err
	}
	cases, err := s.Matrix(sel)
	return sel, cases, err
}

// selection turns -p, --variant and --threads into a Selection for s,
// ignoring parameters s does not have when several scenarios run.
func selection(req MeasureRequest, s *perflab.Scenario, strict bool) (perflab.Selection, error) {
	sel := perflab.Selection{Params: map[string][]string{}, Threads: req.Threads}
	for _, v := range req.Variants {
		if _, err := s.Variant(v); err != nil {
			if strict {
				return sel, err
			}
			continue
		}
		sel.Variants = append(sel.Variants, v)
	}
	if !strict && len(req.Variants) > 0 && len(sel.Variants) == 0 {
		return sel, fmt.Errorf("none of --variant %s is a variant of %s", strings.Join(req.Variants, ","), s.Name)
	}
	for _, p := range req.Params {
		name, values, ok := strings.Cut(p, "=")
		if !ok || name == "" || values == "" {
			return sel, fmt.Errorf("-p %q: want name=value[,value…]", p)
		}
		list := strings.Split(values, ",")
		if name == "threads" {
			if len(req.Threads) > 0 {
				// One would silently win over the other.
				return sel, fmt.Errorf("--threads %s and -p %s both give goroutine counts: give them once", joinInts(req.Threads), p)
			}
			for _, v := range list {
				n, err := strconv.Atoi(v)
				if err != nil {
					return sel, fmt.Errorf("-p threads=%s: %q is not a goroutine count", values, v)
				}
				sel.Threads = append(sel.Threads, n)
			}
			continue
		}
		if _, err := s.Param(name); err != nil {
			if strict {
				return sel, err
			}
			continue
		}
		sel.Params[name] = append(sel.Params[name], list...)
	}
	return sel, nil
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}
