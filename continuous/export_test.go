package continuous

import (
	"context"
	"sync"
	"time"

	"github.com/google/pprof/profile"
	ipyro "github.com/perflab/perflab/internal/pyroscope"
	"github.com/perflab/perflab/profiles"
)

// StartWall starts only the periodic wall-clock profiler, as Start runs it,
// uploading to url: what BenchmarkWallOverhead measures. The returned
// function stops it and waits for its last window.
func StartWall(url string, period, window time.Duration) (stop func(), err error) {
	bg, err := ipyro.NewBackground(url, ipyro.Config{}, nil)
	if err != nil {
		return nil, err
	}
	w := &waller{cfg: Config{ApplicationName: "bench", UploadRate: period, WallWindow: window, Rules: profiles.DefaultRules(), Logger: stdLogger{}}, bg: bg}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.run(ctx) }()
	return func() {
		cancel()
		wg.Wait()
		bg.Flush(5 * time.Second)
		bg.Stop()
	}, nil
}

// WallProfile is one wall-clock window, traced until ctx ends.
func WallProfile(ctx context.Context, rules *profiles.Rules) (*profile.Profile, error) {
	if rules == nil {
		rules = profiles.DefaultRules()
	}
	wp, err := traceWall(ctx, rules, "", true)
	if err != nil {
		return nil, err
	}
	return wp.profile, nil
}

// SetStopTimeout sets the bound on stop, for a test, until restore.
func SetStopTimeout(d time.Duration) (restore func()) {
	prev := stopTimeout
	stopTimeout = d
	return func() { stopTimeout = prev }
}
