package pyroscope

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// bigProfile returns a CPU profile of n samples, each at its own function
// whose name is nameLen bytes long.
func bigProfile(n, nameLen int) *profile.Profile {
	p := testProfile(KindCPU, time.Now(), nil)
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("main.f%d_", i)
		name += strings.Repeat("x", max(0, nameLen-len(name)))
		fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name}
		p.Function = append(p.Function, fn)
		loc := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fn}}}
		p.Location = append(p.Location, loc)
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{loc}, Value: []int64{1, int64(time.Millisecond)}})
	}
	return p
}

func labelsN(n int) map[string]string {
	ls := map[string]string{}
	for i := 0; i < n; i++ {
		ls[fmt.Sprintf("l%02d", i)] = "v"
	}
	return ls
}

func TestLimits(t *testing.T) {
	small := bigProfile(3, 10)
	withSampleLabels := bigProfile(2, 10)
	for _, s := range withSampleLabels.Sample {
		s.Label = map[string][]string{"state": {"running"}, "extra": {strings.Repeat("v", 3000)}}
	}
	for _, tt := range []struct {
		name    string
		labels  map[string]string
		p       *profile.Profile
		wantErr string // "" for none
	}{
		{"fine", map[string]string{"scenario": "x"}, small, ""},
		{"26 labels and the server's 4", labelsN(26), small, ""},
		{"27 labels", labelsN(27), small, "31 labels per series"},
		{"long name", map[string]string{strings.Repeat("n", 1025): "v"}, small, "name is 1025 bytes"},
		{"long value", map[string]string{"scenario": strings.Repeat("v", 2049)}, small, `label "scenario": value is 2049 bytes`},
		{"value at the limit", map[string]string{"scenario": strings.Repeat("v", 2048)}, small, ""},
		{"bad utf-8", map[string]string{"scenario": "\xff"}, small, "not valid UTF-8"},
		{"too many samples", nil, bigProfile(16001, 10), "16001 samples"},
		{"sample label too long", nil, withSampleLabels, `a sample label: label "extra": value is 3000 bytes`},
		{"sample labels count", labelsN(25), bigProfile(1, 10), ""},
		{"over the burst", nil, bigProfile(1000, 2200), "ingestion burst of 2.00 MiB"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := DefaultLimits.CheckProfile("perflab", tt.labels, tt.p)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("err = %v, want none", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("err = %v, want one with %q", err, tt.wantErr)
			}
			var le *LimitError
			if err != nil && !errors.As(err, &le) {
				t.Errorf("err %T is not a *LimitError", err)
			}
		})
	}
	// A sample's own labels count towards the series' labels.
	p := bigProfile(1, 10)
	p.Sample[0].Label = map[string][]string{"state": {"running"}, "a": {"1"}}
	if err := DefaultLimits.CheckProfile("perflab", labelsN(25), p); err == nil || !strings.Contains(err.Error(), "31 labels per series with a sample's own 2") {
		t.Errorf("sample labels: err = %v", err)
	}
	if err := (Limits{}).CheckProfile("perflab", labelsN(100), bigProfile(20000, 10)); err != nil {
		t.Errorf("zero Limits checks nothing: %v", err)
	}
}

// TestPushChecksLimits: a profile over a limit is refused before anything
// is sent.
func TestPushChecksLimits(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer srv.Close()
	c, err := New(srv.URL, Config{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Push(context.Background(), Upload{Kind: KindCPU, Profile: bigProfile(2, 10), ServiceName: "perflab",
		Labels: map[string]string{"commit": strings.Repeat("c", 3000)}})
	if err == nil || !strings.Contains(err.Error(), `label "commit"`) {
		t.Errorf("err = %v, want one naming the label", err)
	}
	if hits != 0 {
		t.Errorf("%d requests sent for a profile over the limits", hits)
	}
}
