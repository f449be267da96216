package pyroscope

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// TestIntegrationLimitsMatchServer pushes, with perflab's checks off, a
// profile at each default limit and one just over it: the server must take
// the first and refuse the second, and DefaultLimits must say the same, so
// the checks are the server's and not a guess.
func TestIntegrationLimitsMatchServer(t *testing.T) {
	url := serverURL(t)
	c, err := New(url, Config{Retries: -1, Limits: &Limits{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	long := func(n int) string { return strings.Repeat("v", n) }
	withLabels := func(n int) map[string]string {
		ls := labelsN(n)
		ls["limits_test"] = "1"
		return ls
	}
	for _, tt := range []struct {
		name     string
		at, over map[string]string
		atP      *profile.Profile
		overP    *profile.Profile
	}{
		{name: "labels per series", at: withLabels(25), over: withLabels(26)},
		{name: "label value length", at: map[string]string{"limits_test": long(2048)}, over: map[string]string{"limits_test": long(2049)}},
		{name: "samples", atP: bigProfile(16000, 10), overP: bigProfile(16001, 10)},
		{name: "ingestion burst", atP: bigProfile(900, 2200), overP: bigProfile(1000, 2200)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, side := range []struct {
				over   bool
				labels map[string]string
				p      *profile.Profile
			}{{false, tt.at, tt.atP}, {true, tt.over, tt.overP}} {
				p := side.p
				if p == nil {
					p = bigProfile(2, 10)
				}
				labels := side.labels
				if labels == nil {
					labels = map[string]string{"limits_test": "1"}
				}
				// The burst is a token bucket (2 MiB, refilled at 4 MiB/s)
				// that earlier pushes drain: let it fill first.
				time.Sleep(time.Second)
				ours := DefaultLimits.CheckProfile("perflab-limits", labels, p)
				_, theirs := c.Push(ctx, Upload{Kind: KindCPU, Profile: p, ServiceName: "perflab-limits", Labels: labels, Stamp: time.Now()})
				t.Logf("over=%v: ours %v; server %v", side.over, ours, theirs)
				if (ours != nil) != side.over || (theirs != nil) != side.over {
					t.Errorf("over=%v: DefaultLimits says %v, the server %v", side.over, ours, theirs)
				}
			}
		})
	}
}
