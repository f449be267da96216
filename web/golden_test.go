package web

import (
	"bytes"
	"flag"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/model"
)

var update = flag.Bool("update", false, "rewrite the golden pages under testdata/pages")

// TestPageGoldens: the pages a user reads — the run list, a run, a case
// and a comparison — against golden files (go test ./web -update rewrites
// them; review the diff). The store's temporary path and the server's
// address are replaced by placeholders, so the pages are the same on
// every machine.
func TestPageGoldens(t *testing.T) {
	srv, f := newTestServer(t)
	full := f.full
	pair := "a=" + url.QueryEscape(full.ID+"/"+model.Slug(full.Cases[0].Name)) + "&b=" + url.QueryEscape(full.ID+"/"+model.Slug(full.Cases[1].Name))
	base := regexp.MustCompile(`127\.0\.0\.1:\d+`)
	for _, tt := range []struct{ name, path string }{
		{"runs.html", "/"},
		{"run.html", "/runs/" + full.ID},
		{"case.html", caseURL(full, 0)},
		{"compare.html", "/compare?" + pair},
		{"runcompare.html", "/runs/" + full.ID + "/compare?base=mutex"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, _, body := get(t, srv.URL+tt.path)
			if status != 200 {
				t.Fatalf("GET %s: %d\n%s", tt.path, status, body)
			}
			body = strings.ReplaceAll(body, f.root, "STORE")
			body = base.ReplaceAllString(body, "HOST")
			path := filepath.Join("testdata", "pages", tt.name)
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./web -run TestPageGoldens -update)", err)
			}
			if !bytes.Equal([]byte(body), want) {
				t.Errorf("%s differs from its golden file; run go test ./web -run TestPageGoldens -update and review the diff", path)
			}
		})
	}
}
