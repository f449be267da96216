package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/trace"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/lab"
	"github.com/perflab/perflab/internal/pyroscope"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/runner"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/wallclock"
	"github.com/perflab/perflab/profiles"
	"github.com/spf13/cobra"

	pyroscopego "github.com/grafana/pyroscope-go"
)

// SoakOptions are the flags of `perflab soak`.
type SoakOptions struct {
	Scenario    string
	Params      []string
	Variants    []string
	Threads     []int
	Duration    time.Duration
	Slice       time.Duration
	UploadRate  time.Duration
	NoWall      bool
	URL         string
	ServiceName string
	TenantID    string
	User        string
	Password    string
	Labels      []string
}

func newSoakCmd(io *IO, runF runFunc[SoakOptions]) *cobra.Command {
	opts := &SoakOptions{}
	cmd := &cobra.Command{
		Use:   "soak <scenario> --url URL",
		Short: "Run a scenario's cases continuously under pyroscope-go's profiler, for Pyroscope",
		Long: `Run the chosen cases of a scenario round-robin, --slice each, for --duration, under
pyroscope-go's continuous profiler (CPU, allocations, in-use memory, goroutines, mutex,
block), each case's work labelled as perflab push labels it (scenario, variant, its
parameters, threads, run_id, commit, goos, goarch). Every slice also makes the exact
wall-clock profile of the case's workers from the execution tracer, sent as Pyroscope's
wall type with the same labels, so flame --from-pyroscope and serve --pyroscope split
it into work, lock, wait and the rest.

This is a profiling session, not a measurement: nothing is timed or stored, and the
profilers run all along (one CPU profiler per process: perflab run never runs one
beside its timing). Allocation, mutex and block profiles carry no goroutine labels in
Go, so they are labelled per session (run_id), not per case.

Progress goes to stderr; Ctrl-C stops after uploading what was made.`,
		Example: `  scripts/pyroscope.sh start
  perflab soak cipher-cache --variant mutex,sharded -p keys=1024 --duration 10m --url http://127.0.0.1:4040
  perflab flame --from-pyroscope http://127.0.0.1:4040 --query '{service_name="perflab",scenario="cipher-cache"}' --profile-type wall -o soak.html`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef(errors.New("name one scenario to soak (see perflab list)"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Scenario = args[0]
			return runF.or(soakRun)(cmd.Context(), io, opts)
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&opts.Params, "param", "p", nil, "parameter values, `name=v1,v2` (repeatable; threads=… also works)")
	f.StringSliceVar(&opts.Variants, "variant", nil, "variants to run (default all)")
	f.IntSliceVar(&opts.Threads, "threads", nil, "worker goroutines per case (default the scenario's)")
	f.DurationVar(&opts.Duration, "duration", 10*time.Minute, "how long to soak")
	f.DurationVar(&opts.Slice, "slice", 5*time.Second, "how long each case runs at its turn (one wall-clock profile each)")
	f.DurationVar(&opts.UploadRate, "upload-rate", 15*time.Second, "pyroscope-go's upload period")
	f.BoolVar(&opts.NoWall, "no-wall", false, "do not make wall-clock profiles (no execution tracer)")
	f.StringVar(&opts.URL, "url", "", "Pyroscope server URL (default $"+envPyroscopeURL+")")
	f.StringVar(&opts.ServiceName, "service-name", pyroscope.DefaultServiceName, "service_name label")
	f.StringVar(&opts.TenantID, "tenant-id", "", "tenant id, sent as X-Scope-OrgID (default $"+envPyroscopeTenant+")")
	f.StringVar(&opts.User, "basic-auth-user", "", "basic auth user (default $"+envPyroscopeUser+")")
	f.StringVar(&opts.Password, "basic-auth-password", "", "basic auth password (default $"+envPyroscopePassword+")")
	f.StringArrayVar(&opts.Labels, "label", nil, "extra label `name=value` on every profile (repeatable)")
	return cmd
}

// soakRegion is the runtime/trace region around each soak worker's Run: the
// wall-clock profile counts only the case's workers, as a run's does.
const soakRegion = "perflab.soak"

// soakCase is one case of a soak, set up once.
type soakCase struct {
	name    string
	labels  map[string]string // as push sends them, with --label
	tags    pyroscopego.LabelSet
	workers []perflab.Worker
	n       int // operations per Run call, about 10 ms
	closer  io.Closer
}

func soakRun(ctx context.Context, io *IO, o *SoakOptions) error {
	s, err := perflab.Lookup(o.Scenario)
	if err != nil {
		return usagef(err)
	}
	_, specs, err := lab.Select(s, o.Params, o.Variants, o.Threads)
	if err != nil {
		return usagef(err)
	}
	switch {
	case o.Duration <= 0:
		return usagef(fmt.Errorf("--duration %v: want a positive duration", o.Duration))
	case o.Slice <= 0:
		return usagef(fmt.Errorf("--slice %v: want a positive duration", o.Slice))
	case o.UploadRate < time.Second:
		return usagef(fmt.Errorf("--upload-rate %v: want 1s or more", o.UploadRate))
	}
	or := func(v, env string) string {
		if v != "" {
			return v
		}
		return os.Getenv(env)
	}
	url := or(o.URL, envPyroscopeURL)
	if url == "" {
		return usagef(fmt.Errorf("no Pyroscope server: pass --url (or set $%s); `scripts/pyroscope.sh start` runs one locally", envPyroscopeURL))
	}
	pcfg := pyroscope.Config{TenantID: or(o.TenantID, envPyroscopeTenant), BasicAuthUser: or(o.User, envPyroscopeUser), BasicAuthPassword: or(o.Password, envPyroscopePassword)}
	if _, err := pyroscope.New(url, pcfg); err != nil {
		return usagef(err)
	}
	extra := map[string]string{}
	for _, l := range o.Labels {
		name, value, ok := strings.Cut(l, "=")
		if !ok || name == "" {
			return usagef(fmt.Errorf("--label %q: want name=value", l))
		}
		extra[name] = value
	}
	rules := profiles.DefaultRules()
	if len(s.Work) > 0 {
		if rules, err = rules.WithWork(s.Work...); err != nil {
			return err
		}
	}

	// The labels of push: CaseLabels of a run that is this session.
	started := time.Now()
	run := &store.Run{ID: store.NewID(started, s.Name) + "-soak", Scenario: s.Name, Env: runner.Environment()}
	for _, sp := range specs {
		run.Cases = append(run.Cases, store.Case{Name: s.CaseName(sp), Variant: sp.Variant, Params: sp.Params, Threads: sp.Threads})
	}
	extra, err = pyroscope.UserLabels(run, extra)
	if err != nil {
		return usagef(err)
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
			if c.closer != nil {
				c.closer.Close()
			}
		}
	}()
	for i, sp := range specs {
		labels := pyroscope.CaseLabels(run, &run.Cases[i])
		for k, v := range extra {
			labels[k] = v
		}
		all := pyroscope.SDKLabels()
		for k, v := range labels {
			all[k] = v
		}
		if err := pyroscope.DefaultLimits.CheckLabels(o.ServiceName, all); err != nil {
			return usagef(fmt.Errorf("case %s: %w", run.Cases[i].Name, err))
		}
		c, err := newSoakCase(s, sp, labels)
		if errors.Is(err, perflab.ErrNotApplicable) {
			fmt.Fprintf(io.Err, "perflab: soak: skipping %s: %v\n", run.Cases[i].Name, err)
			continue
		}
		if err != nil {
			return fmt.Errorf("case %s: %w", run.Cases[i].Name, err)
		}
		c.name = run.Cases[i].Name
		cases = append(cases, c)
	}
	if len(cases) == 0 {
		return fmt.Errorf("no case of %s applies to this selection", s.Name)
	}

	bg, err := pyroscope.NewBackground(url, pcfg, nil)
	if err != nil {
		return usagef(err)
	}
	defer bg.Stop()
	prevMutex := runtime.SetMutexProfileFraction(5)
	runtime.SetBlockProfileRate(10_000)
	defer func() {
		runtime.SetMutexProfileFraction(prevMutex)
		runtime.SetBlockProfileRate(0)
	}()
	rc := bg.RemoteConfig(nil)
	prof, err := pyroscopego.Start(pyroscopego.Config{
		ApplicationName:   o.ServiceName,
		Tags:              session,
		ServerAddress:     rc.Address,
		BasicAuthUser:     rc.BasicAuthUser,
		BasicAuthPassword: rc.BasicAuthPassword,
		TenantID:          rc.TenantID,
		UploadRate:        o.UploadRate,
		Logger:            bg.Logger(),
		HTTPClient:        bg.HTTPClient("pyroscope-go"),
		ProfileTypes: []pyroscopego.ProfileType{
			pyroscopego.ProfileCPU,
			pyroscopego.ProfileAllocObjects, pyroscopego.ProfileAllocSpace,
			pyroscopego.ProfileInuseObjects, pyroscopego.ProfileInuseSpace,
			pyroscopego.ProfileGoroutines,
			pyroscopego.ProfileMutexCount, pyroscopego.ProfileMutexDuration,
			pyroscopego.ProfileBlockCount, pyroscopego.ProfileBlockDuration,
		},
	})
	if err != nil {
		return err
	}

	selector := fmt.Sprintf(`{service_name=%q,run_id=%q}`, o.ServiceName, run.ID)
	fmt.Fprintf(io.Err, "perflab: soak %s: %s round-robin, %v each, for %v, to %s as %s (Ctrl-C stops)\n",
		s.Name, report.Count(len(cases), "case"), o.Slice, o.Duration, redactURL(url), selector)
	deadline := started.Add(o.Duration)
	slices := 0
	var runErr error
	for i := 0; ctx.Err() == nil && time.Now().Before(deadline); i++ {
		c := cases[i%len(cases)]
		end := time.Now().Add(o.Slice)
		if end.After(deadline) {
			end = deadline
		}
		wallErr, err := c.slice(ctx, end, !o.NoWall, rules, bg, o.ServiceName)
		if err != nil {
			runErr = fmt.Errorf("case %s: %w", c.name, err)
			break
		}
		slices++
		line := fmt.Sprintf("perflab: soak %s/%s ran %s; uploads: %s", clock(time.Since(started)), clock(o.Duration), c.name, bg.Stats())
		if wallErr != nil {
			line += "; wall-clock profile: " + wallErr.Error()
		}
		fmt.Fprintln(io.Err, line)
	}

	// Upload what pyroscope-go has and wait for every upload, 15 s at
	// most in all: what is still in flight then is aborted.
	flushed := bg.Close(15*time.Second, func() { prof.Flush(true) }, func() { prof.Stop() })
	st := bg.Stats()
	fmt.Fprintf(io.Out, "soak of %s: %s over %v; %s\n", s.Name, report.Count(slices, "slice"), time.Since(started).Round(time.Second), st)
	if st.LastError != "" {
		fmt.Fprintf(io.Out, "last upload error: %s\n", st.LastError)
	}
	if !flushed {
		fmt.Fprintln(io.Out, "some uploads had not finished after 15 s and were dropped")
	}
	fmt.Fprintf(io.Out, "query: %s\n", selector)
	switch {
	case runErr != nil:
		return runErr
	case st.SentTotal() == 0:
		return fmt.Errorf("no profile reached %s (%s)", redactURL(url), st.LastError)
	case ctx.Err() != nil:
		return &ExitError{Code: exitInterrupted, Err: errors.New("interrupted: the profiles made so far are uploaded")}
	}
	return nil
}

// newSoakCase builds a case's state and workers and sizes its Run calls.
func newSoakCase(s *perflab.Scenario, sp perflab.CaseSpec, labels map[string]string) (*soakCase, error) {
	v, err := s.Variant(sp.Variant)
	if err != nil {
		return nil, err
	}
	cs, err := v.New(sp.Params)
	if err != nil {
		return nil, err
	}
	c := &soakCase{labels: labels, n: 1}
	if cl, ok := cs.(io.Closer); ok {
		c.closer = cl
	}
	kv := make([]string, 0, 2*len(labels))
	for _, k := range sortedLabelNames(labels) {
		kv = append(kv, k, labels[k])
	}
	c.tags = pyroscopego.Labels(kv...)
	for id := 0; id < sp.Threads; id++ {
		c.workers = append(c.workers, cs.NewWorker(id))
	}
	// Run calls of about 10 ms: short enough to end a slice on time, long
	// enough that the loop around them is nothing.
	for c.n < 1<<30 {
		t0 := time.Now()
		if err := soakRunOnce(c.workers[0], c.n); err != nil {
			return nil, err
		}
		if d := time.Since(t0); d >= 10*time.Millisecond {
			break
		}
		c.n *= 2
	}
	return c, nil
}

func soakRunOnce(w perflab.Worker, n int) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("worker panicked: %v\n%s", v, debug.Stack())
		}
	}()
	w.Run(n)
	return nil
}

// slice runs every worker of c until end (or ctx ends) under the case's
// labels, with the tracer on when wall is set, and uploads the workers'
// wall-clock profile. A failed wall-clock profile is reported, not fatal.
func (c *soakCase) slice(ctx context.Context, end time.Time, wall bool, rules *profiles.Rules, bg *pyroscope.Background, service string) (wallErr, err error) {
	var pr *io.PipeReader
	var pw *io.PipeWriter
	parsed := make(chan error, 1)
	var res *wallclock.Result
	start := time.Now()
	if wall {
		pr, pw = io.Pipe()
		go func() {
			var err error
			res, err = wallclock.FromTrace(pr, wallclock.Options{Region: soakRegion, Rules: rules})
			pr.CloseWithError(err)
			parsed <- err
		}()
		if err := trace.Start(pw); err != nil {
			pw.Close()
			<-parsed
			wall, wallErr = false, err
		}
	}
	errs := make([]error, len(c.workers))
	var wg sync.WaitGroup
	for i, w := range c.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pyroscopego.TagWrapper(ctx, c.tags, func(ctx context.Context) {
				for ctx.Err() == nil && time.Now().Before(end) {
					r := trace.StartRegion(ctx, soakRegion)
					err := soakRunOnce(w, c.n)
					r.End()
					if err != nil {
						errs[i] = err
						return
					}
				}
			})
		}()
	}
	wg.Wait()
	if wall {
		trace.Stop()
		stop := time.Now()
		pw.Close()
		if err := <-parsed; err != nil {
			wallErr = err
		} else {
			wallErr = bg.Upload(pyroscope.KindWall, service, c.labels, res.Profile, start, stop)
		}
	}
	return wallErr, errors.Join(errs...)
}

func sortedLabelNames(m map[string]string) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// clock formats d as m:ss.
func clock(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

// redactURL drops the user information of a URL for messages.
func redactURL(raw string) string {
	if c, err := pyroscope.New(raw, pyroscope.Config{}); err == nil {
		return c.URL()
	}
	return raw
}
