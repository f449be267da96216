package continuous_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/continuous"
	"github.com/perflab/perflab/internal/pyroscope"
	"github.com/perflab/perflab/profiles"
)

// envURL points the integration tests at a Pyroscope server.
const envURL = "PERFLAB_PYROSCOPE_URL"

// serverURL returns the Pyroscope server of the integration tests: skipped
// without one on a developer's machine, a failure in CI, where .ci/run
// starts one (as in internal/pyroscope).
func serverURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv(envURL)
	if u == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set but CI is: .ci/run must start the server with scripts/pyroscope.sh start", envURL)
		}
		t.Skipf("no Pyroscope server: run `scripts/pyroscope.sh start` and set %s=http://127.0.0.1:4040", envURL)
	}
	return u
}

// TestIntegrationService profiles a small service for a few periods into
// the real server and reads back, by its tag, the wall-clock profile (the
// workers' whole time, lock time among it) and pyroscope-go's CPU profile.
func TestIntegrationService(t *testing.T) {
	url := serverURL(t)
	id := fmt.Sprintf("svc%d", time.Now().UnixNano())
	stopWork := make(chan struct{})
	var wg sync.WaitGroup
	workload(stopWork, &wg)
	defer func() { close(stopWork); wg.Wait() }()

	const period, window = 2 * time.Second, time.Second
	start := time.Now()
	stop, err := continuous.Start(continuous.Config{
		ApplicationName: "perflab-continuous-test", ServerAddress: url,
		Tags:       map[string]string{"test_id": id},
		UploadRate: period, WallWindow: window,
	})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3*period + window)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	end := time.Now()

	c, err := pyroscope.New(url, pyroscope.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sel := fmt.Sprintf(`{service_name="perflab-continuous-test",test_id=%q}`, id)
	q := pyroscope.Query{ProfileType: "wall", Selector: sel, Start: start.Add(-time.Minute), End: end.Add(time.Minute)}
	wall, err := c.SelectMergeProfile(ctx, q)
	for i := 0; err != nil && i < 25; i++ { // give the ingester a moment
		time.Sleep(200 * time.Millisecond)
		wall, err = c.SelectMergeProfile(ctx, q)
	}
	if err != nil {
		t.Fatal(err)
	}
	// Four windows of 1 s (the last cut short by stop), two workers in each
	// all the time: 6–8 s of worker time.
	worker := time.Duration(rootsOf(wall)["github.com/perflab/perflab/continuous_test.serviceWorker"])
	if worker < 5*time.Second || worker > 8*time.Second+500*time.Millisecond {
		t.Errorf("workers: %v of wall time, want 6–8 s (2 workers × 3–4 windows of %v)", worker, window)
	}
	by, _ := profiles.Breakdown(wall, 0, profiles.DefaultRules())
	if by[profiles.Lock] <= 0 {
		t.Errorf("no lock time read back: %v", by)
	}
	q.ProfileType = "cpu"
	cpu, err := c.SelectMergeProfile(ctx, q)
	if err != nil {
		t.Fatalf("pyroscope-go's CPU profile: %v", err)
	}
	if rootsOf(cpu)["github.com/perflab/perflab/continuous_test.serviceWorker"] <= 0 {
		t.Errorf("the CPU profile read back has no worker samples")
	}
	t.Logf("wall: workers %v, breakdown %v", worker, by)
}
