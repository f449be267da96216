package continuous_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/http/httptest"
	"runtime/trace"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/continuous"
	"github.com/perflab/perflab/internal/pyroscope/pyroscopetest"
)

// TestSessionWall: a window the program chooses counts only the goroutines
// in Config.WallRegion, and is uploaded with the session's tags and its
// own labels; Stats counts it.
func TestSessionWall(t *testing.T) {
	f := &pyroscopetest.Ingest{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	s, err := continuous.StartSession(continuous.Config{
		ApplicationName: "svc", ServerAddress: srv.URL, Tags: map[string]string{"env": "test"},
		UploadRate: time.Hour, WallWindow: -1, WallRegion: "work",
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Wall(map[string]string{"bad-name": "x"}); err == nil || !strings.Contains(err.Error(), "bad_name") {
		t.Errorf("a label name with a dash: %v, want the error to suggest bad_name", err)
	}
	end, err := s.Wall(map[string]string{"variant": "a"})
	if err != nil {
		t.Fatal(err)
	}
	// Two goroutines inside the region for 300 ms; one outside, idle.
	idle := make(chan struct{})
	go func() { <-idle }()
	var wg sync.WaitGroup
	deadline := time.Now().Add(300 * time.Millisecond)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			trace.WithRegion(context.Background(), "work", func() {
				var buf [1024]byte
				for time.Now().Before(deadline) {
					sha256.Sum256(buf[:])
				}
			})
		}()
	}
	wg.Wait()
	if err := end(); err != nil {
		t.Fatal(err)
	}
	close(idle)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if got := s.Stats().Sent["wall"]; got != 1 {
		t.Errorf("Stats sent %d wall profiles, want 1: %s", got, s.Stats())
	}
	var walls int
	for _, u := range f.All() {
		if u.Kind != "wall" {
			continue
		}
		walls++
		if u.Name != "svc{env=test,variant=a}" {
			t.Errorf("wall profile name %q, want the tags and the window's labels", u.Name)
		}
		var total int64
		for _, smp := range u.Profile.Sample {
			total += smp.Value[0]
		}
		// The two goroutines in the region, 300 ms each; not the idle
		// one nor the test's.
		if got := time.Duration(total); got < 2*300*time.Millisecond*8/10 || got > 2*300*time.Millisecond*12/10 {
			t.Errorf("wall total %v, want about 2 × 300 ms (the region's goroutines only)", got)
		}
	}
	if walls != 1 {
		t.Errorf("%d wall profiles uploaded, want 1", walls)
	}
}

// TestSessionWallEndAndStop: a window's end may be called again (it
// returned nothing and blocked forever, past which its release would
// unlock an unlocked mutex); a window still open at Stop is ended and
// uploaded by Stop, and its end then says so; Wall after Stop is
// ErrStopped (both were a profile silently lost, issue 24 review).
func TestSessionWallEndAndStop(t *testing.T) {
	f := &pyroscopetest.Ingest{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	s, err := continuous.StartSession(continuous.Config{
		ApplicationName: "svc", ServerAddress: srv.URL, UploadRate: time.Hour, WallWindow: -1, WallRegion: "work",
	})
	if err != nil {
		t.Fatal(err)
	}
	// within fails the test if f does not return in time, instead of
	// hanging it.
	within := func(what string, f func() error) error {
		t.Helper()
		ch := make(chan error, 1)
		go func() { ch <- f() }()
		select {
		case err := <-ch:
			return err
		case <-time.After(30 * time.Second):
			t.Fatalf("%s has not returned after 30 s", what)
			return nil
		}
	}

	end, err := s.Wall(map[string]string{"window": "ended"})
	if err != nil {
		t.Fatal(err)
	}
	if err := within("end", end); err != nil {
		t.Fatalf("end: %v", err)
	}
	if err := within("end again", end); err != nil {
		t.Errorf("end again: %v, want the first call's nil", err)
	}

	open, err := s.Wall(map[string]string{"window": "open"})
	if err != nil {
		t.Fatal(err)
	}
	if err := within("Stop", s.Stop); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	for i := range 2 {
		if err := within("end after Stop", open); !errors.Is(err, continuous.ErrStopped) || !strings.Contains(err.Error(), "uploaded") {
			t.Errorf("end %d of a window open at Stop: %v, want ErrStopped saying its profile was uploaded", i+1, err)
		}
	}
	if _, err := s.Wall(nil); !errors.Is(err, continuous.ErrStopped) {
		t.Errorf("Wall after Stop: %v, want ErrStopped", err)
	}
	if got := s.Stats().Sent["wall"]; got != 2 {
		t.Errorf("Stats sent %d wall profiles, want 2 (the ended window and the one Stop ended): %s", got, s.Stats())
	}
	var names []string
	for _, u := range f.All() {
		if u.Kind == "wall" {
			names = append(names, u.Name)
		}
	}
	sort.Strings(names)
	if want := []string{"svc{window=ended}", "svc{window=open}"}; !slices.Equal(names, want) {
		t.Errorf("wall profiles uploaded %q, want %q", names, want)
	}
}

// TestSessionStopRaces: Stop while a window's end runs, and while another
// Wall waits for the tracer behind the open window: each ends once (run
// under -race), the waiting Wall gets ErrStopped, and nothing hangs.
func TestSessionStopRaces(t *testing.T) {
	srv := httptest.NewServer(&pyroscopetest.Ingest{})
	defer srv.Close()
	s, err := continuous.StartSession(continuous.Config{
		ApplicationName: "svc", ServerAddress: srv.URL, UploadRate: time.Hour, WallWindow: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	end, err := s.Wall(nil)
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan error, 1)
	go func() {
		// Blocks on the tracer until the open window ends.
		_, err := s.Wall(nil)
		waiting <- err
	}()
	ended := make(chan error, 1)
	go func() { ended <- end() }()
	stopped := make(chan error, 1)
	go func() { stopped <- s.Stop() }()
	for what, ch := range map[string]chan error{"Stop": stopped, "end": ended, "the waiting Wall": waiting} {
		select {
		case err := <-ch:
			switch {
			case what == "Stop" && err != nil:
				t.Errorf("Stop: %v", err)
			case what == "end" && err != nil && !errors.Is(err, continuous.ErrStopped):
				t.Errorf("end: %v, want nil or ErrStopped", err)
			case what == "the waiting Wall" && !errors.Is(err, continuous.ErrStopped):
				// It may have begun before Stop; then Stop ended it.
				if err != nil {
					t.Errorf("the waiting Wall: %v", err)
				}
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s has not returned after 30 s", what)
		}
	}
	if got := s.Stats().Sent["wall"]; got < 1 || got > 2 {
		t.Errorf("%d wall profiles sent, want the open one (and the waiting one if it began before Stop)", got)
	}
}
