package web

import (
	"net/url"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/model"
)

// TestCompareFlameUnion checks the differential flame graph of the compare
// page: the union's JSON on either layout, links between the two, and a
// refused layout.
func TestCompareFlameUnion(t *testing.T) {
	srv, f := newTestServer(t)
	a := url.QueryEscape(f.full.ID + "/" + model.Slug(f.full.Cases[3].Name))
	b := url.QueryEscape(f.full.ID + "/" + model.Slug(f.full.Cases[4].Name))
	pair := "a=" + a + "&b=" + b
	tests := []struct {
		name, path string
		status     int
		contains   []string
	}{
		{"page", "/compare?" + pair, 200, []string{"new profile&#39;s shape", "layout=base", "hatched", `data-src="/compare/flame.json?` + strings.ReplaceAll(pair, "&", "&amp;") + `&amp;kind=wall&amp;layout=new"`}},
		{"page on the base", "/compare?" + pair + "&kind=cpu&layout=base", 200, []string{`aria-current="page">base profile&#39;s shape`, `layout=base&amp;kind=mutex`}},
		{"page bad layout", "/compare?" + pair + "&layout=old", 400, []string{"unknown layout"}},
		{"json", "/compare/flame.json?" + pair + "&kind=cpu", 200, []string{`"diff":true,"layout":"new"`, `"width":[`, `"sig":[`, `"stats":{"ok":true`}},
		{"json on the base", "/compare/flame.json?" + pair + "&kind=cpu&layout=base", 200, []string{`"layout":"base"`}},
		{"json bad layout", "/compare/flame.json?" + pair + "&kind=cpu&layout=x", 400, []string{"unknown layout"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, _, body := get(t, srv.URL+tt.path)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %.300s", status, tt.status, body)
			}
			for _, want := range tt.contains {
				if !strings.Contains(body, want) {
					t.Errorf("body lacks %q", want)
				}
			}
		})
	}
}

func TestDefaultPair(t *testing.T) {
	// mk makes a run whose cases are "variant@threads", each measured
	// unless it ends in "!" (skipped).
	mk := func(id, scenario string, complete bool, cases ...string) *model.Run {
		r := &model.Run{ID: id, Scenario: scenario, Complete: complete}
		for _, c := range cases {
			st := model.StatusOK
			if strings.HasSuffix(c, "!") {
				st, c = model.StatusSkipped, strings.TrimSuffix(c, "!")
			}
			v, th, _ := strings.Cut(c, "@")
			n := map[string]int{"1": 1, "4": 4}[th]
			r.Cases = append(r.Cases, model.Case{Name: "variant=" + v + "/threads=" + th, Variant: v, Threads: n, Status: st})
		}
		return r
	}
	tests := []struct {
		name string
		runs []*model.Run // newest first
		a, b string
	}{
		{
			name: "the same case before and after, past an interrupted run",
			runs: []*model.Run{
				mk("r3", "cc", false, "mutex@1", "rwmutex@1"),
				mk("r2", "cc", true, "mutex@1!", "mutex@4", "rwmutex@4"),
				mk("r1", "cc", true, "mutex@1", "mutex@4", "rwmutex@4"),
			},
			a: "r1/variant=mutex,threads=4", b: "r2/variant=mutex,threads=4",
		},
		{
			name: "one complete run: two variants at the same goroutine count",
			runs: []*model.Run{
				mk("r2", "cc", false, "mutex@1", "rwmutex@1"),
				mk("r1", "cc", true, "mutex@1", "mutex@4", "rwmutex@1", "rwmutex@4"),
			},
			a: "r1/variant=mutex,threads=1", b: "r1/variant=rwmutex,threads=1",
		},
		{
			name: "the run before is of another scenario",
			runs: []*model.Run{
				mk("r2", "cc", true, "mutex@1", "mutex@4", "rwmutex@4"),
				mk("r1", "uuid", true, "mutex@1", "mutex@4"),
			},
			a: "r2/variant=mutex,threads=4", b: "r2/variant=rwmutex,threads=4",
		},
		{
			name: "only interrupted runs: their measured cases",
			runs: []*model.Run{
				mk("r2", "cc", false, "mutex@1!", "rwmutex@1!"),
				mk("r1", "cc", false, "mutex@1!", "mutex@4", "rwmutex@4"),
			},
			a: "r1/variant=mutex,threads=4", b: "r1/variant=rwmutex,threads=4",
		},
		{
			name: "one variant: any two cases",
			runs: []*model.Run{mk("r1", "cc", true, "mutex@1", "mutex@4")},
			a:    "r1/variant=mutex,threads=1", b: "r1/variant=mutex,threads=4",
		},
		{
			name: "nothing measured",
			runs: []*model.Run{mk("r1", "cc", false, "mutex@1!", "mutex@4!")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := defaultPair(tt.runs)
			if a != tt.a || b != tt.b {
				t.Errorf("defaultPair = %q, %q; want %q, %q", a, b, tt.a, tt.b)
			}
		})
	}
}

// TestCompareUnmeasured: a skipped case gives a plain sentence in place of
// the table, not an empty table under a generic warning.
func TestCompareUnmeasured(t *testing.T) {
	srv, f := newTestServer(t)
	a := f.full.ID + "/" + model.Slug(f.full.Cases[0].Name)
	b := f.small.ID + "/" + model.Slug(f.small.Cases[4].Name)
	status, _, body := get(t, srv.URL+"/compare?a="+url.QueryEscape(a)+"&b="+url.QueryEscape(b))
	if status != 200 {
		t.Fatalf("status %d", status)
	}
	if strings.Contains(body, `<table class="compare">`) {
		t.Error("an unmeasured case still gets the (empty) comparison table")
	}
	if !strings.Contains(body, `class="unmeasured"`) || !strings.Contains(body, "was skipped") && !strings.Contains(body, "skipped: not measured") {
		t.Error("the page does not say the new case was not measured")
	}
}
