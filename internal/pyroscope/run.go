package pyroscope

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/profiles"
)

// DefaultServiceName is the service_name label runs are pushed under.
const DefaultServiceName = "perflab"

// PushOptions says what PushRun sends.
type PushOptions struct {
	// ServiceName defaults to DefaultServiceName.
	ServiceName string
	// Labels are added to every profile (names are made valid with
	// LabelName). PushRun refuses, before sending anything, labels that
	// clash with each other or with perflab's own, rather than drop one.
	Labels map[string]string
	// Stamp, when not zero, replaces every profile's start time (see
	// Upload.Stamp).
	Stamp time.Time
	// Kinds limits the profile kinds sent; nil sends every stored kind.
	Kinds []string
	// Progress, when not nil, gets one line per profile as it is sent.
	Progress io.Writer
	// Again is the command line that sends the run again, which the
	// error of a push that failed names ("perflab push ID --url ...";
	// "go run . push ..." in a module from perflab new); none if "".
	Again string
}

// Result is the outcome of pushing one stored profile.
type Result struct {
	Case     string
	Kind     string
	Bytes    int // size of the stored .pb.gz
	Attempts int
	// Empty is set for a profile with no samples (say, the mutex profile
	// of a lock-free variant): Pyroscope would drop it, so it is not sent,
	// and that is not a failure.
	Empty bool
	Err   error // nil when sent or empty
}

// Summary says what PushRun sent.
type Summary struct {
	URL         string
	RunID       string
	ServiceName string
	Results     []Result
	// Skipped lists cases with no profiles to send, with the reason.
	Skipped []string
}

// Sent returns the number of profiles the server accepted.
func (s *Summary) Sent() int {
	n := 0
	for _, r := range s.Results {
		if r.Err == nil && !r.Empty {
			n++
		}
	}
	return n
}

func (s *Summary) empty() int {
	n := 0
	for _, r := range s.Results {
		if r.Empty {
			n++
		}
	}
	return n
}

// Selector returns the label selector that finds this run's profiles.
func (s *Summary) Selector() string {
	return fmt.Sprintf(`{service_name=%q,run_id=%q}`, s.ServiceName, s.RunID)
}

// Write prints the summary: one line per profile, then totals and how to
// query what was sent.
func (s *Summary) Write(w io.Writer) { s.write(w, false) }

// WriteBrief prints only the profiles that failed, then the totals: what
// `perflab run --push` shows after the run's own output, where a line for
// each of a run's hundreds of profiles would bury both.
func (s *Summary) WriteBrief(w io.Writer) { s.write(w, true) }

func (s *Summary) write(w io.Writer, brief bool) {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	header := false
	notAttempted := 0
	for _, r := range s.Results {
		// Once the server is unreachable (or refuses our credentials)
		// every later profile would get the same line: count them instead.
		if errors.Is(r.Err, errNotAttempted) {
			notAttempted++
			continue
		}
		if brief && r.Err == nil {
			continue
		}
		if !header {
			fmt.Fprintln(tw, "case\tprofile\tbytes\tresult")
			header = true
		}
		res := "sent"
		if r.Attempts > 1 {
			res += fmt.Sprintf(" (%d attempts)", r.Attempts)
		}
		if r.Empty {
			res = "empty, not sent"
		}
		if r.Err != nil {
			res = "FAILED: " + strings.ReplaceAll(r.Err.Error(), "\n", " ")
		}
		// Case names come from run.json, errors from the server's
		// answer: neither reaches the terminal raw.
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", report.Safe(r.Case), report.Safe(r.Kind), r.Bytes, report.Safe(res))
	}
	tw.Flush()
	if notAttempted > 0 {
		fmt.Fprintf(w, "%d more profiles not attempted after that failure\n", notAttempted)
	}
	if !brief {
		for _, sk := range s.Skipped {
			fmt.Fprintf(w, "skipped %s\n", report.Safe(sk))
		}
	}
	msg := fmt.Sprintf("%d of %d profiles sent to %s as %s", s.Sent(), len(s.Results)-s.empty(), s.URL, s.Selector())
	if brief && s.empty() > 0 {
		msg += fmt.Sprintf(" (empty, so not sent: %d)", s.empty())
	}
	fmt.Fprintln(w, msg)
}

// CaseLabels returns the labels perflab puts on a case's profiles:
// scenario, variant, one per parameter, threads, run_id, commit, goos and
// goarch. Parameter names are made valid with LabelName; one that would
// clash with another label is prefixed "param_".
func CaseLabels(run *model.Run, c *model.Case) map[string]string {
	ls := map[string]string{
		"scenario": run.Scenario,
		"variant":  c.Variant,
		"run_id":   run.ID,
		"goos":     run.Env.GOOS,
		"goarch":   run.Env.GOARCH,
	}
	if run.Env.Commit != "" {
		ls["commit"] = run.Env.Commit
	}
	if c.Threads > 0 {
		ls["threads"] = strconv.Itoa(c.Threads)
	}
	reserved := func(n string) bool {
		_, taken := ls[n]
		return taken || serverLabels[n] || n == "threads" || n == "commit"
	}
	names := make([]string, 0, len(c.Params))
	for k := range c.Params {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		n := LabelName(k)
		for reserved(n) {
			n = "param_" + n
		}
		ls[n] = c.Params[k]
	}
	for k, v := range ls {
		if v == "" {
			delete(ls, k)
		}
	}
	return ls
}

// serverLabels are the label names the server sets on every profile it
// ingests; a profile that has one too is refused ("duplicate label name").
var serverLabels = map[string]bool{"service_name": true, "pyroscope_spy": true}

// userLabels makes the names of the extra labels valid and checks that they
// name neither the same label twice nor one perflab or the server sets on
// any case of run.
func userLabels(run *model.Run, extra map[string]string) (map[string]string, error) {
	names := make([]string, 0, len(extra))
	for k := range extra {
		names = append(names, k)
	}
	sort.Strings(names)
	out := map[string]string{}
	from := map[string]string{}
	for _, k := range names {
		n := LabelName(k)
		switch {
		case n == "service_name":
			return nil, fmt.Errorf("label %q: the service name is set with --service-name", k)
		case serverLabels[n]:
			return nil, fmt.Errorf("label %q: the server sets %s itself", k, n)
		case from[n] != "":
			return nil, fmt.Errorf("labels %q and %q are both sent as %s (label names may only use letters, digits and _)", from[n], k, n)
		}
		out[n], from[n] = extra[k], k
	}
	for i := range run.Cases {
		for n, v := range CaseLabels(run, &run.Cases[i]) {
			if k := from[n]; k != "" {
				return nil, fmt.Errorf("label %q: perflab labels every profile with %s itself (%s=%q on case %s)", k, n, n, v, run.Cases[i].Name)
			}
		}
	}
	return out, nil
}

// errNotAttempted marks profiles not sent because the server was found
// unreachable, or refused our credentials, before their turn.
var errNotAttempted = errors.New("not attempted after the failure above")

var kindOrder = func() map[string]int {
	// The store's one list of profile kinds, in its order.
	m := map[string]int{}
	for i, k := range model.ProfileKinds {
		m[k] = i
	}
	return m
}()

// PushRun sends every stored profile of run to the server. It goes on after
// a profile is refused, stops early when the server cannot be reached or
// refuses our credentials, and returns an error when anything was not sent;
// the Summary says what was. The run itself is only read.
func PushRun(ctx context.Context, c *Client, st *store.Store, run *model.Run, opts PushOptions) (Summary, error) {
	if opts.ServiceName == "" {
		opts.ServiceName = DefaultServiceName
	}
	sum := Summary{URL: c.URL(), RunID: run.ID, ServiceName: opts.ServiceName}
	if err := ValidServiceName(opts.ServiceName); err != nil {
		return sum, err
	}
	extra, err := userLabels(run, opts.Labels)
	if err != nil {
		return sum, err
	}
	want := map[string]bool{}
	for _, k := range opts.Kinds {
		want[k] = true
	}
	var stop error // set when no later profile can be sent
	for i := range run.Cases {
		cs := &run.Cases[i]
		kinds := make([]string, 0, len(cs.Profiles))
		for k := range cs.Profiles {
			// fgprof is a second wall-clock profile of the same case: sent
			// under the same labels it would merge with the exact one from
			// the tracer, so it goes only when asked for by name.
			if (len(want) == 0 && k != KindFgprof) || want[k] {
				kinds = append(kinds, k)
			}
		}
		if len(kinds) == 0 {
			reason := "no profiles stored"
			if cs.Status != "" && cs.Status != model.StatusOK {
				reason = "case " + string(cs.Status)
			}
			sum.Skipped = append(sum.Skipped, cs.Name+": "+reason)
			continue
		}
		sort.Slice(kinds, func(a, b int) bool {
			ra, oka := kindOrder[kinds[a]]
			rb, okb := kindOrder[kinds[b]]
			if oka != okb {
				return oka
			}
			if ra != rb {
				return ra < rb
			}
			return kinds[a] < kinds[b]
		})
		labels := map[string]string{}
		for k, v := range extra {
			labels[k] = v
		}
		for k, v := range CaseLabels(run, cs) {
			labels[k] = v
		}
		for _, kind := range kinds {
			r := Result{Case: cs.Name, Kind: kind}
			notAttempted := stop != nil
			if notAttempted {
				r.Err = errNotAttempted
			} else {
				r.Bytes, r.Attempts, r.Empty, r.Err = pushStored(ctx, c, st, run.ID, cs.Profiles[kind], Upload{
					Kind:        kind,
					ServiceName: opts.ServiceName,
					Labels:      labels,
					Stamp:       opts.Stamp,
					Started:     run.Started,
				})
				if unreachable(r.Err) || unauthorized(r.Err) || rateLimited(r.Err) || ctx.Err() != nil {
					stop = r.Err
				}
			}
			sum.Results = append(sum.Results, r)
			if opts.Progress != nil && !notAttempted {
				switch {
				case r.Err != nil:
					fmt.Fprintf(opts.Progress, "push %s %s: %s\n", report.Safe(cs.Name), report.Safe(kind), report.Safe(r.Err.Error()))
				case r.Empty:
					fmt.Fprintf(opts.Progress, "push %s %s: empty, not sent\n", report.Safe(cs.Name), report.Safe(kind))
				default:
					fmt.Fprintf(opts.Progress, "push %s %s: sent\n", report.Safe(cs.Name), report.Safe(kind))
				}
			}
		}
	}
	if len(sum.Results) == 0 {
		return sum, fmt.Errorf("run %s has no stored profiles to push", run.ID)
	}
	if failed := len(sum.Results) - sum.Sent() - sum.empty(); failed > 0 {
		var first error
		for _, r := range sum.Results {
			if r.Err != nil {
				first = r.Err
				break
			}
		}
		if stop != nil {
			first = stop
		}
		again := ""
		if opts.Again != "" {
			again = "; `" + opts.Again + "` sends it again"
		}
		return sum, fmt.Errorf("%d of %d profiles of run %s not sent to %s: %w (the run is still stored%s)",
			failed, len(sum.Results)-sum.empty(), run.ID, c.URL(), first, again)
	}
	return sum, nil
}

// pushLimits bound what push reads of one stored profile, with the reader
// every profile goes through (profiles.ReadLimited): a run directory is
// untrusted input, and a 4 MB gzip bomb in one must be refused, not take
// the pushing process's memory. Push holds one profile at a time; the
// limits are those of every other path that parses a profile (flame,
// serve, a Pyroscope answer), profiles' defaults.
var pushLimits = profiles.Limits{}

// pushStored reads one stored profile through the store, which refuses
// symbolic links, files that are not regular and paths out of the run, and
// pushes it. A panic while preparing a hostile profile is that profile's
// failure, not the push's end.
func pushStored(ctx context.Context, c *Client, st *store.Store, runID, rel string, u Upload) (size, attempts int, empty bool, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%s: corrupt profile (%v)", rel, v)
		}
	}()
	f, fi, err := st.OpenFile(runID, rel)
	if err != nil {
		return 0, 0, false, err
	}
	defer f.Close()
	size = int(fi.Size())
	p, err := profiles.ReadLimited(f, pushLimits)
	if err != nil {
		return size, 0, false, fmt.Errorf("%s: %w", rel, err)
	}
	if len(p.Sample) == 0 {
		// The server drops profiles without samples (phlaredb Head.Ingest)
		// and still answers 200: report them as empty, not as sent.
		return size, 0, true, nil
	}
	u.Profile = p
	attempts, err = c.Push(ctx, u)
	return size, attempts, false, err
}
