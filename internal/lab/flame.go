package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/pyroscope"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/profiles"
	"github.com/perflab/perflab/profiles/flame"
)

// FlameRequest is what `perflab flame` asks for, as the user typed it:
// everything but the output's format and where it goes.
type FlameRequest struct {
	// Inputs are one profile, or base and new with Diff: a pprof file, a
	// Go execution trace, "-" for Stdin, or a stored case in any form a
	// command takes one (a case directory, "run-dir/case name", ID/CASE,
	// latest/CASE, a profile file inside a run).
	Inputs []string
	Stdin  io.Reader
	// Resolve finds a stored run or case by reference (the CLI's says when
	// "latest" passed by newer runs).
	Resolve func(ref string) (*store.Ref, error)
	// StoreDir is the run store Resolve reads, for the error that says a
	// stored case was not found there ("" is store.Dir's default).
	StoreDir string
	// Cmd is how the user runs perflab ("perflab", "go run ."), for the
	// errors' hints that name a command; "" is perflab.
	Cmd string
	// Kind is the profile drawn of a stored case: wall, cpu, mutex, block.
	Kind string
	Diff bool
	// Layout is --layout: with Diff, the profile whose shape is drawn.
	Layout string
	// Rules is a rules file ("" for none); Work are --work patterns.
	Rules string
	Work  []string
	// SampleType, Title, Width and MinWidth are flame.Options'.
	SampleType string
	Title      string
	Width      int
	MinWidth   float64
	// Goroutine, for an execution trace, keeps only the goroutines whose
	// root function matches this regexp.
	Goroutine string
	// Pyroscope, if not nil, is the server the profile is read from
	// instead of Inputs.
	Pyroscope *PyroscopeQuery
	// Traced, if not nil, is told of each execution trace read, as it is
	// read.
	Traced func(TraceInput)
}

// PyroscopeQuery is a profile to read from a Pyroscope server: the merged
// profiles of ProfileType matching Query over the last Since.
type PyroscopeQuery struct {
	URL, TenantID, User, Password string
	Query                         string // "" is DefaultQuery
	ProfileType                   string
	Since                         time.Duration
}

// DefaultQuery is the label selector a Pyroscope query defaults to: the
// runs perflab push sent under its default service name.
const DefaultQuery = `{service_name="perflab"}`

// TraceInput is what an execution trace drawn as a wall-clock profile
// held: its name, its span, how many goroutines it had (the runtime's and
// profilers' left out), which were drawn, and its CPU samples (0: running
// time is not split by what ran).
type TraceInput struct {
	Name       string
	Span       time.Duration
	Goroutines int
	Drawn      string
	CPUSamples int
}

// FlameInput is one profile to draw, with what is known of where it came
// from.
type FlameInput struct {
	Source *flame.Source
	Title  string
	// User and Work are the rules and work patterns it brings: a stored
	// run's recorded classification, or its scenario's patterns.
	User []profiles.Rule
	Work []string
	// Warning says why a stored run's recorded classification was not
	// used, if it was not.
	Warning string
}

// Flame is a checked flame request, its profiles read: what is left is to
// draw it (Tree) or write its folded stacks (WriteFolded).
type Flame struct {
	Inputs []*FlameInput
	// Options draw the tree: the rules settled (--rules, then what the
	// inputs bring, then --work), the title chosen.
	Options flame.Options
	diff    bool
}

// PlanFlame reads the profiles a flame request names and settles how they
// are classified. What the user got wrong is a *PlanError; reading a
// profile that is there but broken is another error.
func PlanFlame(ctx context.Context, req FlameRequest) (*Flame, error) {
	layout, err := flame.ParseLayout(req.Layout)
	if err != nil {
		return nil, planErr(fmt.Errorf("--layout: %w", err))
	}
	rules := profiles.DefaultRules()
	if req.Rules != "" {
		if rules, err = profiles.LoadRules(req.Rules); err != nil {
			return nil, planErr(err)
		}
	}
	f := &Flame{diff: req.Diff}
	if req.Pyroscope != nil {
		in, err := pyroscopeInput(ctx, req.Pyroscope)
		if err != nil {
			return nil, err
		}
		f.Inputs = append(f.Inputs, in)
	}
	if countOf(req.Inputs, "-") > 1 {
		return nil, planErr(errors.New("flame: standard input (-) can be only one of the profiles"))
	}
	var goroutine *regexp.Regexp
	if req.Goroutine != "" {
		if goroutine, err = regexp.Compile(req.Goroutine); err != nil {
			return nil, planErr(fmt.Errorf("--goroutine: %w", err))
		}
	}
	stdin := req.Stdin
	for _, arg := range req.Inputs {
		// An execution trace is drawn as its exact wall-clock profile.
		in, info, err := openTrace(&stdin, arg, goroutine, rules)
		if err != nil {
			return nil, err
		}
		if info != nil && req.Traced != nil {
			req.Traced(*info)
		}
		if in == nil {
			if goroutine != nil {
				return nil, planErr(fmt.Errorf("--goroutine selects goroutines of an execution trace, and %s is not one", arg))
			}
			if in, err = openProfile(stdin, req.Resolve, req.StoreDir, arg, req.Kind, req.Cmd); err != nil {
				return nil, err
			}
		}
		f.Inputs = append(f.Inputs, in)
	}
	if len(f.Inputs) == 0 {
		return nil, planErr(errors.New("name a profile to draw, or read one from Pyroscope"))
	}
	// --rules first, then what the inputs bring (a stored run's recorded
	// rules and work patterns, a scenario's), then --work: for a stored
	// case and no flags, the rules the run was classified with.
	var user []profiles.Rule
	var work []string
	for _, in := range f.Inputs {
		user = append(user, in.User...)
		work = append(work, in.Work...)
	}
	work = append(work, req.Work...)
	if rules, err = rules.WithUser(user...); err != nil {
		return nil, err // UserRules checked them; not the user's typing
	}
	if rules, err = rules.WithWork(work...); err != nil {
		return nil, planErr(err)
	}
	last := f.last()
	// The tree is only drawn: DrawnOnly keeps the frames the SVG or page
	// shows (issue 26: a million unique stacks are 25 million frames).
	f.Options = flame.Options{Title: req.Title, SampleType: req.SampleType, Rules: rules, Width: req.Width, MinWidth: req.MinWidth, Layout: layout, DrawnOnly: true}
	if f.Options.Title == "" {
		f.Options.Title = last.Title
		if req.Diff {
			f.Options.Title = f.Inputs[0].Title + " → " + last.Title
		}
	}
	return f, nil
}

func (f *Flame) last() *FlameInput { return f.Inputs[len(f.Inputs)-1] }

// WriteFolded writes the (last) profile's folded stacks of the sample
// type asked for; an unknown sample type is a *PlanError.
func (f *Flame) WriteFolded(w io.Writer) error {
	src := f.last().Source
	idx, err := src.SampleIndex(f.Options.SampleType)
	if err != nil {
		return planErr(err)
	}
	return src.WriteFolded(w, idx)
}

// Tree builds the flame tree: of the profile, or with Diff the union of
// base and new. What the options ask that the profiles do not have (a
// sample type, say) is a *PlanError.
func (f *Flame) Tree() (*flame.Tree, error) {
	var t *flame.Tree
	var err error
	if f.diff {
		t, err = flame.DiffSource(f.Inputs[0].Source, f.last().Source, f.Options)
	} else {
		t, err = flame.BuildSource(f.last().Source, f.Options)
	}
	if err != nil {
		return nil, planErr(err)
	}
	return t, nil
}

// classifyAs takes the classification of stored run StoredRules decides.
func (in *FlameInput) classifyAs(run *model.Run) {
	rr := StoredRules(run)
	if rr.Recorded != nil {
		user, err := rr.Recorded.UserRules()
		if err == nil {
			in.User, in.Work = user, rr.Recorded.Work
			return
		}
		rr = RefusedRules(run, err)
	}
	in.Work = rr.Work
	if rr.NotInBinary {
		rr.Warning += "; draw it with the binary that made it, or give --work"
	}
	in.Warning = rr.Warning
}

// openProfile opens a profile file, or a stored case in any form a
// command takes one (a case directory, "run-dir/case name", ID/CASE,
// latest/CASE). A stored case's profile is read through its store, by the
// path its run.json records: the store refuses symbolic links, files that
// are not regular and paths out of the run, so a tampered run cannot make
// flame read (or hang on) anything else. cmd is FlameRequest.Cmd.
func openProfile(stdin io.Reader, resolve func(string) (*store.Ref, error), storeDir, arg, kind, cmd string) (*FlameInput, error) {
	if arg == "-" {
		// A profile piped in (curl …/debug/pprof/profile | perflab flame
		// -): read with the same limits as a file.
		src, err := flame.ReadSource(stdin, profiles.Limits{})
		if err != nil {
			return nil, fmt.Errorf("standard input: %w", err)
		}
		return &FlameInput{Source: src, Title: "stdin"}, nil
	}
	if fi, err := os.Stat(arg); err == nil && !fi.IsDir() {
		// A profile file of a stored run (<run>/cases/<slug>/cpu.pb.gz) is
		// read through its store and classified with its scenario's work
		// patterns, like its case.
		caseDir := filepath.Dir(arg)
		runDir := filepath.Dir(filepath.Dir(caseDir))
		if _, err := os.Lstat(filepath.Join(runDir, "run.json")); err == nil && filepath.Base(filepath.Dir(caseDir)) == "cases" {
			if ref, err := store.Open("").Resolve(runDir); err == nil {
				rel := "cases/" + filepath.Base(caseDir) + "/" + filepath.Base(arg)
				src, err := readStoredProfile(ref.Store, ref.Run, rel)
				if err != nil {
					return nil, err
				}
				in := &FlameInput{Source: src, Title: ref.Run.Scenario + " " + filepath.Base(caseDir) + " (" + filepath.Base(arg) + ")"}
				in.classifyAs(ref.Run)
				return in, nil
			} else if errors.Is(err, store.ErrRefused) {
				return nil, err
			}
		}
		src, err := readProfileFile(arg)
		if err != nil {
			return nil, err
		}
		return &FlameInput{Source: src, Title: filepath.Base(arg)}, nil
	}
	if resolve == nil {
		resolve = store.Open(store.Dir("")).Resolve
	}
	ref, err := resolve(arg)
	if storeDir == "" {
		storeDir = store.Dir("")
	}
	if err != nil {
		if errors.Is(err, store.ErrNoRun) || errors.Is(err, store.ErrNoRuns) || errors.Is(err, store.ErrInvalidID) {
			return nil, planErr(fmt.Errorf("%s: no such profile file, case directory or run case in the store %s (another store: --store DIR)", arg, storeDir))
		}
		if errors.Is(err, model.ErrNoCase) {
			return nil, planErr(fmt.Errorf("%w (see `%s`)", err, CommandLine(cmd, "show"+StoreArg(storeDir))))
		}
		return nil, err
	}
	run, c := ref.Run, ref.Case
	if c == nil {
		return nil, planErr(fmt.Errorf("%s is a whole run: name a case, e.g. %s/<case> (see `%s`)", arg, arg, CommandLine(cmd, "show "+run.ID+StoreArg(storeDir))))
	}
	rel, ok := c.Profiles[kind]
	if !ok {
		has := slices.Sorted(maps.Keys(c.Profiles))
		if len(has) == 0 {
			return nil, fmt.Errorf("case %s has no profiles: %s", c.Name, whyNoProfiles(run, c))
		}
		return nil, fmt.Errorf("case %s has no %s profile%s (it has %s)", c.Name, kind, didYouMean(kind, has), strings.Join(has, ", "))
	}
	src, err := readStoredProfile(ref.Store, run, rel)
	if err != nil {
		return nil, err
	}
	in := &FlameInput{Source: src, Title: run.Scenario + " " + c.Name + " (" + kind + ")"}
	in.classifyAs(run)
	return in, nil
}

// whyNoProfiles says why case c of run has no profiles, from what the
// run recorded: a run interrupted in its rounds had no --profile none to
// blame, which is all the message guessed at before.
func whyNoProfiles(run *model.Run, c *model.Case) string {
	switch {
	case c.Status == model.StatusFailed:
		return "it failed (see `perflab show " + run.ID + "`)"
	case c.Status != model.StatusOK:
		return "it was not measured (" + string(c.Status) + ")"
	case len(run.Config.Profile) == 0 || slices.Equal(run.Config.Profile, []string{"none"}):
		return "the run was made with --profile none"
	case !run.Complete:
		return "the run stopped before its profiles were taken (" + run.Note + ")"
	}
	return "the run recorded none (see `perflab show " + run.ID + "`)"
}

// scenarioLabel finds scenario="name" in a label selector.
var scenarioLabel = regexp.MustCompile(`\bscenario\s*=\s*"([^"]+)"`)

// pyroscopeInput fetches the merged profile; when the selector names one
// scenario, its work patterns classify the frames as for a lab run.
func pyroscopeInput(ctx context.Context, q *PyroscopeQuery) (*FlameInput, error) {
	if q.URL == "" {
		return nil, planErr(ErrNoServer)
	}
	c, err := pyroscope.New(q.URL, pyroscope.Config{TenantID: q.TenantID, BasicAuthUser: q.User, BasicAuthPassword: q.Password})
	if err != nil {
		return nil, planErr(err)
	}
	if _, err := pyroscope.ParseProfileType(q.ProfileType); err != nil {
		return nil, planErr(err)
	}
	if q.Since <= 0 {
		return nil, planErr(fmt.Errorf("--since %v: give how far back to read, such as 15m, 1h or 24h", q.Since))
	}
	query := q.Query
	if query == "" {
		query = DefaultQuery
	}
	p, err := c.Fetch(ctx, query, q.ProfileType, q.Since)
	if err != nil {
		return nil, err
	}
	in := &FlameInput{Source: flame.NewSource(p), Title: fmt.Sprintf("%s %s, last %s", q.ProfileType, query, q.Since)}
	if m := scenarioLabel.FindStringSubmatch(query); m != nil {
		if s, err := perflab.Lookup(m[1]); err == nil {
			in.Work = s.Work
		}
	}
	return in, nil
}

// readStoredProfile reads file rel of run through its store, with the
// limits every profile is read with (profiles.Limits' defaults), decoded
// for drawing (flame.ReadSource: no profile.Profile).
func readStoredProfile(st *store.Store, run *model.Run, rel string) (*flame.Source, error) {
	f, _, err := st.OpenFile(run.ID, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	src, err := flame.ReadSource(f, profiles.Limits{})
	if err != nil {
		return nil, fmt.Errorf("%s of run %s: %w", rel, run.ID, err)
	}
	return src, nil
}

// readProfileFile reads a profile file the user named: a regular file
// (a FIFO or a device would hang or never end), with the same limits.
func readProfileFile(path string) (*flame.Source, error) {
	f, _, err := store.OpenUserFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	src, err := flame.ReadSource(f, profiles.Limits{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return src, nil
}

// countOf is how many of xs are x.
func countOf(xs []string, x string) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}
