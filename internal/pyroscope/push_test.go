package pyroscope

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// ingestCall is what the fake server saw of one POST /ingest.
type ingestCall struct {
	name, from, until, spy string
	tenant, user, pass     string
	profile                *profile.Profile
	config                 map[string]sampleTypeConfig
}

// fakeIngest is an /ingest endpoint that records calls and answers with the
// statuses in fail (in order) before answering 200.
type fakeIngest struct {
	mu    sync.Mutex
	calls []ingestCall
	fail  []int
	body  string
	// retryAfter, when set, is sent as Retry-After with the failures.
	retryAfter string
}

func (f *fakeIngest) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.URL.Path != "/ingest" || r.Method != http.MethodPost {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if len(f.fail) > 0 {
		code := f.fail[0]
		f.fail = f.fail[1:]
		if f.retryAfter != "" {
			w.Header().Set("Retry-After", f.retryAfter)
		}
		http.Error(w, f.body, code)
		return
	}
	c := ingestCall{
		name: r.URL.Query().Get("name"), from: r.URL.Query().Get("from"),
		until: r.URL.Query().Get("until"), spy: r.URL.Query().Get("spyName"),
		tenant: r.Header.Get("X-Scope-OrgID"),
	}
	c.user, c.pass, _ = r.BasicAuth()
	if err := r.ParseMultipartForm(10 << 20); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	file := func(name string) []byte {
		fh := r.MultipartForm.File[name]
		if len(fh) == 0 {
			return nil
		}
		rd, _ := fh[0].Open()
		b, _ := io.ReadAll(rd)
		return b
	}
	var err error
	if c.profile, err = profile.ParseData(file("profile")); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if b := file("sample_type_config"); b != nil {
		json.Unmarshal(b, &c.config)
	}
	f.calls = append(f.calls, c)
}

func newTestClient(t *testing.T, h http.Handler, cfg Config) (*Client, *httptest.Server) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cfg.RetryDelay = time.Millisecond
	c, err := New(srv.URL+"/", cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, srv
}

func sampleTypes(p *profile.Profile) string {
	var s []string
	for _, st := range p.SampleType {
		s = append(s, st.Type+"/"+st.Unit)
	}
	return strings.Join(s, ",") + " period " + p.PeriodType.Type + "/" + p.PeriodType.Unit
}

func TestPushWallProfile(t *testing.T) {
	f := &fakeIngest{}
	c, _ := newTestClient(t, f, Config{TenantID: "team-a", BasicAuthUser: "u", BasicAuthPassword: "p"})
	start := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	orig := testProfile(KindWall, start, map[string][]string{"1s": {"main.work", "main.main"}})
	attempts, err := c.Push(context.Background(), Upload{
		Kind: KindWall, Profile: orig, ServiceName: "perflab",
		Labels: map[string]string{"variant": "mutex", "run_id": "r1", "odd": " a,b{c}"},
	})
	if err != nil || attempts != 1 {
		t.Fatalf("Push: attempts=%d err=%v", attempts, err)
	}
	if len(f.calls) != 1 {
		t.Fatalf("%d calls", len(f.calls))
	}
	got := f.calls[0]
	if want := "perflab{odd=a_b_c_,run_id=r1,variant=mutex}"; got.name != want {
		t.Errorf("name = %q, want %q", got.name, want)
	}
	if got.from != fmt.Sprint(start.UnixNano()) || got.until != fmt.Sprint(start.Add(time.Second).UnixNano()) || got.spy != "gospy" {
		t.Errorf("from=%s until=%s spy=%s", got.from, got.until, got.spy)
	}
	if got.tenant != "team-a" || got.user != "u" || got.pass != "p" {
		t.Errorf("tenant=%q auth=%q:%q", got.tenant, got.user, got.pass)
	}
	// The server files a profile with a "wall" sample type under "wall";
	// fgprof's "time" would land under process_cpu.
	if s, want := sampleTypes(got.profile), "samples/count,wall/nanoseconds period wall/nanoseconds"; s != want {
		t.Errorf("sample types %s, want %s", s, want)
	}
	if got.config != nil {
		t.Errorf("sample_type_config sent for wall: %v", got.config)
	}
	if sampleTypes(orig) != "samples/count,time/nanoseconds period wallclock/nanoseconds" {
		t.Errorf("Push changed the caller's profile: %s", sampleTypes(orig))
	}
}

func TestPushBlockSendsDisplayNames(t *testing.T) {
	f := &fakeIngest{}
	c, _ := newTestClient(t, f, Config{})
	stamp := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	p := testProfile(KindBlock, time.Unix(1, 0), map[string][]string{"1ms": {"sync.(*WaitGroup).Wait"}})
	if _, err := c.Push(context.Background(), Upload{Kind: KindBlock, Profile: p, ServiceName: "perflab", Stamp: stamp}); err != nil {
		t.Fatal(err)
	}
	got := f.calls[0]
	if got.config["contentions"].DisplayName != "block_count" || got.config["delay"].DisplayName != "block_duration" {
		t.Errorf("config = %+v", got.config)
	}
	if got.profile.TimeNanos != stamp.UnixNano() {
		t.Errorf("TimeNanos = %d, want the stamp %d", got.profile.TimeNanos, stamp.UnixNano())
	}
	if s := sampleTypes(got.profile); s != "contentions/count,delay/nanoseconds period contentions/count" {
		t.Errorf("sample types changed: %s", s)
	}
}

func TestPushRetries(t *testing.T) {
	tests := []struct {
		name         string
		fail         []int
		body         string
		wantAttempts int
		wantErr      string
	}{
		{"ok", nil, "", 1, ""},
		{"transient then ok", []int{503, 502}, "busy", 3, ""},
		{"429 then ok", []int{429}, "slow down", 2, ""},
		{"gives up", []int{500, 500, 500, 500, 500}, "broken", 4, "500 Internal Server Error: broken"},
		{"bad request is not retried", []int{400}, "invalid label name", 1, "400 Bad Request: invalid label name"},
		{"auth is not retried", []int{401}, "no", 1, "401"},
		{"501 is not retried", []int{501}, "no ingest here", 1, "501 Not Implemented"},
		{"old profile gets a hint", []int{400}, "profile with labels '{}' is outside of ingestion window", 1, "--timestamp now"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeIngest{fail: tt.fail, body: tt.body}
			c, _ := newTestClient(t, f, Config{})
			p := testProfile(KindCPU, time.Now(), map[string][]string{"10ms": {"main.f"}})
			attempts, err := c.Push(context.Background(), Upload{Kind: KindCPU, Profile: p, ServiceName: "perflab"})
			if attempts != tt.wantAttempts {
				t.Errorf("attempts = %d, want %d", attempts, tt.wantAttempts)
			}
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// TestPushHonoursRetryAfter: a rate-limited server's Retry-After is waited
// for, rather than the much shorter backoff.
func TestPushHonoursRetryAfter(t *testing.T) {
	f := &fakeIngest{fail: []int{429}, body: "slow down", retryAfter: "1"}
	c, _ := newTestClient(t, f, Config{RetryDelay: time.Millisecond})
	p := testProfile(KindCPU, time.Now(), map[string][]string{"10ms": {"main.f"}})
	start := time.Now()
	attempts, err := c.Push(context.Background(), Upload{Kind: KindCPU, Profile: p, ServiceName: "perflab"})
	if err != nil || attempts != 2 {
		t.Fatalf("attempts %d, err %v", attempts, err)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("retried after %v, before the server's Retry-After of 1s", d)
	}
}

// TestPushUntrustedCertificateNotRetried: retrying cannot make the client
// trust a certificate; one attempt, and the error says why.
func TestPushUntrustedCertificateNotRetried(t *testing.T) {
	srv := httptest.NewTLSServer(&fakeIngest{})
	t.Cleanup(srv.Close)
	c, err := New(srv.URL, Config{RetryDelay: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	p := testProfile(KindCPU, time.Now(), map[string][]string{"10ms": {"main.f"}})
	attempts, err := c.Push(context.Background(), Upload{Kind: KindCPU, Profile: p, ServiceName: "perflab"})
	if attempts != 1 || err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("attempts %d, err %v: want one attempt and a certificate error", attempts, err)
	}
}

// TestPushRedirectSaysWhere: redirects are not followed (credentials would
// go to another host, or be dropped); the error names the new address.
func TestPushRedirectSaysWhere(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://profiles.example.com/ingest?x=1", http.StatusPermanentRedirect)
	}))
	t.Cleanup(srv.Close)
	c, err := New(srv.URL, Config{RetryDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	p := testProfile(KindCPU, time.Now(), map[string][]string{"10ms": {"main.f"}})
	attempts, err := c.Push(context.Background(), Upload{Kind: KindCPU, Profile: p, ServiceName: "perflab"})
	if attempts != 1 || err == nil || !strings.Contains(err.Error(), "308 Permanent Redirect: the server redirects to https://profiles.example.com: use that address") {
		t.Errorf("attempts %d, err %v", attempts, err)
	}
}

// TestNotPyroscope: pointed at some other web server, the error is one
// line of the page's text and asks whether the URL is right.
func TestNotPyroscope(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotImplemented)
		io.WriteString(w, "<!DOCTYPE HTML>\n<html>\n  <body>\n    <h1>Error response</h1>\n    <p>Unsupported method ('POST').</p>\n  </body>\n</html>\n")
	}))
	t.Cleanup(srv.Close)
	c, err := New(srv.URL, Config{RetryDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.SelectMergeProfile(context.Background(), Query{ProfileType: "wall"})
	want := "server answered 501 Not Implemented: Error response Unsupported method ('POST'). (is " + srv.URL +
		" a Pyroscope server? perflab posts to its /querier.v1.QuerierService/SelectMergeProfile)"
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("err = %v\nwant it to end %q", err, want)
	}
}

func TestPushRefusesBadInput(t *testing.T) {
	c, _ := newTestClient(t, &fakeIngest{}, Config{})
	p := testProfile(KindCPU, time.Now(), map[string][]string{"10ms": {"main.f"}})
	if _, err := c.Push(context.Background(), Upload{Kind: KindCPU, Profile: p, ServiceName: "my service"}); err == nil {
		t.Error("service name with a space accepted")
	}
	for _, u := range []string{"localhost:4040", "ftp://x", "http://"} {
		if _, err := New(u, Config{}); err == nil {
			t.Errorf("New(%q) accepted", u)
		}
	}
}

func TestNewTakesCredentialsFromURL(t *testing.T) {
	c, err := New("https://123:secret@profiles.example.com/prefix/", Config{})
	if err != nil {
		t.Fatal(err)
	}
	if c.URL() != "https://profiles.example.com/prefix" || c.cfg.BasicAuthUser != "123" || c.cfg.BasicAuthPassword != "secret" {
		t.Errorf("URL %s user %q pass %q", c.URL(), c.cfg.BasicAuthUser, c.cfg.BasicAuthPassword)
	}
	if got := c.endpoint("/ingest", nil); got != "https://profiles.example.com/prefix/ingest" {
		t.Errorf("endpoint = %s", got)
	}
}

// TestErrorsHideCredentials: a URL with a password in it is refused without
// printing the password, even when it does not parse.
func TestErrorsHideCredentials(t *testing.T) {
	for _, tt := range []struct{ name, url string }{
		{"wrong scheme", "ftp://alice:s3cret@host"},
		{"bad port", "http://alice:s3cret@host:99999x"},
		{"bad userinfo", "http://alice:s3cr et@127.0.0.1:1"},
		{"no scheme", "alice:s3cret@host:4040"},
		{"at in password", "http://alice:s3c@ret@host:port/x"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.url, Config{})
			if err == nil {
				t.Fatalf("New(%q) accepted", tt.url)
			}
			if strings.Contains(err.Error(), "s3c") || strings.Contains(err.Error(), "ret@") {
				t.Errorf("error shows the password: %v", err)
			}
			if !strings.Contains(err.Error(), "xxxxx@") {
				t.Errorf("error does not show where the credentials were: %v", err)
			}
		})
	}
}

func TestLabelName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"keys", "keys"},
		{"key-size", "key_size"},
		{"key.size", "key_size"},
		{"2x", "_2x"},
		{"__name__", "_name__"},
		{"", "_"},
		{"clé", "cl__"},
	}
	for _, tt := range tests {
		if got := LabelName(tt.in); got != tt.want {
			t.Errorf("LabelName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPushRun(t *testing.T) {
	start := time.Now().Add(-time.Minute)
	st, run := writeTestRun(t, "20261130-100000-push-test", start)
	f := &fakeIngest{}
	c, srv := newTestClient(t, f, Config{})
	var progress bytes.Buffer
	sum, err := PushRun(context.Background(), c, st, run, PushOptions{
		Labels: map[string]string{"env": "ci"}, Progress: &progress,
	})
	if err != nil {
		t.Fatal(err)
	}
	// 2 cases × 4 kinds, one of them empty (variant b's mutex).
	if len(sum.Results) != 8 || sum.Sent() != 7 || len(f.calls) != 7 {
		t.Fatalf("results=%d sent=%d calls=%d", len(sum.Results), sum.Sent(), len(f.calls))
	}
	want := "perflab{commit=abc123,env=ci,goarch=amd64,goos=linux,key_size=16,run_id=20261130-100000-push-test,scenario=push-test,threads=2,variant=a}"
	if f.calls[0].name != want {
		t.Errorf("first name = %q", f.calls[0].name)
	}
	var out bytes.Buffer
	sum.Write(&out)
	for _, s := range []string{
		"variant=b/key-size=16/threads=2  mutex",
		"empty, not sent",
		"skipped variant=c/key-size=16/threads=2: case failed",
		"7 of 7 profiles sent to " + srv.URL + ` as {service_name="perflab",run_id="20261130-100000-push-test"}`,
	} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("summary lacks %q:\n%s", s, out.String())
		}
	}
	if n := strings.Count(progress.String(), "\n"); n != 8 {
		t.Errorf("%d progress lines:\n%s", n, progress.String())
	}

	// Only some kinds.
	f.calls = nil
	sum, err = PushRun(context.Background(), c, st, run, PushOptions{Kinds: []string{KindCPU}, ServiceName: "lab"})
	if err != nil || sum.Sent() != 2 || !strings.HasPrefix(f.calls[0].name, "lab{") {
		t.Fatalf("cpu only: sent=%d err=%v calls=%v", sum.Sent(), err, f.calls)
	}
}

// TestPushRunFilesUntimedAtRunStart: a stored profile with no start time
// of its own (the wall-clock profile perflab makes from an execution
// trace) is filed at the run's start, beside the same case's CPU profile,
// not at the time of the push (35 minutes apart for a run pushed then).
func TestPushRunFilesUntimedAtRunStart(t *testing.T) {
	start := time.Now().Add(-35 * time.Minute).Truncate(time.Second)
	st, run := writeTestRun(t, "20261130-100000-push-test", start)
	c := run.Cases[0]
	path := filepath.Join(st.Root, run.ID, filepath.FromSlash(c.Profiles[KindWall]))
	p := testProfile(KindWall, start, map[string][]string{"1s": {"perflabtest.workA", "runtime.goexit"}})
	p.TimeNanos = 0
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &fakeIngest{}
	cl, _ := newTestClient(t, f, Config{})
	if _, err := PushRun(context.Background(), cl, st, run, PushOptions{Kinds: []string{KindWall, KindCPU}}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint(start.UnixNano())
	for _, call := range f.calls {
		if call.from != want {
			t.Errorf("%s filed from %s, want the run's start %s", call.name, call.from, want)
		}
	}
	if len(f.calls) != 4 {
		t.Errorf("%d profiles sent, want 4", len(f.calls))
	}
}

func TestPushRunReportsRefusals(t *testing.T) {
	st, run := writeTestRun(t, "r1", time.Now())
	f := &fakeIngest{fail: []int{400}, body: "invalid labels"}
	c, _ := newTestClient(t, f, Config{})
	sum, err := PushRun(context.Background(), c, st, run, PushOptions{})
	if err == nil || !strings.Contains(err.Error(), "1 of 7 profiles of run r1 not sent") || !strings.Contains(err.Error(), "invalid labels") {
		t.Fatalf("err = %v", err)
	}
	if sum.Sent() != 6 {
		t.Errorf("sent %d after one refusal, want the other 6", sum.Sent())
	}
	// The brief form (run --push) shows the failure and the totals only.
	var out bytes.Buffer
	sum.WriteBrief(&out)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "case") || !strings.Contains(lines[1], "FAILED: server answered 400") ||
		!strings.HasPrefix(lines[2], "6 of 7 profiles sent to ") || !strings.HasSuffix(lines[2], "(empty, so not sent: 1)") {
		t.Errorf("brief summary:\n%s", out.String())
	}
	out.Reset()
	ok := Summary{URL: "http://x", RunID: "r1", ServiceName: "perflab", Results: []Result{{Case: "a", Kind: KindCPU}}}
	ok.WriteBrief(&out)
	if got := out.String(); got != "1 of 1 profiles sent to http://x as {service_name=\"perflab\",run_id=\"r1\"}\n" {
		t.Errorf("brief summary of a clean push: %q", got)
	}
}

func TestPushRunStopsWhenUnreachable(t *testing.T) {
	st, run := writeTestRun(t, "r1", time.Now())
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	c, err := New(url, Config{RetryDelay: time.Millisecond, Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := PushRun(context.Background(), c, st, run, PushOptions{})
	if err == nil || !strings.Contains(err.Error(), "8 of 8 profiles") || !strings.Contains(err.Error(), "still stored") ||
		!strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "?") {
		t.Fatalf("err = %v", err)
	}
	if sum.Results[0].Attempts != 2 {
		t.Errorf("first profile: %d attempts, want 2", sum.Results[0].Attempts)
	}
	for _, r := range sum.Results[1:] {
		if r.Attempts != 0 || r.Err == nil || !strings.Contains(r.Err.Error(), "not attempted") {
			t.Errorf("%s %s: attempts=%d err=%v, want not attempted", r.Case, r.Kind, r.Attempts, r.Err)
		}
	}
	// The summary shows the failure once and counts the rest, rather than
	// a line per profile that was never tried.
	var out bytes.Buffer
	sum.Write(&out)
	if got := out.String(); strings.Count(got, "\n") != 5 || !strings.Contains(got, "connection refused") ||
		!strings.Contains(got, "7 more profiles not attempted after that failure") || !strings.Contains(got, "0 of 8 profiles sent") {
		t.Errorf("summary:\n%s", got)
	}
}

// TestPushRunRefusesClashingLabels: an extra label perflab or the server
// also sets was dropped in silence, or made the server refuse every
// profile ("duplicate label name"); it is refused before anything is sent.
func TestPushRunRefusesClashingLabels(t *testing.T) {
	st, run := writeTestRun(t, "r1", time.Now())
	f := &fakeIngest{}
	c, _ := newTestClient(t, f, Config{})
	for _, tt := range []struct {
		name   string
		labels map[string]string
		msg    string
	}{
		{"perflab's own", map[string]string{"variant": "x"}, `label "variant": perflab labels every profile with variant itself`},
		{"a parameter", map[string]string{"key-size": "32"}, `label "key-size": perflab labels every profile with key_size itself (key_size="16"`},
		{"service name", map[string]string{"service_name": "x"}, "--service-name"},
		{"server's own", map[string]string{"pyroscope-spy": "x"}, "the server sets pyroscope_spy itself"},
		{"same after sanitising", map[string]string{"host-class": "a", "host_class": "b"}, `labels "host-class" and "host_class" are both sent as host_class`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := PushRun(context.Background(), c, st, run, PushOptions{Labels: tt.labels})
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("err = %v, want %q", err, tt.msg)
			}
		})
	}
	if len(f.calls) != 0 {
		t.Errorf("%d profiles sent despite the clash", len(f.calls))
	}
}

// TestPushRunStopsWhenUnauthorized: a 401 or 403 will be the answer to
// every profile; the push stops at the first instead of sending the rest.
func TestPushRunStopsWhenUnauthorized(t *testing.T) {
	st, run := writeTestRun(t, "r1", time.Now())
	f := &fakeIngest{fail: []int{401, 401}, body: "no org id"}
	c, _ := newTestClient(t, f, Config{})
	sum, err := PushRun(context.Background(), c, st, run, PushOptions{})
	if err == nil || !strings.Contains(err.Error(), "8 of 8 profiles") || !strings.Contains(err.Error(), "401 Unauthorized: no org id") {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "give a tenant id with --tenant-id") {
		t.Errorf("no hint about the tenant id: %v", err)
	}
	if len(f.fail) != 1 || sum.Results[0].Attempts != 1 {
		t.Errorf("%d requests refused, first took %d attempts: want one request, not retried", 2-len(f.fail), sum.Results[0].Attempts)
	}
}

func TestCaseLabelsClash(t *testing.T) {
	_, run := writeTestRun(t, "r1", time.Now())
	cs := run.Cases[0]
	cs.Params = map[string]string{"variant": "x", "run-id": "y", "threads": "z", "service_name": "w", "pyroscope-spy": "v"}
	got := CaseLabels(run, &cs)
	for k, v := range map[string]string{
		"variant": "a", "param_variant": "x", "param_run_id": "y", "param_threads": "z", "param_service_name": "w", "param_pyroscope_spy": "v",
		"run_id": "r1", "threads": "2", "commit": "abc123", "scenario": "push-test",
	} {
		if got[k] != v {
			t.Errorf("label %s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}

// TestTransientStatuses: which refusals a push retries. Pyroscope answers
// an exceeded ingestion rate with 422 resource_exhausted, which waiting
// cures; other 422s (a malformed profile) it does not.
func TestTransientStatuses(t *testing.T) {
	for _, tt := range []struct {
		code int
		body string
		want bool
	}{
		{429, "", true},
		{503, "", true},
		{501, "", false},
		{400, "bad request", false},
		{422, `{"code":"resource_exhausted","message":"ingestion rate limit (4 MiB) exceeded"}`, true},
		{422, "invalid profile", false},
	} {
		if got := transient(&StatusError{Code: tt.code, Body: tt.body}); got != tt.want {
			t.Errorf("%d %q: transient = %v, want %v", tt.code, tt.body, got, tt.want)
		}
	}
}
