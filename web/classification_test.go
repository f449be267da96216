package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/profiles"
	"github.com/perflab/perflab/profiles/flame"
)

// storeClassified stores a run of scenario with one case (the test wall
// profile) recording classification, nil for a run stored before
// classifications were recorded.
func storeClassified(t *testing.T, st *store.Store, started time.Time, scenario string, c *model.Classification) *model.Run {
	t.Helper()
	name := "variant=v/threads=1"
	run := &model.Run{ID: store.NewID(started, scenario), Scenario: scenario, Started: started, Complete: true,
		Config: model.Config{Classification: c},
		Cases: []model.Case{{Name: name, Variant: "v", Threads: 1, Status: model.StatusOK,
			Profiles: map[string]string{"wall": "cases/" + model.Slug(name) + "/wall.pb.gz"}}}}
	w, err := st.Create(run)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile(run.Cases[0].Profiles["wall"], testProfile(t, "wall", 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return run
}

// catTotals reads a flame JSON's total per category.
func catTotals(t *testing.T, data []byte) map[string]int64 {
	t.Helper()
	var j struct {
		Cats      []string `json:"cats"`
		CatTotals []int64  `json:"catTotals"`
	}
	if err := json.Unmarshal(data, &j); err != nil {
		t.Fatalf("flame JSON: %v\n%.300s", err, data)
	}
	out := map[string]int64{}
	for i, c := range j.Cats {
		if i < len(j.CatTotals) && j.CatTotals[i] != 0 {
			out[c] = j.CatTotals[i]
		}
	}
	return out
}

// expectTotals is what the test profile's flame graph gives with a rules
// file's text and work patterns, built without the web package.
func expectTotals(t *testing.T, rulesText string, work ...string) map[string]int64 {
	t.Helper()
	rules, err := profiles.ParseRules(strings.NewReader(rulesText), "test.rules")
	if err == nil {
		rules, err = rules.WithWork(work...)
	}
	if err != nil {
		t.Fatal(err)
	}
	p, err := profiles.Read(bytes.NewReader(testProfile(t, "wall", 0)))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := flame.Build(p, flame.Options{Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tree.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	return catTotals(t, buf.Bytes())
}

// TestStoredClassification: the case page, its flame JSON and SVG, and the
// compare flame graph classify a stored run with the work patterns and
// user rules its run.json records, also for a scenario this binary does
// not have; a run stored before they were recorded gets the registry's; a
// tampered run.json falls back to the registry with a warning on the case
// page, never an error.
func TestStoredClassification(t *testing.T) {
	st := store.Open(t.TempDir())
	srv := httptest.NewServer(New(st.Root, Options{Logf: t.Logf}))
	t.Cleanup(srv.Close)
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	sha := `^crypto/internal/fips140/sha256\.`
	lockRules := []model.Rule{{Category: "lock", Pattern: `^main\.worker$`}, {Category: "gc", Pattern: `^runtime\.goexit$`, Fallback: true}}
	lockText := "lock ^main\\.worker$\ngc? ^runtime\\.goexit$\n"
	tests := []struct {
		name     string
		scenario string
		c        *model.Classification
		want     map[string]int64
		warning  string // on the case page, "" for none
	}{
		{"unregistered scenario, recorded work", "my-own", &model.Classification{Work: []string{sha}},
			expectTotals(t, "", sha), ""},
		{"recorded user rules and work", "my-own", &model.Classification{Work: []string{sha}, Rules: lockRules},
			expectTotals(t, lockText, sha), ""},
		{"recorded: nothing is work", "web-pyroscope-test", &model.Classification{},
			expectTotals(t, ""), ""},
		{"old run, registered scenario", "web-pyroscope-test", nil,
			expectTotals(t, "", `^main\.worker$`), ""},
		{"old run, unregistered scenario", "my-own", nil,
			expectTotals(t, ""), "stored without its classification rules (by a perflab before they were recorded), and my-own is not in this binary"},
		{"tampered: bad regexp", "web-pyroscope-test", &model.Classification{Work: []string{`(`}},
			expectTotals(t, "", `^main\.worker$`), "work pattern: bad pattern"},
		{"tampered: unknown category", "my-own", &model.Classification{Work: []string{sha}, Rules: []model.Rule{{Category: "<speed>", Pattern: "x"}}},
			expectTotals(t, ""), `rule 1: unknown category &#34;&lt;speed&gt;&#34;`},
		{"tampered: too many work patterns", "web-pyroscope-test", &model.Classification{Work: make([]string, model.MaxClassificationRules+1)},
			expectTotals(t, "", `^main\.worker$`), "257 work patterns (at most 256)); frames are classified with this binary&#39;s work patterns for web-pyroscope-test"},
		{"tampered: too long", "my-own", &model.Classification{Rules: []model.Rule{{Category: "lock", Pattern: strings.Repeat("a", model.MaxPatternBytes+1)}}},
			expectTotals(t, ""), "my-own is not in this binary, so nothing is work"},
	}
	if w := tests[0].want["work"]; w == 0 {
		t.Fatalf("the recorded work patterns find no work in the test profile: %v", tests[0].want)
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := storeClassified(t, st, t0.Add(time.Duration(i)*time.Minute), tt.scenario, tt.c)
			page := srv.URL + caseURL(run, 0)
			code, _, body := get(t, page)
			if code != http.StatusOK {
				t.Fatalf("case page: %d\n%s", code, h1(body))
			}
			hasWarning := strings.Contains(body, "recorded in run.json is refused") || strings.Contains(body, "without its classification")
			if tt.warning == "" && hasWarning || tt.warning != "" && !strings.Contains(body, tt.warning) {
				t.Errorf("case page warning: want %q, page says:\n%s", tt.warning, warnings(body))
			}
			code, _, data := get(t, page+"/flame.json")
			if code != http.StatusOK {
				t.Fatalf("flame.json: %d %s", code, data)
			}
			if got := catTotals(t, []byte(data)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("flame.json categories %v, want %v", got, tt.want)
			}
			code, _, svg := get(t, page+"/flame.svg")
			if code != http.StatusOK || tt.want["work"] != 0 && strings.Contains(svg, ">work 0.0%<") {
				t.Errorf("flame.svg: %d, work share lost:\n%.800s", code, svg)
			}
			// The differential graph has the new side's (b's) rules.
			side := url.QueryEscape(run.ID + "/" + model.Slug(run.Cases[0].Name))
			code, _, diff := get(t, srv.URL+"/compare/flame.json?kind=wall&a="+side+"&b="+side)
			if code != http.StatusOK {
				t.Fatalf("compare flame.json: %d %s", code, diff)
			}
			if got := catTotals(t, []byte(diff)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("compare flame.json categories %v, want %v", got, tt.want)
			}
		})
	}

	// A run.json rewritten with other rules is reclassified, not served
	// from the caches built with the old ones.
	run := storeClassified(t, st, t0.Add(time.Hour), "my-own", &model.Classification{Work: []string{sha}})
	page := srv.URL + caseURL(run, 0)
	if _, _, data := get(t, page+"/flame.json"); catTotals(t, []byte(data))["work"] == 0 {
		t.Fatalf("no work before the rewrite: %s", data)
	}
	path := filepath.Join(st.Root, run.ID, "run.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw = bytes.Replace(raw, []byte(`"work": [`), []byte(`"rules": [{"category": "lock", "pattern": "^main\\.worker$"}], "work": [`), 1)
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	os.Chtimes(path, later, later)
	_, _, data := get(t, page+"/flame.json")
	if got, want := catTotals(t, []byte(data)), expectTotals(t, "lock ^main\\.worker$\n", sha); !reflect.DeepEqual(got, want) {
		t.Errorf("after the rewrite: %v, want %v", got, want)
	}
}

// warnings returns the warning paragraphs of a page, for error messages.
func warnings(body string) string {
	var out []string
	for _, line := range strings.Split(body, "\n") {
		if strings.Contains(line, `class="warning"`) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
