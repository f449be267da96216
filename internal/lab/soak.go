package lab

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/continuous"
	"github.com/perflab/perflab/internal/live"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/pyroscope"
	"github.com/perflab/perflab/internal/runner"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/profiles"
)

// SoakRequest is what `perflab soak` asks for: the cases, how long, and
// the Pyroscope server (its URL and credentials already taken from flags or
// the environment).
type SoakRequest struct {
	Scenario string
	Params   []string // name=v1,v2
	Variants []string
	Threads  []int
	// Duration is how long the soak lasts; Slice how long each case runs
	// at its turn.
	Duration, Slice time.Duration
	// UploadRate is pyroscope-go's upload period.
	UploadRate time.Duration
	// NoWall leaves out the wall-clock profiles (no execution tracer).
	NoWall bool

	URL, ServiceName, TenantID, User, Password string
	// Labels are extra labels on every profile, name=value.
	Labels []string
	// Cmd is how the user runs perflab ("perflab", "go run ."), for the
	// errors' hints that name a command; "" is perflab.
	Cmd string
}

// ErrNoServer is a SoakRequest's error when it names no Pyroscope server.
var ErrNoServer = errors.New("no Pyroscope server")

// SoakEvent is what Soak reports as it goes, for a progress display.
type SoakEvent struct {
	Kind SoakEventKind
	// Scenario is the scenario soaked.
	Scenario string
	// Case is the case skipped or run.
	Case string
	// Err is why the case was skipped (SoakSkipped), or why its slice's
	// wall-clock profile was not made or sent (SoakSlice).
	Err error
	// Cases, Slice, Duration, URL and Selector describe the soak
	// (SoakStarted); URL has no user information.
	Cases           int
	Slice, Duration time.Duration
	URL, Selector   string
	// Elapsed and Stats are the soak's time and uploads so far
	// (SoakSlice).
	Elapsed time.Duration
	Stats   continuous.Stats
}

// SoakEventKind says what a SoakEvent reports.
type SoakEventKind int

// The kinds of SoakEvent.
const (
	SoakSkipped SoakEventKind = iota // a case that does not apply
	SoakStarted                      // profiling has started
	SoakSlice                        // a case ran its turn
)

// SoakResult is what a soak did.
type SoakResult struct {
	Scenario string
	// Slices is the number of turns the cases ran; Elapsed the soak's
	// whole time.
	Slices  int
	Elapsed time.Duration
	// Stats counts the uploads; UploadErr is the profiler's last word on
	// them (uploads failed or cut short), nil when all went.
	Stats     continuous.Stats
	UploadErr error
	// Selector finds the soak's profiles in Pyroscope.
	Selector string
}

// soakCase is one case of a soak, set up once.
type soakCase struct {
	name   string
	labels map[string]string // as push sends them, with the extra labels
	lc     *live.Case
	n      int // operations per Run call, about 10 ms
}

// soakCall is the length of one Run call of a soak's worker: short enough
// to end a slice on time, long enough that the loop around it is nothing.
const soakCall = 10 * time.Millisecond

// Soak runs the chosen cases of a scenario round-robin, Slice each, for
// Duration, under the continuous package's profiler: pyroscope-go's
// profiles labelled per session, each case's workers carrying the case's
// labels (as perflab push labels a run's), and for each slice the exact
// wall-clock profile of the case's workers labelled with the case.
//
// It is a profiling session, not a measurement: nothing is timed or
// stored. A request that cannot run is a *PlanError, found before any case
// is set up. The result is non-nil once profiling started, with an error
// too when a case failed or no profile reached the server; when ctx ends,
// the soak stops after uploading what was made (the wall-clock profile of
// the slice it cut short too), closes every case, and returns its result
// with no error of its own (the caller knows ctx ended).
func Soak(ctx context.Context, req SoakRequest, progress func(SoakEvent)) (*SoakResult, error) {
	if progress == nil {
		progress = func(SoakEvent) {}
	}
	s, err := LookupScenario(req.Scenario, req.Cmd)
	if err != nil {
		return nil, planErr(err)
	}
	_, specs, err := Select(s, req.Params, req.Variants, req.Threads)
	if err != nil {
		return nil, planErr(err)
	}
	switch {
	case req.Duration <= 0:
		return nil, planErr(fmt.Errorf("--duration %v: want a positive duration", req.Duration))
	case req.Slice <= 0:
		return nil, planErr(fmt.Errorf("--slice %v: want a positive duration", req.Slice))
	case req.UploadRate < time.Second:
		return nil, planErr(fmt.Errorf("--upload-rate %v: want 1s or more", req.UploadRate))
	}
	if req.URL == "" {
		return nil, planErr(ErrNoServer)
	}
	pc, err := pyroscope.New(req.URL, pyroscope.Config{TenantID: req.TenantID, BasicAuthUser: req.User, BasicAuthPassword: req.Password})
	if err != nil {
		return nil, planErr(err)
	}
	extra, err := parseLabels(req.Labels, req.ServiceName)
	if err != nil {
		return nil, planErr(err)
	}
	rules := profiles.DefaultRules()
	if len(s.Work) > 0 {
		if rules, err = rules.WithWork(s.Work...); err != nil {
			return nil, err
		}
	}

	// The labels of push: CaseLabels of a run that is this session.
	started := time.Now()
	run := &model.Run{ID: store.NewID(started, s.Name) + "-soak", Scenario: s.Name, Env: runner.Environment()}
	for _, sp := range specs {
		run.Cases = append(run.Cases, model.Case{Name: s.CaseName(sp), Variant: sp.Variant, Params: sp.Params, Threads: sp.Threads})
	}
	if extra, err = pyroscope.UserLabels(run, extra); err != nil {
		return nil, planErr(err)
	}
	// Labels that are the same for every case go on the session too, so the
	// profiles without goroutine labels (alloc, mutex, block) are found by
	// run_id as well.
	session := map[string]string{"scenario": s.Name, "run_id": run.ID, "goos": run.Env.GOOS, "goarch": run.Env.GOARCH}
	if run.Env.Commit != "" {
		session["commit"] = run.Env.Commit
	}
	for k, v := range extra {
		session[k] = v
	}

	var cases []*soakCase
	defer func() {
		for _, c := range cases {
			c.lc.Close()
		}
	}()
	for i, sp := range specs {
		name := run.Cases[i].Name
		labels := pyroscope.CaseLabels(run, &run.Cases[i])
		for k, v := range extra {
			labels[k] = v
		}
		all := pyroscope.SDKLabels()
		for k, v := range labels {
			all[k] = v
		}
		if err := pyroscope.DefaultLimits.CheckLabels(req.ServiceName, all); err != nil {
			return nil, planErr(fmt.Errorf("case %s: %w", name, err))
		}
		lc, err := live.New(ctx, s, sp, labels)
		if errors.Is(err, perflab.ErrNotApplicable) {
			progress(SoakEvent{Kind: SoakSkipped, Case: name, Err: err})
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("case %s: %w", name, err)
		}
		c := &soakCase{name: name, labels: labels, lc: lc}
		cases = append(cases, c)
		if c.n, err = lc.Calibrate(ctx, soakCall); err != nil {
			return nil, fmt.Errorf("case %s: %w", name, err)
		}
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("no case of %s applies to this selection", s.Name)
	}

	sess, err := continuous.StartSession(continuous.Config{
		ApplicationName:   req.ServiceName,
		ServerAddress:     req.URL,
		Tags:              session,
		TenantID:          req.TenantID,
		BasicAuthUser:     req.User,
		BasicAuthPassword: req.Password,
		UploadRate:        req.UploadRate,
		// One wall-clock window per slice, chosen here, of the case's
		// workers only: none of the package's own periodic ones.
		WallWindow: -1,
		WallRegion: live.Region,
		Rules:      rules,
		Logger:     quietLogger{},
	})
	if err != nil {
		return nil, planErr(err)
	}
	res := &SoakResult{Scenario: s.Name, Selector: fmt.Sprintf(`{service_name=%q,run_id=%q}`, req.ServiceName, run.ID)}
	progress(SoakEvent{Kind: SoakStarted, Scenario: s.Name, Cases: len(cases), Slice: req.Slice, Duration: req.Duration, URL: pc.URL(), Selector: res.Selector})
	deadline := started.Add(req.Duration)
	var runErr error
	for i := 0; ctx.Err() == nil && time.Now().Before(deadline); i++ {
		c := cases[i%len(cases)]
		wallErr, err := c.slice(ctx, sess, !req.NoWall, req.Slice, deadline)
		if ctx.Err() != nil {
			break // interrupted: the slice is not the case's failure
		}
		if err != nil {
			runErr = fmt.Errorf("case %s: %w", c.name, err)
			break
		}
		res.Slices++
		progress(SoakEvent{Kind: SoakSlice, Case: c.name, Err: wallErr, Elapsed: time.Since(started), Duration: req.Duration, Stats: sess.Stats()})
	}

	// Upload what pyroscope-go has and wait for every upload, 10 s at
	// most in all: what is still in flight then is aborted.
	res.UploadErr = sess.Stop()
	res.Stats = sess.Stats()
	res.Elapsed = time.Since(started)
	switch {
	case ctx.Err() != nil:
		// Interrupted: no error of Soak's own (the caller knows ctx
		// ended, and `perflab soak` exits 130 after the summary), even
		// when nothing was sent yet: the summary's stats say so.
		return res, nil
	case runErr != nil:
		return res, runErr
	case res.Stats.SentTotal() == 0:
		return res, fmt.Errorf("no profile reached %s (%s)", pc.URL(), res.Stats.LastError)
	}
	return res, nil
}

// slice runs every worker of c for d, or until deadline (or ctx ends),
// and, with wall, uploads their wall-clock profile with the case's labels.
// A failed wall-clock profile is reported, not fatal.
func (c *soakCase) slice(ctx context.Context, sess *continuous.Session, wall bool, d time.Duration, deadline time.Time) (wallErr, err error) {
	var endWall func() error
	if wall {
		endWall, wallErr = sess.Wall(c.labels)
	}
	// The turn is timed from when the tracer is on: trace.Start takes tens
	// of milliseconds on a loaded machine, which would otherwise come out
	// of the workers' time in the window (a 48 ms last slice under -race
	// had its workers in 39 of its 96 worker-milliseconds).
	end := time.Now().Add(d)
	if end.After(deadline) {
		end = deadline
	}
	_, _, err = c.lc.RunUntil(ctx, c.n, end)
	if endWall != nil {
		wallErr = endWall()
	}
	return wallErr, err
}

// quietLogger drops pyroscope-go's messages: its failures are counted in
// the session's Stats, which the soak reports.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Debugf(string, ...any) {}
func (quietLogger) Errorf(string, ...any) {}
