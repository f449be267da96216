package web

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab"
)

// fakeProfiles is a ProfileSource that returns one fixture profile and
// records what it was asked.
type fakeProfiles struct {
	prof          *profile.Profile
	err           error
	selector, typ string
	since         time.Duration
}

func (f *fakeProfiles) URL() string { return "http://127.0.0.1:4040" }

func (f *fakeProfiles) Fetch(ctx context.Context, selector, typ string, since time.Duration) (*profile.Profile, error) {
	f.selector, f.typ, f.since = selector, typ, since
	return f.prof, f.err
}

func postForm(t *testing.T, target string, form url.Values) (int, http.Header, string) {
	t.Helper()
	resp, err := client.PostForm(target, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	body.ReadFrom(resp.Body)
	return resp.StatusCode, resp.Header, body.String()
}

func TestPyroscopePage(t *testing.T) {
	f := writeFixture(t, t.TempDir())
	prof, err := profile.ParseData(testProfile(t, "wall", 0))
	if err != nil {
		t.Fatal(err)
	}
	src := &fakeProfiles{prof: prof}
	srv := httptest.NewServer(New(f.root, Options{Profiles: src, Logf: t.Logf}))
	t.Cleanup(srv.Close)

	if _, _, body := get(t, srv.URL+"/upload"); !strings.Contains(body, `href="/pyroscope"`) {
		t.Errorf("the upload page does not link to /pyroscope")
	}
	status, _, body := get(t, srv.URL+"/pyroscope")
	if status != 200 || !strings.Contains(body, "http://127.0.0.1:4040") || !strings.Contains(body, `name="query"`) {
		t.Fatalf("GET /pyroscope: %d\n%s", status, body)
	}

	selector := `{service_name="perflab",variant="` + hostile + `"}`
	status, h, body := postForm(t, srv.URL+"/pyroscope", url.Values{"query": {selector}, "type": {"wall"}, "since": {"2h"}})
	if status != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), "/upload/") {
		t.Fatalf("POST /pyroscope: %d %s\n%s", status, h.Get("Location"), body)
	}
	if src.selector != selector || src.typ != "wall" || src.since != 2*time.Hour {
		t.Errorf("fetched %q %q %v", src.selector, src.typ, src.since)
	}
	status, _, body = get(t, srv.URL+h.Get("Location"))
	if status != 200 || !strings.Contains(body, "blockSHANI") {
		t.Fatalf("GET %s: %d\n%s", h.Get("Location"), status, body)
	}
	if strings.Contains(body, "<img src=x") || !strings.Contains(body, `pyroscope wall {service_name=&#34;perflab&#34;,variant=&#34;&lt;/script&gt;&lt;img src=x`) {
		t.Errorf("the selector is not on the page, or not escaped")
	}

	for _, tt := range []struct {
		name   string
		form   url.Values
		err    error
		status int
		msg    string
	}{
		{"bad range", url.Values{"query": {"{}"}, "type": {"wall"}, "since": {"yesterday"}}, nil, 400, "is not a time range"},
		{"no selector", url.Values{"query": {" "}, "type": {"wall"}, "since": {"1h"}}, nil, 400, "Enter a label selector"},
		{"no braces", url.Values{"query": {`scenario="x"`}, "type": {"wall"}, "since": {"1h"}}, nil, 400, "in braces: {scenario=&#34;x&#34;}"},
		{"server error", url.Values{"query": {"{}"}, "type": {"wall"}, "since": {"1h"}}, errors.New("no wall profiles match {}"), 502, "no wall profiles match {}"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src.err = tt.err
			status, _, body := postForm(t, srv.URL+"/pyroscope", tt.form)
			if status != tt.status || !strings.Contains(body, tt.msg) || !strings.Contains(body, `name="query"`) {
				t.Errorf("status %d, want %d and %q with the form:\n%s", status, tt.status, tt.msg, body)
			}
		})
	}
}

func TestPyroscopePageOff(t *testing.T) {
	srv, _ := newTestServer(t)
	for _, method := range []string{"GET", "POST"} {
		req, _ := http.NewRequest(method, srv.URL+"/pyroscope", nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body bytes.Buffer
		body.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 404 || !strings.Contains(body.String(), "--pyroscope URL") {
			t.Errorf("%s /pyroscope without a server: %d\n%s", method, resp.StatusCode, body.String())
		}
	}
}

func init() {
	// A scenario known only to this test binary, whose work is main.worker.
	perflab.Register(&perflab.Scenario{Name: "web-pyroscope-test", Doc: "test", Work: []string{`^main\.worker$`},
		Variants: []perflab.Variant{{Name: "v", New: func(perflab.Params) (perflab.Case, error) {
			return perflab.CaseFunc(func(int) perflab.Worker { return perflab.WorkerFunc(func(int) {}) }), nil
		}}}})
}

// TestPyroscopeScenarioWork: a profile read back with a selector naming a
// scenario is classified with that scenario's work patterns, as perflab
// flame --from-pyroscope does; it used to get the default rules only, so a
// lab run's work showed as "other".
func TestPyroscopeScenarioWork(t *testing.T) {
	f := writeFixture(t, t.TempDir())
	prof, err := profile.ParseData(testProfile(t, "wall", 0))
	if err != nil {
		t.Fatal(err)
	}
	s := New(f.root, Options{Profiles: &fakeProfiles{prof: prof}, Logf: t.Logf})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	work := func(selector string) float64 {
		t.Helper()
		status, h, body := postForm(t, srv.URL+"/pyroscope", url.Values{"query": {selector}, "type": {"wall"}, "since": {"1h"}})
		if status != http.StatusSeeOther {
			t.Fatalf("POST /pyroscope %s: %d\n%s", selector, status, body)
		}
		u := s.uploads.get(strings.TrimPrefix(h.Get("Location"), "/upload/"))
		if u == nil {
			t.Fatalf("no upload at %s", h.Get("Location"))
		}
		for _, b := range u.Views[u.Default].Budget {
			if b.Category == "work" {
				return b.NS
			}
		}
		return 0
	}
	plain, scenario := work(`{service_name="perflab"}`), work(`{service_name="perflab", scenario = "web-pyroscope-test"}`)
	if scenario <= plain {
		t.Errorf("work with the scenario's patterns %v, without %v: want more with", scenario, plain)
	}
}
