package web

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/profiles"
)

func newTestServer(t *testing.T) (*httptest.Server, *fixture) {
	t.Helper()
	f := writeFixture(t, t.TempDir())
	srv := httptest.NewServer(New(f.root, Options{MaxUpload: 1 << 20, Logf: t.Logf}))
	t.Cleanup(srv.Close)
	return srv, f
}

// client does not follow redirects, so tests see them.
var client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func get(t *testing.T, rawURL string) (int, http.Header, string) {
	t.Helper()
	resp, err := client.Get(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(body)
}

func caseURL(r *model.Run, i int) string {
	return "/runs/" + r.ID + "/cases/" + model.Slug(r.Cases[i].Name)
}

func TestRoutes(t *testing.T) {
	srv, f := newTestServer(t)
	full, small := f.full, f.small
	c0 := caseURL(full, 0)
	pair := "a=" + url.QueryEscape(full.ID+"/"+model.Slug(full.Cases[0].Name)) + "&b=" + url.QueryEscape(full.ID+"/"+model.Slug(full.Cases[1].Name))
	tests := []struct {
		name, path string
		status     int
		contains   []string
	}{
		{"runs", "/", 200, []string{full.ID, small.ID, "cipher-cache", "incomplete", "lab-1"}},
		{"runs filtered", "/?scenario=broken", 200, []string{f.broken}},
		{"runs filter no match", "/?scenario=nothing", 200, []string{"No runs of nothing"}},
		{"run", "/runs/" + full.ID, 200, []string{"keys=128 key=ssk threads=4", "time/op", "±", "<svg class=\"chart\"", "Scaling", "rwmutex"}},
		// The report's verdict and a case's own warning, next to its
		// group, as the CLI's table has them.
		// Run-level comparisons, internal/lab's, as perflab compare makes
		// them.
		{"run compare base", "/runs/" + full.ID + "/compare?base=mutex", 200, []string{"each variant against mutex", "time/op: ", "keys=128 key=ssk threads=1  rwmutex", "p="}},
		{"run compare default", "/runs/" + full.ID + "/compare", 200, []string{"each variant against mutex"}},
		{"run compare runs", "/runs/" + full.ID + "/compare?with=" + small.ID, 200, []string{"A: " + small.ID, "B: " + full.ID, "Mann–Whitney"}},
		{"run compare bad base", "/runs/" + full.ID + "/compare?base=mutx", 404, []string{"did you mean mutex?"}},
		{"run compare both", "/runs/" + full.ID + "/compare?base=mutex&with=" + small.ID, 400, []string{"not both"}},
		{"run compare missing run", "/runs/" + full.ID + "/compare?with=20990101-000000-x", 404, nil},
		{"run verdict", "/runs/" + full.ID, 200, []string{`<p class="verdict-line">fastest: `, `⚠ rwmutex: time/op&#39;s interval ±12% is wide`}},
		{"latest", "/runs/latest", 302, nil},
		// A skipped case is called so, as the CLI's table calls it.
		{"run with failures", "/runs/" + small.ID, 200, []string{"failed: panic: &lt;/script&gt;", "n/a at these parameters: no sharding below 256 keys", "incomplete", "skipped: not measured (the run stopped before this case ran)"}},
		{"failed case", caseURL(small, 2), 200, []string{"This case failed", "has no profiles"}},
		{"n/a case", caseURL(small, 3), 200, []string{"does not apply"}},
		{"skipped case", caseURL(small, 4), 200, []string{"This case was skipped: not measured"}},
		{"case", c0, 200, []string{"Top functions by self", "blockSHANI", "wall.pb.gz", "aria-current", "Profiling window: 1.01 s", "busy 97.0% of the window", "180 CPU samples", `<script type="application/json" id="flame-data">{"v":1,`}},
		{"case cpu", c0 + "?kind=cpu", 200, []string{"cpu.pb.gz"}},
		{"case mutex", c0 + "?kind=mutex", 200, []string{"delay (nanoseconds)"}},
		{"case bad kind", c0 + "?kind=heap", 404, []string{"has no"}},
		{"case sample types", c0 + "?kind=mutex", 200, []string{`aria-label="sample type"`, `href="` + c0 + `?kind=mutex&amp;type=contentions"`}},
		{"case sample type", c0 + "?kind=mutex&type=contentions", 200, []string{"contentions (count)", `/flame.json?kind=mutex&amp;type=contentions`, `/folded?kind=mutex&amp;type=contentions`}},
		{"case bad sample type", c0 + "?kind=mutex&type=inuse_space", 404, []string{`no sample type &#34;inuse_space&#34;`}},
		{"flame json sample type", c0 + "/flame.json?kind=mutex&type=contentions", 200, []string{`"type":"contentions"`}},
		{"flame json bad sample type", c0 + "/flame.json?kind=mutex&type=nope", 404, []string{`no sample type`}},
		{"folded sample type", c0 + "/folded?kind=mutex&type=contentions", 200, []string{"runtime.goexit;main.worker;"}},
		{"svg sample type", c0 + "/flame.svg?kind=mutex&type=contentions", 200, []string{"contentions (count)"}},
		{"case missing", "/runs/" + full.ID + "/cases/variant=nope", 404, []string{"no case"}},
		{"folded", c0 + "/folded", 200, []string{"runtime.goexit;main.worker;"}},
		{"profile file", "/runs/" + full.ID + "/files/" + full.Cases[0].Profiles["wall"], 200, nil},
		{"svg file", "/runs/" + full.ID + "/files/" + full.Cases[0].Flame, 200, []string{"<svg"}},
		{"results", "/runs/" + full.ID + "/files/results.txt", 200, []string{"BenchmarkCipherCache/variant=mutex/keys=128/key=ssk/threads=1-"}},
		{"file missing", "/runs/" + full.ID + "/files/cases/x/wall.pb.gz", 404, nil},
		{"file type refused", "/runs/" + full.ID + "/files/cases/x/wall.exe", 404, []string{"none of those"}},
		// The page, with the failure's status (issue 26: it was 200).
		{"broken profile", "/runs/" + f.broken + "/cases/variant=x", 422, []string{"the wall profile of variant=x: decompressing profile"}},
		{"broken flame json", "/runs/" + f.broken + "/cases/variant=x/flame.json", 422, []string{"error"}},
		// Not the newest run (small, interrupted), nor mutex at one
		// goroutine count against mutex at another: two variants at the
		// same parameters of the newest complete run.
		{"compare picker", "/compare", 200, []string{"<optgroup", full.ID,
			`value="` + full.ID + `/variant=mutex,keys=128,key=ssk,threads=1" selected`, `value="` + full.ID + `/variant=rwmutex,keys=128,key=ssk,threads=1" selected`}},
		{"run compare form", "/runs/" + full.ID, 200, []string{
			`value="` + full.ID + `/variant=mutex,keys=128,key=ssk,threads=1" selected`, `value="` + full.ID + `/variant=rwmutex,keys=128,key=ssk,threads=1" selected`}},
		{"compare", "/compare?" + pair, 200, []string{"verdict", "p=", "Differential flame graph"}},
		// A case the interrupted run never measured: say so, not an
		// empty table.
		{"compare unmeasured", "/compare?a=" + url.QueryEscape(full.ID+"/"+model.Slug(full.Cases[0].Name)) + "&b=" + url.QueryEscape(small.ID+"/"+model.Slug(small.Cases[4].Name)), 200, []string{
			"Nothing to compare: the new case, variant=sum256/keys=128/key=ssk/threads=4 in run " + small.ID + ", has no results — skipped: not measured (the run stopped before this case ran).",
			`<span class="tag warn">skipped</span>`, "variant=sum256/keys=128/key=ssk/threads=4 · " + small.ID + " · skipped", small.ID + " (incomplete)"}},
		{"compare one side", "/compare?a=" + url.QueryEscape(full.ID+"/"+model.Slug(full.Cases[0].Name)), 400, []string{"pick the new case"}},
		{"compare bad ref", "/compare?a=nope/&b=nope/", 400, []string{"does not name a case"}},
		{"compare two runs", "/compare?a=" + full.ID + "&b=" + small.ID, 302, []string{`href="/runs/` + small.ID + `/compare?with=` + full.ID + `"`}},
		{"compare missing run", "/compare?a=20990101-000000-x/y&b=20990101-000000-x/y", 404, nil},
		{"upload form", "/upload", 200, []string{"multipart/form-data"}},
		{"upload gone", "/upload/0123456789abcdef", 404, []string{"no longer in memory"}},
		{"static css", "/static/style.css", 200, []string{"--fg"}},
		{"static js", "/static/app.js", 200, []string{"textContent"}},
		{"not found", "/nope", 404, []string{"no page"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, _, body := get(t, srv.URL+tt.path)
			if status != tt.status {
				t.Fatalf("GET %s: status %d, want %d\n%s", tt.path, status, tt.status, body)
			}
			// A case whose profile fails is still its case page, with
			// the failure in place of the graph.
			if status >= 400 && !strings.Contains(h1(body), fmt.Sprint(status)) && !strings.Contains(tt.path, "flame.json") && tt.name != "broken profile" {
				t.Errorf("GET %s: error %d is not a page with its status", tt.path, status)
			}
			for _, s := range tt.contains {
				if !strings.Contains(body, s) {
					t.Errorf("GET %s: body lacks %q", tt.path, s)
				}
			}
		})
	}
}

func h1(body string) string {
	_, after, _ := strings.Cut(body, "<h1>")
	h, _, _ := strings.Cut(after, "</h1>")
	return h
}

func TestMethods(t *testing.T) {
	srv, f := newTestServer(t)
	for _, tt := range []struct {
		method, path string
		status       int
	}{
		{"POST", "/runs/" + f.full.ID, http.StatusMethodNotAllowed},
		{"DELETE", "/", http.StatusMethodNotAllowed},
		{"GET", "/upload/abc/save", http.StatusMethodNotAllowed},
		{"PUT", "/upload", http.StatusMethodNotAllowed},
		{"POST", "/nowhere", http.StatusNotFound},
	} {
		req, _ := http.NewRequest(tt.method, srv.URL+tt.path, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || !strings.Contains(h1(string(body)), fmt.Sprint(tt.status)) {
			t.Errorf("%s %s: status %d, want %d as a page", tt.method, tt.path, resp.StatusCode, tt.status)
		}
		if tt.status == http.StatusMethodNotAllowed && resp.Header.Get("Allow") == "" {
			t.Errorf("%s %s: 405 without Allow", tt.method, tt.path)
		}
	}
}

func TestBadIDs(t *testing.T) {
	srv, f := newTestServer(t)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o644)
	// A run directory that is a symlink out of the store, and a file inside
	// a run that is one.
	if err := os.Symlink(filepath.Join(f.root, f.full.ID), filepath.Join(f.root, "linked-run")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(f.root, f.full.ID, "leak.txt")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		status     int
	}{
		{"dot dot", "/runs/..", 307}, // ServeMux cleans it to "/"
		{"encoded dot dot", "/runs/%2e%2e", 400},
		{"encoded slash", "/runs/..%2f..%2fetc", 400},
		{"absolute", "/runs/%2fetc%2fpasswd", 400},
		{"hidden", "/runs/.20261130-090000-cipher-cache.partial", 400},
		{"nul", "/runs/a%00b", 400},
		{"backslash", "/runs/a%5c..%5cb", 400},
		{"unknown", "/runs/20990101-000000-none", 404},
		{"symlinked run", "/runs/linked-run", 403},
		{"symlinked file", "/runs/" + f.full.ID + "/files/leak.txt", 400},
		{"file traversal", "/runs/" + f.full.ID + "/files/%2e%2e/%2e%2e/secret.txt", 400},
		{"file absolute", "/runs/" + f.full.ID + "/files/%2fetc%2fpasswd.txt", 400},
		{"file hidden", "/runs/" + f.full.ID + "/files/.tmp-1.json", 400},
		{"case traversal", "/runs/" + f.full.ID + "/cases/..%2f..%2fx", 404},
		{"compare traversal", "/compare?a=..%2fx/y&b=..%2fx/y", 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, _, body := get(t, srv.URL+tt.path)
			if status != tt.status {
				t.Fatalf("GET %s: status %d, want %d\n%s", tt.path, status, tt.status, body)
			}
			if strings.Contains(body, "secret") && !strings.Contains(body, "secret.txt") {
				t.Fatalf("GET %s leaked the file outside the store", tt.path)
			}
			if status != 307 && !strings.Contains(body, "<h1>") {
				t.Errorf("GET %s: error is not a page", tt.path)
			}
		})
	}
}

func TestRemoteClientsRefused(t *testing.T) {
	f := writeFixture(t, t.TempDir())
	tests := []struct {
		name, remote, host string
		allow              bool
		status             int
	}{
		{"loopback v4", "127.0.0.1:5000", "127.0.0.1:8080", false, 200},
		{"loopback v6", "[::1]:5000", "localhost:8080", false, 200},
		{"remote", "192.0.2.7:5000", "127.0.0.1:8080", false, 403},
		{"rebinding host", "127.0.0.1:5000", "attacker.example:8080", false, 421},
		{"remote allowed", "192.0.2.7:5000", "lab.example:8080", true, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := New(f.root, Options{AllowRemote: tt.allow, Logf: t.Logf})
			req := httptest.NewRequest("GET", "/", nil)
			req.RemoteAddr, req.Host = tt.remote, tt.host
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
		})
	}
	for addr, want := range map[string]bool{"127.0.0.1:8080": true, "localhost:80": true, "[::1]:1": true, ":8080": false, "0.0.0.0:8080": false, "192.0.2.1:80": false} {
		if got := LoopbackOnly(addr); got != want {
			t.Errorf("LoopbackOnly(%q) = %v, want %v", addr, got, want)
		}
	}
}

// postFile uploads data as the "profile" field.
func postFile(t *testing.T, target string, data []byte, save bool, header http.Header) *http.Response {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if save {
		mw.WriteField("save", "1")
	}
	fw, _ := mw.CreateFormFile("profile", "../../"+hostile+".pb.gz")
	fw.Write(data)
	mw.Close()
	req, _ := http.NewRequest("POST", target, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestUpload(t *testing.T) {
	srv, f := newTestServer(t)
	prof := testProfile(t, "cpu", 1)

	resp := postFile(t, srv.URL+"/upload", prof, false, nil)
	if resp.StatusCode != http.StatusSeeOther {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("upload: status %d: %s", resp.StatusCode, b)
	}
	view := resp.Header.Get("Location")
	if !regexp.MustCompile(`^/upload/[0-9a-f]{32}$`).MatchString(view) {
		t.Fatalf("upload redirected to %q", view)
	}
	status, _, body := get(t, srv.URL+view)
	if status != 200 || !strings.Contains(body, "blockSHANI") || !strings.Contains(body, "Save to the run store") {
		t.Fatalf("upload view: %d\n%s", status, body)
	}
	// Each sample type has its own view, flame graph and category table.
	for path, want := range map[string]string{
		view + "?type=samples":                "samples (count) · total 10",
		view + "/flame.json?type=samples":     `"type":"samples"`,
		view + "/flame.json":                  `"type":"time"`,
		view + "?type=alloc_space":            "no sample type",
		view + "/flame.json?type=alloc_space": "no sample type",
	} {
		status, _, body := get(t, srv.URL+path)
		if !strings.Contains(body, want) || (status == 200) != !strings.Contains(want, "no sample type") {
			t.Errorf("GET %s: %d, want %q in\n%.300s", path, status, want, body)
		}
	}
	if strings.Contains(body, "<img src=x") {
		t.Fatal("hostile function name reached the page unescaped")
	}
	runs, _, _ := store.Open(f.root).List()
	if len(runs) != 3 {
		t.Fatalf("an upload without save changed the store: %d runs", len(runs))
	}

	// Saving stores a run and shows its case.
	req, _ := http.NewRequest("POST", srv.URL+view+"/save", nil)
	resp2, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp2.Header.Get("Location"), "/runs/") {
		t.Fatalf("save: %d %q", resp2.StatusCode, resp2.Header.Get("Location"))
	}
	status, _, body = get(t, srv.URL+resp2.Header.Get("Location"))
	if status != 200 || !strings.Contains(body, "blockSHANI") {
		t.Fatalf("saved case: %d\n%s", status, body)
	}

	// Upload and save in one go.
	resp = postFile(t, srv.URL+"/upload", prof, true, nil)
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/runs/") {
		t.Fatalf("upload+save: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}

	tests := []struct {
		name   string
		data   []byte
		header http.Header
		status int
	}{
		{"too large", bytes.Repeat([]byte("x"), 2<<20), nil, http.StatusRequestEntityTooLarge},
		{"not a profile", []byte("hello"), nil, http.StatusUnprocessableEntity},
		{"empty", []byte{}, nil, http.StatusUnprocessableEntity},
		{"gzip garbage", []byte("\x1f\x8b\x08\x00garbage"), nil, http.StatusUnprocessableEntity},
		{"cross-site", prof, http.Header{"Sec-Fetch-Site": {"cross-site"}, "Origin": {"http://attacker.example"}}, http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := postFile(t, srv.URL+"/upload", tt.data, false, tt.header)
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, b)
			}
		})
	}

	// A file name longer than a directory name may be is cut, not a 500
	// with a partial run left in the store.
	var lb bytes.Buffer
	mw := multipart.NewWriter(&lb)
	mw.WriteField("save", "1")
	fw, _ := mw.CreateFormFile("profile", strings.Repeat("é", 200)+".pb.gz")
	fw.Write(prof)
	mw.Close()
	req, _ = http.NewRequest("POST", srv.URL+"/upload", &lb)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	respLong, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	respLong.Body.Close()
	if respLong.StatusCode != http.StatusSeeOther {
		t.Errorf("upload+save with a 400-byte name: status %d", respLong.StatusCode)
	}
	if entries, _ := os.ReadDir(f.root); slices.ContainsFunc(entries, func(e os.DirEntry) bool { return strings.HasSuffix(e.Name(), ".partial") }) {
		t.Error("a partial run was left in the store")
	}

	// An uncompressed profile is stored gzipped, as Go writes them.
	p, _ := profiles.Read(bytes.NewReader(prof))
	var raw bytes.Buffer
	p.WriteUncompressed(&raw)
	resp = postFile(t, srv.URL+"/upload", raw.Bytes(), true, nil)
	loc := resp.Header.Get("Location")
	id, slug, _ := strings.Cut(strings.TrimPrefix(loc, "/runs/"), "/cases/")
	stored, err := os.ReadFile(filepath.Join(f.root, id, "cases", slug, "profile.pb.gz"))
	if resp.StatusCode != http.StatusSeeOther || err != nil || len(stored) < 2 || stored[0] != 0x1f {
		t.Errorf("uncompressed upload: %d %q, stored: %v", resp.StatusCode, loc, err)
	}

	// A gzip bomb: a small upload that expands past the limit.
	defer func(old int64) { maxProfileBytes = old }(maxProfileBytes)
	maxProfileBytes = 4 << 20
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	zw.Write(make([]byte, 8<<20))
	zw.Close()
	resp = postFile(t, srv.URL+"/upload", bomb.Bytes(), false, nil)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(b), "larger than") {
		t.Errorf("gzip bomb: status %d: %s", resp.StatusCode, b)
	}

	// A sample bomb: 200,000 tiny samples of 16 frames gzip to a few KB
	// and would take a hundred MB decoded; the server refuses them as the
	// decoder's budget runs out, before the memory is taken.
	defer func(old int64) { maxProfileMemory = old }(maxProfileMemory)
	maxProfileMemory = 16 << 20
	fn := &profile.Function{ID: 1, Name: "f"}
	l := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
	many := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}}, Function: []*profile.Function{fn}, Location: []*profile.Location{l}}
	for range 200_000 {
		many.Sample = append(many.Sample, &profile.Sample{Location: slices.Repeat([]*profile.Location{l}, 16), Value: []int64{1}})
	}
	var manyGz bytes.Buffer
	many.Write(&manyGz)
	resp = postFile(t, srv.URL+"/upload", manyGz.Bytes(), false, nil)
	b, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(b), "of memory to draw") {
		t.Errorf("sample bomb (%d bytes): status %d: %s", manyGz.Len(), resp.StatusCode, b)
	}

	req, _ = http.NewRequest("POST", srv.URL+"/upload", strings.NewReader("x"))
	req.Header.Set("Content-Type", "text/plain")
	resp3, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp3.Body.Close()
	if resp3.StatusCode != http.StatusBadRequest {
		t.Errorf("non-multipart upload: status %d, want 400", resp3.StatusCode)
	}
}

func TestHostileNamesEscaped(t *testing.T) {
	srv, f := newTestServer(t)
	for _, path := range []string{"/runs/" + f.small.ID, caseURL(f.small, 1), caseURL(f.small, 1) + "?kind=cpu",
		"/compare?a=" + url.QueryEscape(f.small.ID+"/"+model.Slug(f.small.Cases[0].Name)) + "&b=" + url.QueryEscape(f.small.ID+"/"+model.Slug(f.small.Cases[1].Name))} {
		status, h, body := get(t, srv.URL+path)
		if status != 200 {
			t.Fatalf("GET %s: %d\n%s", path, status, body)
		}
		if strings.Contains(body, "<img src=x") || strings.Contains(body, `</script><img`) {
			t.Errorf("GET %s: a hostile name reached the page unescaped", path)
		}
		if !strings.Contains(body, "&lt;img src=x") && !strings.Contains(body, `\u003cimg`) {
			t.Errorf("GET %s: the hostile name is not on the page at all (test is not testing)", path)
		}
		if !strings.Contains(h.Get("Content-Security-Policy"), "script-src 'self'") {
			t.Errorf("GET %s: no Content-Security-Policy", path)
		}
	}
	// Flame JSON sits in the page's script context: no raw '<' at all.
	for _, path := range []string{caseURL(f.small, 1) + "/flame.json?kind=wall",
		"/compare/flame.json?a=" + url.QueryEscape(f.small.ID+"/"+model.Slug(f.small.Cases[0].Name)) + "&b=" + url.QueryEscape(f.small.ID+"/"+model.Slug(f.small.Cases[1].Name)) + "&kind=cpu"} {
		status, h, body := get(t, srv.URL+path)
		if status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
			t.Fatalf("GET %s: %d %s", path, status, h.Get("Content-Type"))
		}
		if strings.ContainsAny(body, "<>") || !strings.Contains(body, `\u003cimg src=x`) {
			t.Errorf("GET %s: hostile name not escaped in JSON", path)
		}
	}
	// The generated SVG escapes it and cannot run script anyway.
	status, h, body := get(t, srv.URL+caseURL(f.small, 1)+"/flame.svg?kind=wall")
	if status != 200 || strings.Contains(body, "<img") || !strings.Contains(h.Get("Content-Security-Policy"), "sandbox") {
		t.Errorf("flame.svg: status %d, CSP %q, raw <img: %v", status, h.Get("Content-Security-Policy"), strings.Contains(body, "<img"))
	}
}

// TestParallelFetch crawls every URL reachable from the runs page and
// fetches them all at once, several times: under -race this finds shared
// state in the handlers.
func TestParallelFetch(t *testing.T) {
	srv, f := newTestServer(t)
	hrefRE := regexp.MustCompile(`(?:href|src|data-src)="(/[^"]*)"`)
	seen := map[string]bool{"/": true}
	queue := []string{"/"}
	for len(queue) > 0 && len(seen) < 400 {
		u := queue[0]
		queue = queue[1:]
		status, h, body := get(t, srv.URL+u)
		if status >= 400 && !strings.Contains(u, "flame.json") && !strings.Contains(u, f.broken) {
			t.Errorf("GET %s: %d", u, status)
		}
		if !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
			continue
		}
		for _, m := range hrefRE.FindAllStringSubmatch(body, -1) {
			link := strings.ReplaceAll(m[1], "&amp;", "&")
			if !seen[link] {
				seen[link] = true
				queue = append(queue, link)
			}
		}
	}
	if len(seen) < 50 {
		t.Fatalf("crawl found only %d URLs", len(seen))
	}
	var wg sync.WaitGroup
	errs := make(chan string, len(seen)*3)
	for round := 0; round < 3; round++ {
		for u := range seen {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := http.Get(srv.URL + u)
				if err != nil {
					errs <- err.Error()
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented {
					errs <- u + ": " + resp.Status
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	t.Logf("fetched %d URLs ×3 in parallel", len(seen))
}

// TestVariantColoursAreNotCategories: no variant colour is near a
// category colour, so charts of variants and of budgets never mix up.
func TestVariantColoursAreNotCategories(t *testing.T) {
	rgb := func(hex string) (r, g, b float64) {
		var x, y, z int
		fmt.Sscanf(hex, "#%02x%02x%02x", &x, &y, &z)
		return float64(x), float64(y), float64(z)
	}
	for _, v := range variantPalette {
		for _, c := range profiles.Categories {
			r1, g1, b1 := rgb(v)
			r2, g2, b2 := rgb(c.Color())
			if d := math.Sqrt((r1-r2)*(r1-r2) + (g1-g2)*(g1-g2) + (b1-b2)*(b1-b2)); d < 60 {
				t.Errorf("variant colour %s is %.0f from %s's %s", v, d, c, c.Color())
			}
		}
	}
}

func TestBreakable(t *testing.T) {
	for in, want := range map[string]string{
		"crypto/internal/fips140/sha256.blockSHANI": "crypto/<wbr>internal/<wbr>fips140/<wbr>sha256.<wbr>blockSHANI",
		"sync.(*Mutex).Lock":                        "sync.<wbr>(<wbr>*<wbr>Mutex)<wbr>.<wbr>Lock",
		"</script><img onerror=x>":                  "&lt;/<wbr>script&gt;&lt;img onerror=x&gt;",
	} {
		if got := string(breakable(in)); got != want {
			t.Errorf("breakable(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUploadNameValidUTF8(t *testing.T) {
	for in, want := range map[string]string{"cpu\xff\xfe.pb.gz": "cpu\uFFFD.pb.gz", "": "unnamed profile", "ok.pb": "ok.pb"} {
		if got := orUnnamed(in); got != want {
			t.Errorf("orUnnamed(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLatestAsCLI: /runs/latest is the run the CLI's latest names, the
// newest that measured something, not a newer run whose cases all failed.
func TestLatestAsCLI(t *testing.T) {
	dir := t.TempDir()
	st := store.Open(dir)
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	save := func(r *model.Run) {
		w, err := st.Create(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	good := &model.Run{ID: store.NewID(t0, "cipher-cache"), Scenario: "cipher-cache", Started: t0, Complete: true,
		Cases: []model.Case{{Name: "variant=mutex/threads=1", Variant: "mutex", Threads: 1, Status: model.StatusOK,
			Reps: []model.Rep{{Ops: 100, Metrics: map[string]float64{"ns/op": 100}}}}}}
	failed := &model.Run{ID: store.NewID(t0.Add(time.Hour), "cipher-cache"), Scenario: "cipher-cache", Started: t0.Add(time.Hour), Complete: true,
		Cases: []model.Case{{Name: "variant=mutex/threads=1", Variant: "mutex", Threads: 1, Status: model.StatusFailed, Error: "boom"}}}
	save(good)
	save(failed)
	want, err := st.Load(store.Latest)
	if err != nil || want.ID != good.ID {
		t.Fatalf("the CLI's latest is %v, %v; want %s", want, err, good.ID)
	}
	srv := httptest.NewServer(New(dir, Options{Logf: t.Logf}))
	defer srv.Close()
	status, h, _ := get(t, srv.URL+"/runs/latest")
	if loc := h.Get("Location"); status != http.StatusFound || loc != "/runs/"+good.ID {
		t.Errorf("/runs/latest: %d to %q, want 302 to /runs/%s", status, loc, good.ID)
	}
}

// TestCompareTwoRunsDirection: /compare?a=A&b=B reads as perflab compare
// A B does, A the base and B the new run. The first redirect put them the
// other way round, and every verdict of the page was the CLI's reversed.
func TestCompareTwoRunsDirection(t *testing.T) {
	srv, f := newTestServer(t)
	resp, err := http.Get(srv.URL + "/compare?a=" + f.full.ID + "&b=" + f.small.ID) // follows the redirect
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	body := string(b)
	a, bb := strings.Index(body, "A: "+f.full.ID), strings.Index(body, "B: "+f.small.ID)
	if resp.StatusCode != 200 || a < 0 || bb < 0 {
		t.Fatalf("status %d; A: %s at %d, B: %s at %d", resp.StatusCode, f.full.ID, a, f.small.ID, bb)
	}
}

// TestEmptyStoreMakeRun: an empty store's page says how to make a run
// with the command the server was given (a module of one's own runs
// perflab as "go run ." with its own scenario), escaped.
func TestEmptyStoreMakeRun(t *testing.T) {
	for _, tt := range []struct{ makeRun, want string }{
		{"", "<code>perflab run cipher-cache</code>"},
		{"go run . run my<scn>", "<code>go run . run my&lt;scn&gt;</code>"},
	} {
		srv := httptest.NewServer(New(t.TempDir(), Options{MakeRun: tt.makeRun, Logf: t.Logf}))
		_, _, body := get(t, srv.URL+"/")
		srv.Close()
		if !strings.Contains(body, tt.want) {
			t.Errorf("MakeRun %q: page lacks %q", tt.makeRun, tt.want)
		}
	}
}
