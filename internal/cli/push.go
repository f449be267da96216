package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/perflab/perflab/internal/lab"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/pyroscope"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/web"
	"github.com/spf13/cobra"
)

// Environment variables that configure the Pyroscope server for
// `perflab push` and `perflab run --push`; flags override them. Keeping the
// password in the environment keeps it out of the process list and shell
// history.
const (
	envPyroscopeURL      = "PERFLAB_PYROSCOPE_URL"
	envPyroscopeTenant   = "PERFLAB_PYROSCOPE_TENANT_ID"
	envPyroscopeUser     = "PERFLAB_PYROSCOPE_USER"
	envPyroscopePassword = "PERFLAB_PYROSCOPE_PASSWORD"
)

// PushOptions are the flags of `perflab push`.
type PushOptions struct {
	Run         string
	URL         string
	Out         string
	ServiceName string
	TenantID    string
	User        string
	Password    string
	Labels      []string // name=value
	Timestamp   string   // profile or now
	Profile     []string // kinds to send
	// Timeout bounds the push of one profile, retries and waits included.
	Timeout time.Duration
}

func newPushCmd(io *IO, runF runFunc[PushOptions]) *cobra.Command {
	opts := &PushOptions{}
	cmd := &cobra.Command{
		Use:   "push [run-id] --url URL",
		Short: "Send a stored run's profiles to a Grafana Pyroscope server",
		Long: `Send every profile of a stored run (default the latest) to a Pyroscope server, each
labelled with service_name, scenario, variant, its parameters, threads, run_id,
commit, goos and goarch. Wall-clock profiles arrive as Pyroscope's wall type
(wall:wall:nanoseconds:wall:nanoseconds), CPU as process_cpu, and mutex and block
under their own names.

Failed uploads are retried when the failure may pass (network, 429, 5xx) and
reported, waiting before retries 10 s at most in all for the whole push (a server
that still asks to wait then stops it); the run itself is never changed, so a
failed push can be repeated.
Pyroscope refuses profiles older than its ingestion window (1h by default): push
an older run with --timestamp now.

The server can also be set with $` + envPyroscopeURL + `, $` + envPyroscopeTenant + `,
$` + envPyroscopeUser + ` and $` + envPyroscopePassword + `.`,
		Example: `  scripts/pyroscope.sh start
  perflab push --url http://127.0.0.1:4040
  perflab push 20261130-101500-cipher-cache --url http://127.0.0.1:4040 --label host_class=ci`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Run = args[0]
			}
			return runF.or(pushRun)(cmd.Context(), io, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.URL, "url", "", "Pyroscope server URL (default $"+envPyroscopeURL+")")
	storeFlag(f, &opts.Out)
	f.StringVar(&opts.ServiceName, "service-name", pyroscope.DefaultServiceName, "service_name label")
	f.StringVar(&opts.TenantID, "tenant-id", "", "tenant id, sent as X-Scope-OrgID (default $"+envPyroscopeTenant+")")
	f.StringVar(&opts.User, "basic-auth-user", "", "basic auth user (default $"+envPyroscopeUser+")")
	f.StringVar(&opts.Password, "basic-auth-password", "", "basic auth password (default $"+envPyroscopePassword+")")
	f.StringArrayVar(&opts.Labels, "label", nil, "extra label `name=value` on every profile (repeatable)")
	f.StringVar(&opts.Timestamp, "timestamp", "profile", "time to file the profiles under: profile (when captured, or the run's start for one that does not say) or now")
	f.StringSliceVar(&opts.Profile, "profile", nil, "profile kinds to send: wall,cpu,mutex,block (default all stored)")
	f.DurationVar(&opts.Timeout, "timeout", pyroscope.DefaultTimeout, "longest time to spend on one profile, retries and waits included; a server that takes longer stops the push")
	return cmd
}

// pyroscopeClient makes a client to read from the server the flags name,
// falling back to the environment.
func pyroscopeClient(url, tenant, user, password string) (*pyroscope.Client, error) {
	url, tenant, user, password = pyroscopeServer(url, tenant, user, password)
	if url == "" {
		return nil, labUsage(lab.ErrNoServer)
	}
	c, err := pyroscope.New(url, pyroscope.Config{TenantID: tenant, BasicAuthUser: user, BasicAuthPassword: password})
	if err != nil {
		return nil, usagef(err)
	}
	return c, nil
}

func pushRun(ctx context.Context, io *IO, o *PushOptions) error {
	url, tenant, user, password := pyroscopeServer(o.URL, o.TenantID, o.User, o.Password)
	p, err := planPush(lab.PushRequest{URL: url, TenantID: tenant, User: user, Password: password, Timeout: o.Timeout,
		ServiceName: o.ServiceName, Labels: o.Labels, Timestamp: o.Timestamp, Profile: o.Profile, Cmd: io.Cmd})
	if err != nil {
		return err
	}
	ref, err := resolve(io, store.Open(store.Dir(o.Out)), o.Run)
	if err != nil {
		return err
	}
	if ref.Case != nil {
		return usagef(fmt.Errorf("push sends a whole run: give %s, not one of its cases", ref.Run.ID))
	}
	return pushStoredRun(ctx, io, p, ref.Store, ref.Run)
}

// pyroscopeServer is the server the flags name, falling back to the
// environment.
func pyroscopeServer(url, tenant, user, password string) (string, string, string, string) {
	or := func(v, env string) string {
		if v != "" {
			return v
		}
		return os.Getenv(env)
	}
	return or(url, envPyroscopeURL), or(tenant, envPyroscopeTenant), or(user, envPyroscopeUser), or(password, envPyroscopePassword)
}

// planPush is lab.PlanPush with its refusals as usage errors.
func planPush(req lab.PushRequest) (*lab.Pusher, error) {
	p, err := lab.PlanPush(req)
	return p, labUsage(err)
}

// labUsage makes a lab.PlanError a usage error (exit 2), saying how to
// name a Pyroscope server when there is none.
func labUsage(err error) error {
	var pe *lab.PlanError
	switch {
	case errors.Is(err, lab.ErrNoServer):
		return usagef(fmt.Errorf("no Pyroscope server: pass --url (or set $%s); `scripts/pyroscope.sh start` runs one locally", envPyroscopeURL))
	case errors.As(err, &pe):
		return usagef(err)
	}
	return err
}

// pushStoredRun pushes run for `perflab push` and prints the summary in
// full on stdout, whose result it is (run --push pushes through
// lab.MeasurePlan.Measure, and says it briefly on stderr).
func pushStoredRun(ctx context.Context, io *IO, p *lab.Pusher, st *store.Store, run *model.Run) error {
	if err := p.Check(run); err != nil {
		return labUsage(err)
	}
	fmt.Fprintf(io.Err, "perflab: pushing run %s to %s\n", run.ID, p.URL())
	progress := io.Err
	if !io.ErrIsTerminal {
		progress = nil
	}
	sum, err := p.Push(ctx, st, run, progress)
	if len(sum.Results) > 0 {
		sum.Write(io.Out)
	}
	return err
}

// The Pyroscope client is what `perflab serve --pyroscope` reads from.
var _ web.ProfileSource = (*pyroscope.Client)(nil)
