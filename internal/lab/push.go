package lab

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/pyroscope"
	"github.com/perflab/perflab/internal/store"
)

// PushRequest is what `perflab push` and `perflab run --push` ask for: the
// Pyroscope server (its URL and credentials already taken from flags or
// the environment) and what to send.
type PushRequest struct {
	URL, TenantID, User, Password string
	// Timeout bounds the push of one profile, retries and waits included
	// (0: pyroscope.DefaultTimeout; negative is refused).
	Timeout time.Duration
	// TimeoutFlag is the flag that set Timeout, which its refusal names
	// ("--timeout" if empty; perflab run's is --push-timeout).
	TimeoutFlag string
	ServiceName string
	// Labels are extra labels on every profile, name=value.
	Labels []string
	// Timestamp files the profiles under their capture time ("profile" or
	// "") or under the time of the push ("now").
	Timestamp string
	// Profile limits the kinds sent (wall, cpu, mutex, block); nil sends
	// every stored kind.
	Profile []string
	// Cmd is how the user runs perflab ("perflab", "go run ."), for the
	// hint of a failed push that names the command to send it again; ""
	// is perflab.
	Cmd string
}

// Pusher is a checked PushRequest, ready to send runs.
type Pusher struct {
	c    *pyroscope.Client
	opts pyroscope.PushOptions
	cmd  string // PushRequest.Cmd
}

// PlanPush checks a push request before anything is read or sent: what the
// user got wrong is a *PlanError (ErrNoServer for no URL).
func PlanPush(req PushRequest) (*Pusher, error) {
	if req.Timeout < 0 {
		flag := req.TimeoutFlag
		if flag == "" {
			flag = "--timeout"
		}
		return nil, planErr(fmt.Errorf("%s %v: give how long one profile may take, such as 30s", flag, req.Timeout))
	}
	if req.URL == "" {
		return nil, planErr(ErrNoServer)
	}
	c, err := pyroscope.New(req.URL, pyroscope.Config{TenantID: req.TenantID, BasicAuthUser: req.User, BasicAuthPassword: req.Password, Timeout: req.Timeout})
	if err != nil {
		return nil, planErr(err)
	}
	// The service name as the server checks it: "a b" was refused only
	// once the push had begun.
	if req.ServiceName != "" {
		if err := pyroscope.ValidServiceName(req.ServiceName); err != nil {
			return nil, planErr(fmt.Errorf("--service-name: %w", err))
		}
	}
	// The labels as soak checks them: `--label variant=x` was refused
	// only once the push had begun (exit 1 after "pushing run…").
	labels, err := parseLabels(req.Labels, req.ServiceName)
	if err != nil {
		return nil, planErr(err)
	}
	opts := pyroscope.PushOptions{ServiceName: req.ServiceName, Kinds: req.Profile, Labels: labels}
	kinds := []string{"wall", "cpu", "mutex", "block"}
	for _, k := range req.Profile {
		if pyroscope.ProfileTypes(k) == nil {
			return nil, planErr(fmt.Errorf("--profile %q: unknown profile%s (want wall, cpu, mutex or block)", k, didYouMean(k, kinds)))
		}
	}
	switch req.Timestamp {
	case "profile", "":
	case "now":
		opts.Stamp = time.Now()
	default:
		return nil, planErr(fmt.Errorf("--timestamp %q: want profile or now", req.Timestamp))
	}
	return &Pusher{c: c, opts: opts, cmd: req.Cmd}, nil
}

// Check checks the request's labels against run's, as Push will: a label
// named like one of its scenario's parameters is a *PlanError, found
// before anything is sent.
func (p *Pusher) Check(run *model.Run) error {
	if _, err := pyroscope.UserLabels(run, p.opts.Labels); err != nil {
		return planErr(err)
	}
	return nil
}

// URL is the server's URL, without user information.
func (p *Pusher) URL() string { return p.c.URL() }

// Push sends every stored profile of run, labelled as pyroscope.CaseLabels
// says; progress, if not nil, gets a line per profile as it is sent. The
// summary says what was sent and what failed; the run is never changed, so
// a failed push can be repeated.
func (p *Pusher) Push(ctx context.Context, st *store.Store, run *model.Run, progress io.Writer) (pyroscope.Summary, error) {
	opts := p.opts
	opts.Progress = progress
	opts.Again = CommandLine(p.cmd, "push "+run.ID+StoreArg(st.Root)+" --url ...")
	return pyroscope.PushRun(ctx, p.c, st, run, opts)
}
