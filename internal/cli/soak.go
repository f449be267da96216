package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/perflab/perflab/continuous"
	"github.com/perflab/perflab/internal/lab"
	"github.com/perflab/perflab/internal/pyroscope"
	"github.com/perflab/perflab/internal/report"
	"github.com/spf13/cobra"
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
				return usagef(errors.New("name one scenario to soak (see " + io.cmd("list") + ")"))
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

func soakRun(ctx context.Context, io *IO, o *SoakOptions) error {
	url, tenant, user, password := pyroscopeServer(o.URL, o.TenantID, o.User, o.Password)
	req := lab.SoakRequest{
		Scenario: o.Scenario, Params: o.Params, Variants: o.Variants, Threads: o.Threads,
		Duration: o.Duration, Slice: o.Slice, UploadRate: o.UploadRate, NoWall: o.NoWall,
		URL: url, ServiceName: o.ServiceName, TenantID: tenant, User: user, Password: password, Labels: o.Labels,
		Cmd: io.Cmd,
	}
	res, err := lab.Soak(ctx, req, func(e lab.SoakEvent) { soakProgress(io, e) })
	if err := labUsage(err); isUsageError(err) {
		return err
	}
	if res != nil {
		fmt.Fprintf(io.Out, "soak of %s: %s over %v; %s\n", res.Scenario, report.Count(res.Slices, "slice"), res.Elapsed.Round(time.Second), res.Stats)
		if res.Stats.LastError != "" {
			fmt.Fprintf(io.Out, "last upload error: %s\n", res.Stats.LastError)
		}
		if errors.Is(res.UploadErr, continuous.ErrUnfinished) {
			fmt.Fprintln(io.Out, "some uploads had not finished after 10 s and were dropped")
		}
		fmt.Fprintf(io.Out, "query: %s\n", res.Selector)
	}
	switch {
	case err != nil:
		return err
	case ctx.Err() != nil:
		if res != nil && res.Stats.SentTotal() == 0 {
			return &ExitError{Code: exitInterrupted, Err: errors.New("interrupted before any profile reached the server (see the last upload error)")}
		}
		return &ExitError{Code: exitInterrupted, Err: errors.New("interrupted: the profiles made so far are uploaded")}
	}
	return nil
}

// soakProgress writes a soak's progress on stderr.
func soakProgress(io *IO, e lab.SoakEvent) {
	switch e.Kind {
	case lab.SoakSkipped:
		fmt.Fprintf(io.Err, "perflab: soak: skipping %s: %v\n", e.Case, e.Err)
	case lab.SoakStarted:
		fmt.Fprintf(io.Err, "perflab: soak %s: %s round-robin, %v each, for %v, to %s as %s (Ctrl-C stops)\n",
			e.Scenario, report.Count(e.Cases, "case"), e.Slice, e.Duration, e.URL, e.Selector)
	case lab.SoakSlice:
		line := fmt.Sprintf("perflab: soak %s/%s ran %s; uploads: %s", clock(e.Elapsed), clock(e.Duration), e.Case, e.Stats)
		if e.Err != nil {
			line += "; wall-clock profile: " + e.Err.Error()
		}
		fmt.Fprintln(io.Err, line)
	}
}

// clock formats d as m:ss.
func clock(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}
