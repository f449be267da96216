package pyroscope

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// EnvURL names the environment variable that points the integration test at
// a running Pyroscope server (scripts/pyroscope.sh start prints its URL).
const EnvURL = "PERFLAB_PYROSCOPE_URL"

// serverURL returns the server to test against. Without one the test is
// skipped on a developer's machine but fails in CI, where .ci/run starts a
// server: a silently skipped integration test would hide a broken push.
func serverURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set but CI is: .ci/run must start the server with scripts/pyroscope.sh start", EnvURL)
		}
		t.Skipf("no Pyroscope server: run `scripts/pyroscope.sh start` and set %s=http://127.0.0.1:4040", EnvURL)
	}
	return u
}

// functions returns the names of the functions in p's samples with their
// total value of sample type i.
func functions(p *profile.Profile, i int) map[string]int64 {
	out := map[string]int64{}
	for _, s := range p.Sample {
		seen := map[string]bool{}
		for _, l := range s.Location {
			for _, ln := range l.Line {
				if !seen[ln.Function.Name] {
					seen[ln.Function.Name] = true
					out[ln.Function.Name] += s.Value[i]
				}
			}
		}
	}
	return out
}

func TestIntegrationPushAndReadBack(t *testing.T) {
	url := serverURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := New(url, Config{})
	if err != nil {
		t.Fatal(err)
	}
	// A run id of our own, so repeated runs against one server do not mix.
	id := fmt.Sprintf("%s-it%d", time.Now().UTC().Format("20060102-150405"), time.Now().UnixNano()%1e6)
	st, run := writeTestRun(t, id, time.Now().Add(-30*time.Second))
	sum, err := PushRun(ctx, c, st, run, PushOptions{Labels: map[string]string{"ci-job": "integration"}})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	sum.Write(&out)
	t.Logf("push summary:\n%s", out.String())
	if sum.Sent() != 7 {
		t.Fatalf("sent %d profiles, want 7", sum.Sent())
	}

	start, end := time.Now().Add(-10*time.Minute), time.Now().Add(time.Minute)
	sel := func(extra string) string {
		return fmt.Sprintf(`{service_name="perflab",run_id=%q%s}`, id, extra)
	}

	// The ingester makes a push queryable at once, but give it a moment on
	// a loaded machine.
	var series []map[string]string
	for i := 0; i < 50; i++ {
		series, err = c.Series(ctx, sel(""), start, end)
		if err == nil && len(series) >= 14 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	// 7 profiles, two sample types each.
	if len(series) != 14 {
		t.Fatalf("%d series for run %s, want 14:\n%v", len(series), id, series)
	}
	types := map[string]bool{}
	for _, s := range series {
		types[s["__profile_type__"]] = true
		for k, want := range map[string]string{
			"scenario": "push-test", "key_size": "16", "threads": "2", "commit": "abc123",
			"goos": "linux", "goarch": "amd64", "ci_job": "integration", "service_name": "perflab",
		} {
			if s[k] != want {
				t.Errorf("series %v: label %s = %q, want %q", s, k, s[k], want)
			}
		}
		if s["variant"] != "a" && s["variant"] != "b" {
			t.Errorf("series %v: variant %q", s, s["variant"])
		}
	}
	for _, kind := range []string{KindWall, KindCPU, KindMutex, KindBlock} {
		for _, pt := range ProfileTypes(kind) {
			if !types[pt] {
				t.Errorf("no series of profile type %s (have %v)", pt, types)
			}
		}
	}

	// Read each kind back by label and check what is in it.
	for _, kind := range []string{KindWall, KindCPU, KindMutex, KindBlock} {
		t.Run(kind, func(t *testing.T) {
			pa, err := c.SelectMergeProfile(ctx, Query{ProfileType: kind, Selector: sel(`,variant="a"`), Start: start, End: end})
			if err != nil {
				t.Fatal(err)
			}
			fa := functions(pa, 0)
			if fa["perflabtest.workA"] != int64(700*time.Millisecond) || fa["sync.(*Mutex).lockSlow"] != int64(300*time.Millisecond) {
				t.Errorf("variant a, %s: functions %v", kind, fa)
			}
			if _, ok := fa["perflabtest.workB"]; ok {
				t.Errorf("variant a's %s profile has variant b's function", kind)
			}
			if pa.SampleType[0].Unit != "nanoseconds" {
				t.Errorf("sample type %s/%s", pa.SampleType[0].Type, pa.SampleType[0].Unit)
			}
			pall, err := c.SelectMergeProfile(ctx, Query{ProfileType: kind, Selector: sel(""), Start: start, End: end})
			if err != nil {
				t.Fatal(err)
			}
			fall := functions(pall, 0)
			want := int64(2 * time.Second)
			if kind == KindMutex { // variant b's mutex profile was empty
				want = int64(time.Second)
			}
			if fall["perflabtest.worker"] != want {
				t.Errorf("both variants, %s: perflabtest.worker = %d, want %d", kind, fall["perflabtest.worker"], want)
			}
		})
	}

	// A selector that matches nothing is an error that says so.
	_, err = c.SelectMergeProfile(ctx, Query{ProfileType: "wall", Selector: sel(`,variant="zzz"`), Start: start, End: end})
	if err == nil || !strings.Contains(err.Error(), "no wall:wall:nanoseconds:wall:nanoseconds profiles match") {
		t.Errorf("empty selection: err = %v", err)
	}
}

func TestIntegrationRefusals(t *testing.T) {
	url := serverURL(t)
	c, err := New(url, Config{Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p := testProfile(KindCPU, time.Now(), map[string][]string{"10ms": {"main.f"}})
	// Older than the default one-hour ingestion window: refused, with a hint.
	_, err = c.Push(ctx, Upload{Kind: KindCPU, Profile: p, ServiceName: "perflab", Stamp: time.Now().Add(-3 * time.Hour)})
	if err == nil || !strings.Contains(err.Error(), "--timestamp now") {
		t.Errorf("old profile: err = %v", err)
	}
	// A label name the server rejects is reported, not dropped.
	_, err = c.Push(ctx, Upload{Kind: KindCPU, Profile: p, ServiceName: "perflab", Labels: map[string]string{"bad-name": "x"}})
	if err == nil || !strings.Contains(err.Error(), "bad-name") {
		t.Errorf("bad label: err = %v", err)
	}
}
