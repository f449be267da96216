package web

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/store"
)

// TestBenchCaseNames: a bench run's case answers, on every case route, to
// go test's names as the CLI takes them (perflab show RUN BenchmarkX-2),
// by a redirect to the case's own address; a name that matches none is a
// 404 that says the closest.
func TestBenchCaseNames(t *testing.T) {
	srv, r, name := benchRunServer(t)
	own := "/runs/" + r.ID + "/cases/" + model.Slug(name)
	for _, tt := range []struct {
		typed, rest, query string
	}{
		{"BenchmarkMutex/size=64-2", "", ""},
		{"Mutex/size=64-2", "", "kind=cpu"},
		{"Mutex/size=64", "/flame.json", "kind=cpu&type=samples"},
	} {
		path := "/runs/" + r.ID + "/cases/" + url.PathEscape(tt.typed) + tt.rest
		if tt.query != "" {
			path += "?" + tt.query
		}
		status, h, _ := get(t, srv.URL+path)
		want := own + tt.rest
		if tt.query != "" {
			want += "?" + tt.query
		}
		if status != http.StatusFound || h.Get("Location") != want {
			t.Errorf("GET %s: %d to %q, want %d to %q", path, status, h.Get("Location"), http.StatusFound, want)
		}
	}
	// Typed with its '/' unescaped, as in the CLI, the name still finds
	// its case's page; one that names none is a 404 naming the cases.
	for _, tt := range []struct {
		path, want string
	}{
		{"/runs/" + r.ID + "/cases/BenchmarkMutex/size=64-2", own},
		{"/runs/" + r.ID + "/cases/Mutex/size=64?kind=cpu", own + "?kind=cpu"},
	} {
		if status, h, _ := get(t, srv.URL+tt.path); status != http.StatusFound || h.Get("Location") != tt.want {
			t.Errorf("GET %s: %d to %q, want %d to %q", tt.path, status, h.Get("Location"), http.StatusFound, tt.want)
		}
	}
	if status, _, body := get(t, srv.URL+"/runs/"+r.ID+"/cases/Mutx/size=64"); status != http.StatusNotFound || !strings.Contains(body, "Mutex") {
		t.Errorf("GET an unknown slashed case: %d, want 404 naming the closest case:\n%s", status, body)
	}
	status, _, body := get(t, srv.URL+"/runs/"+r.ID+"/cases/Mutx")
	if status != http.StatusNotFound || !strings.Contains(body, "Mutex") {
		t.Errorf("GET an unknown case: %d, want 404 naming the closest case:\n%s", status, body)
	}
	// The compare page takes the same names for its sides.
	if status, _, body := get(t, srv.URL+"/compare?a="+url.QueryEscape(r.ID+"/BenchmarkMutex/size=64-2")+"&b="+url.QueryEscape(r.ID+"/Mutex/size=64")); status != http.StatusOK || !strings.Contains(body, `href="`+own+`"`) {
		t.Errorf("compare by go test names: %d, want 200 linking the case's page\n%s", status, body)
	}
	if status, _, body := get(t, srv.URL+"/compare?a="+url.QueryEscape(r.ID+"/Mutx")+"&b="+url.QueryEscape(r.ID+"/Mutex")); status != http.StatusNotFound || !strings.Contains(body, "Mutex") {
		t.Errorf("compare with an unknown case: %d, want 404 naming the closest:\n%s", status, body)
	}
	// The page the redirect names is the case's.
	if status, _, body := get(t, srv.URL+own); status != http.StatusOK || !strings.Contains(body, "Mutex") {
		t.Errorf("GET %s: %d\n%s", own, status, body)
	}
}

// TestLatestCaseNameWithSlash: /runs/latest/cases/NAME sends NAME on as
// it was typed, escaped: a sub-benchmark's go test name and a case's full
// name both have a '/', sent as %2F in their one path segment. The latest
// redirect used to unescape it, so the case became two segments and a 404.
func TestLatestCaseNameWithSlash(t *testing.T) {
	srv, r, name := benchRunServer(t)
	own := "/runs/" + r.ID + "/cases/" + model.Slug(name)
	for _, typed := range []string{"BenchmarkMutex/size=64-2", name} {
		path := "/runs/latest/cases/" + url.PathEscape(typed)
		status, h, _ := get(t, srv.URL+path)
		if want := "/runs/" + r.ID + "/cases/" + url.PathEscape(typed); status != http.StatusFound || h.Get("Location") != want {
			t.Errorf("GET %s: %d to %q, want %d to %q", path, status, h.Get("Location"), http.StatusFound, want)
		}
		resp, err := http.Get(srv.URL + path) // following every redirect
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		// A full name is served where it is; a go test name is sent on to
		// the case's own address.
		if end := resp.Request.URL.EscapedPath(); resp.StatusCode != http.StatusOK || typed != name && end != own {
			t.Errorf("GET %s: ends at %s with %d, want %s with 200", path, end, resp.StatusCode, own)
		}
	}
}

// benchRunServer serves a store holding one perflab bench run, whose one
// case is go test's BenchmarkMutex/size=64-2, and returns the server, the
// run and the case's name.
func benchRunServer(t *testing.T) (*httptest.Server, *model.Run, string) {
	t.Helper()
	root := t.TempDir()
	st := store.Open(root)
	started := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	r := &model.Run{ID: store.NewID(started, "bench"), Scenario: "bench", Started: started, Finished: started.Add(time.Minute), Complete: true}
	w, err := st.Create(r)
	if err != nil {
		t.Fatal(err)
	}
	name := "pkg=example.com/m/Mutex/size=64/threads=2"
	r.Cases = []model.Case{{Name: name, Bench: "BenchmarkMutex/size=64-2", Variant: "Mutex", Threads: 2, Status: model.StatusOK,
		Params: map[string]string{"size": "64"}, Profiles: map[string]string{}, Reps: []model.Rep{{Metrics: map[string]float64{"ns/op": 1}}}}}
	if err := w.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(root, Options{MaxUpload: 1 << 20, Logf: t.Logf}))
	t.Cleanup(srv.Close)
	return srv, r, name
}
