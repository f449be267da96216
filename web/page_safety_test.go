package web

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/textsafe"
)

// TestPageSafety holds issue 26's small breaks of the pages: a corrupt
// run.json answered 500 (now 422 with the reason); a bidirectional override
// or a raw control character in a stored name reached the pages (now
// U+FFFD); a case page whose profile cannot be read answered 200 (now the
// failure's status, with the page saying why).
func TestPageSafety(t *testing.T) {
	st := store.Open(t.TempDir())
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	name := "variant=a\u202eb\x1b[2J\x07/threads=1"
	run := &model.Run{ID: store.NewID(t0, "safety"), Scenario: "safety\u2066x", Started: t0, Finished: t0, Complete: true,
		Note: "note \u202egnp.exe\x1b]0;title\x07 \u0085end",
		Cases: []model.Case{
			{Name: name, Variant: "a\u202eb", Threads: 1, Status: model.StatusOK, Profiles: map[string]string{"cpu": "cases/x/cpu.pb.gz"}},
			{Name: "variant=broken/threads=1", Variant: "broken", Threads: 1, Status: model.StatusOK, Profiles: map[string]string{"cpu": "cases/y/cpu.pb.gz"}},
		}}
	w, err := st.Create(run)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteFile("cases/x/cpu.pb.gz", testProfile(t, "cpu", 0))
	w.WriteFile("cases/y/cpu.pb.gz", []byte("\x1f\x8bnot a profile at all"))
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	for id, content := range map[string]string{
		"20261201-090001-corrupt": `{"id": "20261201-090001-corrupt", "cases": [`,
		"20261201-090002-other":   `{"id": "20261201-090003-elsewhere"}`,
	} {
		os.MkdirAll(filepath.Join(st.Root, id), 0o755)
		os.WriteFile(filepath.Join(st.Root, id, "run.json"), []byte(content), 0o644)
	}
	srv := httptest.NewServer(New(st.Root, Options{Logf: t.Logf}))
	defer srv.Close()

	for _, tc := range []struct {
		path   string
		status int
		want   string
	}{
		{"/runs/20261201-090001-corrupt", http.StatusUnprocessableEntity, "corrupt run.json"},
		{"/runs/20261201-090002-other", http.StatusUnprocessableEntity, "it names run"},
		{"/runs/" + run.ID, http.StatusOK, ""},
		{caseURL(run, 0), http.StatusOK, ""},
		{"/", http.StatusOK, ""},
		{"/compare?a=" + run.ID + "/" + model.Slug(name) + "&b=" + run.ID + "/" + model.Slug(run.Cases[1].Name), http.StatusOK, ""},
		{caseURL(run, 1), http.StatusUnprocessableEntity, "the cpu profile of variant=broken/threads=1"},
	} {
		code, _, body := get(t, srv.URL+tc.path)
		if code != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("GET %s: %d, want %d with %q", tc.path, code, tc.status, tc.want)
		}
		for _, bad := range []string{"\u202e", "\u2066", "\x1b", "\x07", "\u0085"} {
			if strings.Contains(body, bad) {
				t.Errorf("GET %s: the page holds %q raw", tc.path, bad)
			}
		}
	}
}

// TestFlameJSONSafe: the names a flame graph draws come through its JSON,
// fetched or inlined: a bidirectional override in a function name becomes
// U+FFFD there too (issue 26).
func TestFlameJSONSafe(t *testing.T) {
	fn := &profile.Function{ID: 1, Name: "main.\u202egnp.exe"}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}}, Function: []*profile.Function{fn}, Location: []*profile.Location{loc},
		Sample: []*profile.Sample{{Location: []*profile.Location{loc}, Value: []int64{1}}}}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	id, slug := storeProfile(t, root, buf.Bytes())
	s := New(root, Options{Logf: t.Logf})
	srv := httptest.NewServer(s)
	defer srv.Close()
	resp := postFile(t, srv.URL+"/upload", buf.Bytes(), false, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("upload: %d", resp.StatusCode)
	}
	for _, u := range []string{"/runs/" + id + "/cases/" + slug + "/flame.json", resp.Header.Get("Location") + "/flame.json"} {
		code, _, body := get(t, srv.URL+u)
		if code != http.StatusOK || strings.Contains(body, "\u202e") || !strings.Contains(body, "main.\uFFFDgnp.exe") {
			t.Errorf("GET %s: %d, want the name with U+FFFD for U+202E:\n%s", u, code, textsafe.Clip(body, 500))
		}
	}
}
