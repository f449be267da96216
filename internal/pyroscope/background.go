package pyroscope

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/pprof/profile"
	"github.com/grafana/pyroscope-go/upstream"
	"github.com/grafana/pyroscope-go/upstream/remote"
)

// Background uploads profiles made while a program runs (a soak session, a
// service's continuous profiles) through pyroscope-go's upstream/remote,
// whose semantics are the right ones there and the wrong ones for a push
// (see the package doc): best effort, from background goroutines, with a
// bounded queue (20 jobs) that drops when full. What upstream/remote only
// logs, Background counts: every upload through it, and through the HTTP
// client it gives pyroscope-go's own profiler, is seen in Stats, with the
// last error.
type Background struct {
	base   string
	cfg    Config
	remote *remote.Remote
	logger *countingLogger
	stats  *counters
	wall   *countingClient
	once   sync.Once
	// abort ends every upload in flight, and fails those still to come
	// at once: what bounds Close.
	aborted context.Context
	abort   context.CancelFunc
}

// Logger is pyroscope-go's logger interface (pyroscope.Logger and
// remote.Logger are the same).
type Logger = remote.Logger

// Stats counts what a Background has done.
type Stats struct {
	// Sent counts the uploads the server accepted, by source: "wall" for
	// Background.Upload, and the name given to HTTPClient (pyroscope-go's
	// own profiles).
	Sent map[string]int64
	// Bytes is the size of the accepted uploads' bodies.
	Bytes int64
	// Failed counts uploads the server refused or that could not reach it.
	Failed int64
	// Dropped counts uploads dropped because the queue was full (the server
	// is slower than the profiles come).
	Dropped int64
	// Refused counts profiles Upload did not queue (over the server's
	// limits, or not encodable).
	Refused int64
	// LastError is the last failure or refusal, "" if none.
	LastError string
}

// SentTotal returns the number of accepted uploads from every source.
func (s Stats) SentTotal() int64 {
	var n int64
	for _, v := range s.Sent {
		n += v
	}
	return n
}

// String summarises the stats on one line: "sent 12 (wall 4, pyroscope-go 8),
// 0 failed, 0 dropped".
func (s Stats) String() string {
	var parts []string
	for _, k := range sortedKeys64(s.Sent) {
		parts = append(parts, fmt.Sprintf("%s %d", k, s.Sent[k]))
	}
	msg := fmt.Sprintf("sent %d", s.SentTotal())
	if len(parts) > 0 {
		msg += " (" + strings.Join(parts, ", ") + ")"
	}
	msg += fmt.Sprintf(", %d failed, %d dropped", s.Failed, s.Dropped)
	if s.Refused > 0 {
		msg += fmt.Sprintf(", %d refused before sending", s.Refused)
	}
	return msg
}

type counters struct {
	mu                      sync.Mutex
	sent                    map[string]int64
	bytes                   int64
	failed, dropped, refuse atomic.Int64
	last                    atomic.Value // string
}

func (c *counters) fail(err string) {
	c.failed.Add(1)
	c.last.Store(err)
}

// closeGrace is the part of Close's timeout kept for what it runs first
// to return once the uploads are aborted.
const closeGrace = time.Second

// uploadTimeout bounds one upload: a background uploader must not hold a
// stopping program for pyroscope-go's 30 s.
const uploadTimeout = 10 * time.Second

// NewBackground starts a background uploader to the server at rawURL; cfg's
// TenantID, basic auth and Limits apply (HTTPClient and retries do not:
// upstream/remote never retries). logger, if not nil, also gets
// upstream/remote's messages.
func NewBackground(rawURL string, cfg Config, logger Logger) (*Background, error) {
	c, err := New(rawURL, cfg)
	if err != nil {
		return nil, err
	}
	b := &Background{base: c.base.String(), cfg: c.cfg, stats: &counters{sent: map[string]int64{}}}
	b.aborted, b.abort = context.WithCancel(context.Background())
	b.logger = &countingLogger{next: logger, stats: b.stats}
	b.wall = b.client("wall")
	b.remote, err = remote.NewRemote(b.RemoteConfig(b.wall))
	if err != nil {
		return nil, err
	}
	b.remote.Start()
	return b, nil
}

// RemoteConfig returns the upstream/remote settings that reach the server
// through client (see HTTPClient).
func (b *Background) RemoteConfig(client remote.HTTPClient) remote.Config {
	return remote.Config{
		Address:           b.base,
		TenantID:          b.cfg.TenantID,
		BasicAuthUser:     b.cfg.BasicAuthUser,
		BasicAuthPassword: b.cfg.BasicAuthPassword,
		Threads:           2,
		Timeout:           uploadTimeout,
		Logger:            b.logger,
		HTTPClient:        client,
	}
}

// HTTPClient returns an HTTP client for pyroscope-go's profiler
// (pyroscope.Config.HTTPClient) whose uploads Stats counts under source.
func (b *Background) HTTPClient(source string) remote.HTTPClient { return b.client(source) }

// Logger returns the logger to give pyroscope-go's profiler
// (pyroscope.Config.Logger), so that Stats counts its dropped uploads too.
func (b *Background) Logger() Logger { return b.logger }

func (b *Background) client(source string) *countingClient {
	return &countingClient{source: source, stats: b.stats, aborted: b.aborted, http: &http.Client{
		Timeout: uploadTimeout,
		// As pyroscope-go: a redirect to another host drops the
		// Authorization header, which turns into a confusing 401.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		// A connection per upload, so no idle connection goroutine of
		// the uploader outlives it: a wall-clock profile of all
		// goroutines would count it as the program's own waiting.
		Transport: &http.Transport{DisableKeepAlives: true, Proxy: http.ProxyFromEnvironment},
	}}
}

// Upload queues p, of the given kind (KindWall…), for service with the
// given labels (names valid, see LabelName), covering start to end. It
// returns an error, counted as refused, only when p cannot be sent at all:
// over the server's limits (a wall profile with more samples than the
// server takes is first cut to its largest samples, the rest merged into
// one). Whether the upload succeeds is seen later, in Stats.
func (b *Background) Upload(kind, service string, labels map[string]string, p *profile.Profile, start, end time.Time) error {
	err := b.upload(kind, service, labels, p, start, end)
	if err != nil {
		b.stats.refuse.Add(1)
		b.stats.last.Store(kind + " profile not sent: " + err.Error())
	}
	return err
}

func (b *Background) upload(kind, service string, labels map[string]string, p *profile.Profile, start, end time.Time) error {
	if err := ValidServiceName(service); err != nil {
		return err
	}
	p = p.Copy()
	stc, err := prepare(kind, p)
	if err != nil {
		return err
	}
	// The profile's own duration, when it has one within start to end, is
	// the time its values cover: a wall-clock window's is its trace's span,
	// without trace.Start's and Stop's latency, which no goroutine is in.
	// Overwriting it with end-start made a 400 ms window's two workers,
	// busy throughout, read 0.75-0.9 of twice the window under -race,
	// where Start and Stop take 20-60 ms.
	p.TimeNanos = start.UnixNano()
	if d := end.Sub(start).Nanoseconds(); p.DurationNanos <= 0 || p.DurationNanos > d {
		p.DurationNanos = d
	}
	if max := b.cfg.Limits.MaxProfileSamples; max > 0 && len(p.Sample) > max {
		trimSamples(p, max)
	}
	sent := make(map[string]string, len(labels))
	for k, v := range labels {
		sent[k] = LabelValue(v)
	}
	if err := b.cfg.Limits.CheckProfile(service, sent, p); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		return fmt.Errorf("encoding profile: %w", err)
	}
	job := &upstream.UploadJob{
		Name:      ingestName(service, labels),
		StartTime: start,
		EndTime:   end,
		SpyName:   "gospy",
		Format:    upstream.FormatPprof,
		Profile:   buf.Bytes(),
	}
	if stc != nil {
		job.SampleTypeConfig = map[string]*upstream.SampleType{}
		for k, v := range stc {
			job.SampleTypeConfig[k] = &upstream.SampleType{Units: v.Units, DisplayName: v.DisplayName, Aggregation: v.Aggregation, Cumulative: v.Cumulative, Sampled: v.Sampled}
		}
	}
	b.remote.Upload(job)
	return nil
}

// trimFrame is the leaf of the sample that holds what trimSamples cut.
const trimFrame = "[other] stacks beyond the server's sample limit"

// trimSamples keeps the max−1 largest samples of p (by its first value)
// and merges the others into one: the server refuses a profile with more
// samples, and a long tail of rare stacks is the least of a flame graph.
func trimSamples(p *profile.Profile, max int) {
	sort.SliceStable(p.Sample, func(i, j int) bool { return p.Sample[i].Value[0] > p.Sample[j].Value[0] })
	rest := p.Sample[max-1:]
	merged := &profile.Sample{Value: make([]int64, len(p.SampleType))}
	for _, s := range rest {
		for i, v := range s.Value {
			merged.Value[i] += v
		}
	}
	fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: trimFrame, SystemName: trimFrame}
	loc := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fn}}}
	p.Function = append(p.Function, fn)
	p.Location = append(p.Location, loc)
	merged.Location = []*profile.Location{loc}
	p.Sample = append(p.Sample[:max-1], merged)
	// Drop the locations and functions only the cut samples used.
	*p = *p.Compact()
}

// Stats returns what has been sent so far.
func (b *Background) Stats() Stats {
	s := Stats{Sent: map[string]int64{}, Failed: b.stats.failed.Load(), Dropped: b.stats.dropped.Load(), Refused: b.stats.refuse.Load()}
	b.stats.mu.Lock()
	for k, v := range b.stats.sent {
		s.Sent[k] = v
	}
	s.Bytes = b.stats.bytes
	b.stats.mu.Unlock()
	if v, ok := b.stats.last.Load().(string); ok {
		s.LastError = v
	}
	return s
}

// Flush waits until every queued upload is done, or timeout has passed.
// It reports whether they all were.
func (b *Background) Flush(timeout time.Duration) bool {
	done := make(chan struct{})
	go func() { b.remote.Flush(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(timeout):
		return false
	}
}

// Stop stops the uploader; uploads still queued are dropped (Flush first).
// It waits for the uploads in flight, up to their 10 s timeout each: Close
// bounds the whole.
func (b *Background) Stop() { b.once.Do(b.remote.Stop) }

// Close runs first (a profiler's Flush(true) and Stop, which wait for its
// own uploads through HTTPClient), waits for the queued uploads, and
// stops, all within timeout: near its end every upload in flight is
// aborted and those still queued fail at once, counted as failed.
// (Flush then Stop waited for each queued upload's own timeout in turn:
// continuous's stop took 64 s against a slow server, a 20 s soak 82 s;
// issue 26.) It reports whether everything was uploaded in time.
func (b *Background) Close(timeout time.Duration, first ...func()) bool {
	done := make(chan struct{})
	go func() {
		for _, f := range first {
			f()
		}
		b.remote.Flush()
		close(done)
	}()
	// The last part of timeout is for the aborted uploads to end.
	grace := min(closeGrace, timeout/10)
	t := time.NewTimer(timeout - grace)
	defer t.Stop()
	finished := true
	select {
	case <-done:
	case <-t.C:
		finished = false
	}
	b.abort()
	// Aborted, each upload left fails as soon as it starts, and first's
	// waits end with them; the grace is in case first waits on
	// something else.
	t.Reset(grace)
	select {
	case <-done:
	case <-t.C:
		finished = false
	}
	b.Stop()
	return finished
}

// countingClient is the HTTP client of an upstream/remote: it counts
// every upload and keeps the last failure.
type countingClient struct {
	source  string
	stats   *counters
	http    *http.Client
	aborted context.Context
}

// Do sends one upload and reads the answer, bounded: an answer other than
// 200 for its message (64 KiB), a 200 to its end, which for Pyroscope is
// empty. A 200 with a larger body is not a server that took the profile:
// it is counted as failed, not sent (issue 26: such an answer was read
// whole by upstream/remote, 8.6 GB in 30 s in the profiled service, and
// counted as sent). The body upstream/remote reads is the part read here.
func (c *countingClient) Do(req *http.Request) (*http.Response, error) {
	size := req.ContentLength
	ctx, cancel := context.WithCancel(req.Context())
	defer cancel()
	stop := context.AfterFunc(c.aborted, cancel)
	defer stop()
	if c.aborted.Err() != nil {
		err := errors.New("aborted: the uploader was closed before this upload could finish")
		c.stats.fail(fmt.Sprintf("%s upload to %s: %v", c.source, req.URL.Host, err))
		return nil, err
	}
	resp, err := c.http.Do(req.WithContext(ctx))
	if err != nil {
		if c.aborted.Err() != nil {
			err = errors.New("aborted: the uploader was closed before the server answered")
		}
		// *url.Error repeats the whole URL, query and all.
		msg := err
		var ue *url.Error
		if errors.As(err, &ue) {
			msg = ue.Err
		}
		c.stats.fail(fmt.Sprintf("%s upload to %s: %v", c.source, req.URL.Host, msg))
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		// Keep the server's reason; upstream/remote reads the body again.
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		c.stats.fail(fmt.Sprintf("%s upload: %s", c.source, (&StatusError{Code: resp.StatusCode, Body: shorten(connectMessage(body), 300)}).Error()))
		return resp, nil
	}
	body, err := readAtMost(resp.Body, resp.ContentLength, maxIgnoredBody, "answer to an upload")
	resp.Body.Close()
	if err != nil {
		if c.aborted.Err() != nil {
			err = errors.New("aborted: the uploader was closed while the server answered")
		}
		c.stats.fail(fmt.Sprintf("%s upload to %s: %v", c.source, req.URL.Host, err))
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	c.stats.mu.Lock()
	c.stats.sent[c.source]++
	c.stats.bytes += size
	c.stats.mu.Unlock()
	return resp, nil
}

// countingLogger counts the uploads upstream/remote drops, which it only
// logs, and passes every message on.
type countingLogger struct {
	next  Logger
	stats *counters
}

func (l *countingLogger) Infof(f string, a ...any) {
	if l.next != nil {
		l.next.Infof(f, a...)
	}
}

func (l *countingLogger) Debugf(f string, a ...any) {
	if l.next != nil {
		l.next.Debugf(f, a...)
	}
}

func (l *countingLogger) Errorf(f string, a ...any) {
	if strings.HasPrefix(f, "remote upload queue is full") {
		l.stats.dropped.Add(1)
		l.stats.last.Store("upload dropped: the queue is full (the server is slower than the profiles come)")
	}
	if l.next != nil {
		l.next.Errorf(f, a...)
	}
}

func sortedKeys64(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
