// Package pyroscope sends stored perflab runs to a Grafana Pyroscope server
// and reads merged profiles back, so lab runs can be tracked over time and
// production profiles can be seen through perflab's categories.
//
// It speaks two of Pyroscope's HTTP APIs with net/http alone:
//
//   - push: POST /ingest with a multipart pprof body, the wire format of
//     github.com/grafana/pyroscope-go/upstream/remote. We do not import that
//     package: it uploads from background goroutines, drops jobs when its
//     queue is full and only logs upload errors, while perflab must report
//     every failed upload, retry the transient ones and stop when told to.
//     Profiles made while a program runs (a soak, a service's continuous
//     profiles) are another matter: there upstream/remote's best effort is
//     right, and Background uses it, counting what it only logs.
//   - read: the Connect endpoint querier.v1.QuerierService/SelectMergeProfile,
//     whose response is a google.v1.Profile, the pprof protobuf itself, so
//     github.com/google/pprof/profile parses it unchanged.
//
// Nothing here runs inside a measured process: profiles are pushed from a
// run's store directory after the fact (DESIGN.md: never start
// pyroscope.Start in a run, it would take the single CPU profiler).
package pyroscope

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/perflab/perflab/internal/textsafe"
)

// Config holds how to reach a Pyroscope server besides its URL.
type Config struct {
	// TenantID is sent as X-Scope-OrgID, for servers with multi-tenancy on.
	TenantID string
	// BasicAuthUser and BasicAuthPassword are sent as HTTP basic auth (as
	// Grafana Cloud expects). A user:password in the URL does the same.
	BasicAuthUser     string
	BasicAuthPassword string
	// HTTPClient defaults to a client whose timeout is Timeout.
	HTTPClient *http.Client
	// Timeout bounds one request (push of one profile, or one query)
	// with all its retries and waits: a server that drips its answer, or
	// asks to come back later, costs at most this much per profile
	// (default DefaultTimeout). perflab push --timeout sets it.
	Timeout time.Duration
	// Retries is how often a transient failure (network error, 429, 5xx)
	// is retried; 0 means the default, 3; negative means never.
	Retries int
	// RetryDelay is the first wait before a retry, doubled after each
	// (default 500 ms).
	RetryDelay time.Duration
	// Limits are checked before each push; nil means DefaultLimits, and a
	// zero Limits checks nothing (for a server configured above them).
	Limits *Limits
	// MaxRetryWait bounds the time the client waits before retries, backoff
	// and Retry-After together, over every request it makes: a push of many
	// profiles to a server that keeps asking for 9 s spent 27 s per
	// profile (issue 26). Once spent, requests are tried once and a
	// rate-limited one stops the push. Default DefaultMaxRetryWait;
	// negative means no retry waits at all.
	MaxRetryWait time.Duration
	// MaxProfileAnswer bounds a merged profile the client reads (default
	// DefaultMaxProfileAnswer): a larger answer is refused unread.
	MaxProfileAnswer int64
}

// The caps on what the client reads of a server's answer (issue 26: an
// answer was read whole up to 512 MiB, error bodies too, and `flame
// --from-pyroscope` reached 2.85 GB). One rule: a body we do not need is
// read up to a small cap and dropped, an answer we parse has a stated cap
// and a larger one is an error, never cut and parsed, and what an error
// shows of a body is shortened.
const (
	// DefaultMaxProfileAnswer is Config.MaxProfileAnswer's default: a
	// merged profile. Pyroscope's merged profiles of a service are a few
	// MiB; 64 MiB compressed can still decode to profiles.MaxUncompressed.
	DefaultMaxProfileAnswer = 64 << 20
	// maxJSONAnswer bounds a JSON answer (ProfileTypes, Series).
	maxJSONAnswer = 16 << 20
	// maxErrorBody is what is read of an answer other than 200, for its
	// message (shown shortened to maxErrorText).
	maxErrorBody = 64 << 10
	// maxIgnoredBody is what is read of a 200 answer whose body is not
	// needed (a push): Pyroscope's is empty.
	maxIgnoredBody = 64 << 10
	// maxErrorText is the most of a server's message an error shows.
	maxErrorText = 600
	// DefaultMaxRetryWait is Config.MaxRetryWait's default: one
	// Retry-After at the cap (maxRetryAfter).
	DefaultMaxRetryWait = 10 * time.Second
)

// TooLargeError is an answer over the cap the client reads: refused
// unread, or read up to the cap and dropped.
type TooLargeError struct {
	What  string
	Limit int64
	// Declared is the Content-Length the server declared (-1 unknown).
	Declared int64
}

func (e *TooLargeError) Error() string {
	msg := fmt.Sprintf("the server's %s is over %s, the most perflab reads", e.What, sizeText(e.Limit))
	if e.Declared > e.Limit {
		msg = fmt.Sprintf("the server's %s is %s, over %s, the most perflab reads", e.What, sizeText(e.Declared), sizeText(e.Limit))
	}
	return msg
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// readAtMost reads r, which declares size bytes (-1: unknown), when it
// is at most limit bytes; else it refuses with a TooLargeError, before
// reading a byte if the declared size says so.
func readAtMost(r io.Reader, size, limit int64, what string) ([]byte, error) {
	if size > limit {
		return nil, &TooLargeError{What: what, Limit: limit, Declared: size}
	}
	var buf bytes.Buffer
	if size > 0 {
		buf.Grow(int(size))
	}
	n, err := buf.ReadFrom(io.LimitReader(r, limit+1))
	if n > limit {
		return nil, &TooLargeError{What: what, Limit: limit, Declared: size}
	}
	if err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Client talks to one Pyroscope server.
type Client struct {
	base *url.URL
	cfg  Config
	// waited is the time spent waiting before retries, over every
	// request (Config.MaxRetryWait).
	waited *atomic.Int64
}

// New returns a client for the server at rawURL (e.g. http://127.0.0.1:4040).
func New(rawURL string, cfg Config) (*Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Error repeats the URL, password and all.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("pyroscope URL %q: %w", redact(rawURL), err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("pyroscope URL %q: want http://host:port or https://host", redact(rawURL))
	}
	if u.User != nil {
		if cfg.BasicAuthUser == "" {
			cfg.BasicAuthUser = u.User.Username()
			cfg.BasicAuthPassword, _ = u.User.Password()
		}
		u.User = nil
	}
	u.RawQuery, u.Fragment = "", ""
	u.Path = strings.TrimSuffix(u.Path, "/")
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{
			Timeout: cfg.Timeout,
			// Like pyroscope-go: Go drops the Authorization header on a
			// redirect to another host, which turns into a confusing 401.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	switch {
	case cfg.Retries == 0:
		cfg.Retries = 3
	case cfg.Retries < 0:
		cfg.Retries = 0
	}
	if cfg.RetryDelay <= 0 {
		cfg.RetryDelay = 500 * time.Millisecond
	}
	switch {
	case cfg.MaxRetryWait == 0:
		cfg.MaxRetryWait = DefaultMaxRetryWait
	case cfg.MaxRetryWait < 0:
		cfg.MaxRetryWait = 0
	}
	if cfg.MaxProfileAnswer <= 0 {
		cfg.MaxProfileAnswer = DefaultMaxProfileAnswer
	}
	if cfg.Limits == nil {
		l := DefaultLimits
		cfg.Limits = &l
	}
	return &Client{base: u, cfg: cfg, waited: new(atomic.Int64)}, nil
}

// redact hides the user information of a URL, even one url.Parse refuses,
// so that errors never print a password: everything between "//" (or the
// start) and the last "@" before the path.
func redact(raw string) string {
	rest, prefix := raw, ""
	if i := strings.Index(raw, "//"); i >= 0 {
		prefix, rest = raw[:i+2], raw[i+2:]
	}
	auth := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		auth = rest[:i]
	}
	at := strings.LastIndex(auth, "@")
	if at < 0 {
		return raw
	}
	return prefix + "xxxxx" + rest[at:]
}

// URL returns the server's base URL, without credentials.
func (c *Client) URL() string { return c.base.String() }

func (c *Client) endpoint(path string, q url.Values) string {
	u := *c.base
	u.Path += path
	u.RawQuery = q.Encode()
	return u.String()
}

func (c *Client) authorize(req *http.Request) {
	if c.cfg.BasicAuthUser != "" || c.cfg.BasicAuthPassword != "" {
		req.SetBasicAuth(c.cfg.BasicAuthUser, c.cfg.BasicAuthPassword)
	}
	if c.cfg.TenantID != "" {
		req.Header.Set("X-Scope-OrgID", c.cfg.TenantID)
	}
	req.Header.Set("User-Agent", "perflab")
}

// StatusError is a response from the server other than 200 OK.
type StatusError struct {
	Code int
	Body string // the server's message, shortened
	// retryAfter is the server's Retry-After (429, 503), in seconds form.
	retryAfter time.Duration
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("server answered %d %s", e.Code, http.StatusText(e.Code))
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// transportError is a failure to exchange a request with the server at all:
// refused or reset connection, DNS failure, timeout.
type transportError struct {
	op  string
	err error
}

// Error says what failed, the cause shortened: net/http quotes what the
// server sent (a Location header of megabytes) in its errors.
func (e *transportError) Error() string { return e.op + ": " + shorten(e.err.Error(), maxErrorText) }
func (e *transportError) Unwrap() error { return e.err }

// transient reports whether retrying err may help: transport errors, 429
// and 5xx do; other statuses and errors do not, nor do 501 and 505 (the
// server will never handle the request) or a certificate the client does
// not trust.
func transient(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code == http.StatusTooManyRequests || ingestionLimited(se) ||
			se.Code >= 500 && se.Code != http.StatusNotImplemented && se.Code != http.StatusHTTPVersionNotSupported
	}
	var cert *tls.CertificateVerificationError
	var te *transportError
	return errors.As(err, &te) && !errors.As(err, &cert)
}

// ingestionLimited reports whether the server refused a profile because
// its ingestion rate limit was exceeded: Pyroscope v1.12 answers 422 with
// "resource_exhausted" (not 429) when more than its 4 MiB/s arrives, which
// pushing a big run back to back does; waiting helps, so it is retried.
func ingestionLimited(se *StatusError) bool {
	return se.Code == http.StatusUnprocessableEntity && strings.Contains(strings.ToLower(se.Body), "resource_exhausted")
}

// DefaultTimeout is Config.Timeout's default.
const DefaultTimeout = 30 * time.Second

// maxRetryAfter is the longest Retry-After a push waits for. A server that
// asks for longer (a rate limit of an hour) is not waited on: the profile
// fails at once, saying when the server wants to be asked again, and the
// push stops, since every later profile would be refused the same way
// (issue 14: a long Retry-After cost up to 90 s per profile).
const maxRetryAfter = 10 * time.Second

// rateLimited reports whether err is a refusal whose Retry-After is
// beyond what a push waits for, or one that asks to come back later once
// the client has waited all it will (Config.MaxRetryWait): every later
// profile would be refused the same way.
func rateLimited(err error) bool {
	var se *StatusError
	if !errors.As(err, &se) {
		return false
	}
	var spent *retryWaitSpent
	return se.retryAfter > maxRetryAfter || errors.As(err, &spent) && (se.Code == http.StatusTooManyRequests || ingestionLimited(se))
}

// retryWaitSpent is a transient failure not retried because the client
// has waited Config.MaxRetryWait in all.
type retryWaitSpent struct {
	err         error
	waited, max time.Duration
	wait        time.Duration
}

func (e *retryWaitSpent) Error() string {
	return fmt.Sprintf("%v (not retried: waiting %v more would pass the %v this client waits for retries in all, %v spent)",
		e.err, e.wait.Round(time.Millisecond), e.max, e.waited.Round(time.Millisecond))
}

func (e *retryWaitSpent) Unwrap() error { return e.err }

// unreachable reports whether err means the server could not be talked to at
// all (as opposed to refusing one request), so later requests would fail too.
func unreachable(err error) bool {
	var te *transportError
	return errors.As(err, &te)
}

// unauthorized reports whether the server refused our credentials or
// tenant (401, 403): it will refuse every other request the same way.
func unauthorized(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && (se.Code == http.StatusUnauthorized || se.Code == http.StatusForbidden)
}

// do sends the request made by newReq, retrying transient failures with
// exponential backoff. It returns the body of a 200 response and how many
// attempts it took.
//
// A retried push can be stored twice if the server kept a profile and then
// failed to answer (a timeout); a 5xx from Pyroscope's distributor means it
// was not stored, and losing a lab run's profiles is worse than counting
// one twice.
//
// answer is the most it reads of a 200 answer it parses (what names it
// in an error); 0 when the answer is not needed.
func (c *Client) do(parent context.Context, newReq func() (*http.Request, error), answer int64, what string) ([]byte, int, error) {
	ctx, cancel := context.WithTimeout(parent, c.cfg.Timeout)
	defer cancel()
	delay := c.cfg.RetryDelay
	for attempt := 1; ; attempt++ {
		body, err := c.once(ctx, newReq, answer, what)
		if err != nil && parent.Err() == nil && ctx.Err() != nil {
			// Our own deadline, not the caller's end: a server too slow to
			// answer, which later requests would wait on too.
			return nil, attempt, &transportError{op: "no answer from " + c.base.Host, err: fmt.Errorf("gave up after %v (the timeout; after %d attempts, last error: %v)", c.cfg.Timeout, attempt, err)}
		}
		if err == nil || attempt > c.cfg.Retries || !transient(err) || ctx.Err() != nil || rateLimited(err) {
			return body, attempt, err
		}
		wait := delay
		var se *StatusError
		if errors.As(err, &se) && se.retryAfter > wait {
			// A rate-limited server says when to come back; sooner
			// would only be refused again.
			wait = se.retryAfter
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			// The wait would outlast the timeout: fail now.
			return nil, attempt, fmt.Errorf("%w (not retried: waiting %v would pass the timeout of %v)", err, wait.Round(time.Millisecond), c.cfg.Timeout)
		}
		if w := time.Duration(c.waited.Add(int64(wait))); w > c.cfg.MaxRetryWait {
			c.waited.Add(-int64(wait))
			return nil, attempt, &retryWaitSpent{err: err, waited: w - wait, max: c.cfg.MaxRetryWait, wait: wait}
		}
		select {
		case <-ctx.Done():
			if parent.Err() == nil {
				return nil, attempt, err
			}
			return nil, attempt, fmt.Errorf("%w (after %d attempts, last error: %v)", parent.Err(), attempt, err)
		case <-time.After(wait):
		}
		delay *= 2
	}
}

func (c *Client) once(ctx context.Context, newReq func() (*http.Request, error), answer int64, what string) ([]byte, error) {
	req, err := newReq()
	if err != nil {
		return nil, err
	}
	req = req.WithContext(ctx)
	c.authorize(req)
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// *url.Error repeats the whole URL, query and all; the path is
		// enough to say what failed.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, &transportError{op: req.Method + " " + c.base.Host + req.URL.Path, err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		if answer <= 0 {
			// Not needed, but read to its end: an answer that does not
			// end, or is larger than any Pyroscope gives, is not a
			// server that took the profile.
			answer, what = maxIgnoredBody, "answer to "+req.Method+" "+req.URL.Path
		}
		body, err := readAtMost(resp.Body, resp.ContentLength, answer, what)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			var tl *TooLargeError
			if errors.As(err, &tl) {
				return nil, err
			}
			return nil, &transportError{op: "reading the server's " + what, err: err}
		}
		return body, nil
	}
	// An error's body is read for its message only: what a message can
	// show, with room for an HTML page's markup around it.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	msg := connectMessage(body)
	if strings.HasPrefix(strings.TrimSpace(msg), "<") {
		// An HTML error page (a proxy, or not Pyroscope at all):
		// its text, on one line.
		msg = strings.Join(strings.Fields(htmlTag.ReplaceAllString(msg, " ")), " ")
	}
	msg = shorten(msg, maxErrorText)
	switch resp.StatusCode {
	case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotImplemented:
		msg += " (is " + c.base.String() + " a Pyroscope server? perflab posts to its " + strings.TrimPrefix(req.URL.Path, c.base.Path) + ")"
	}
	if loc := resp.Header.Get("Location"); resp.StatusCode/100 == 3 && loc != "" {
		// Not followed (see New); say where to point perflab instead.
		if lu, err := resp.Request.URL.Parse(loc); err == nil {
			// The base address: without the endpoint we asked for.
			endpoint := strings.TrimPrefix(resp.Request.URL.Path, c.base.Path)
			if endpoint != "" && strings.HasSuffix(lu.Path, endpoint) {
				lu.Path = strings.TrimSuffix(lu.Path, endpoint)
				lu.RawPath, lu.RawQuery = "", ""
			}
			lu.User = nil
			msg = "the server redirects to " + shorten(lu.String(), maxErrorText) + ": use that address for the server (" + c.base.String() + " was given)"
		}
	}
	if resp.StatusCode == http.StatusUnauthorized && c.cfg.TenantID == "" && strings.Contains(msg, "no org id") {
		msg += " (the server has multi-tenancy on: give a tenant id with --tenant-id or $PERFLAB_PYROSCOPE_TENANT_ID)"
	}
	se := &StatusError{Code: resp.StatusCode, Body: msg}
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		if secs, err := strconv.Atoi(ra); err == nil && secs > 0 {
			se.retryAfter = time.Duration(secs) * time.Second
		} else if t, err := http.ParseTime(ra); err == nil {
			se.retryAfter = time.Until(t)
		}
		if se.retryAfter > maxRetryAfter {
			se.Body = strings.TrimSpace(se.Body + fmt.Sprintf(" (the server asks to retry after %v: not waited for)", se.retryAfter.Round(time.Second)))
		}
	}
	return nil, se
}

// connectMessage returns the message of a Connect error,
// {"code":"invalid_argument","message":"…"}, or body itself when it is not
// one. Pyroscope's query frontend wraps the querier's error in its own, so
// the message can be another such error: the innermost is the one that
// says what is wrong.
func connectMessage(body []byte) string {
	msg, inner := string(body), body
	for range 4 {
		var ce struct{ Code, Message string }
		if json.Unmarshal(inner, &ce) != nil || ce.Message == "" {
			break
		}
		msg, inner = ce.Code+": "+ce.Message, []byte(ce.Message)
	}
	return msg
}

var htmlTag = regexp.MustCompile(`<[^>]*>`)

// shorten cuts s to about n bytes, at a rune's start, marking the cut.
func shorten(s string, n int) string { return textsafe.Clip(strings.TrimSpace(s), n) }
