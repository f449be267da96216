package pyroscope

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestPushStopsOnLongRetryAfter: a 429 asking to come back in an hour is
// not waited on, and does not cost every profile of the run the same:
// the push stops at the first, saying when the server wants it again.
// (issue 14, part 8)
func TestPushStopsOnLongRetryAfter(t *testing.T) {
	for _, ra := range []string{"3600", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)} {
		st, run := writeTestRun(t, "20261130-100000-push-test", time.Now().Add(-time.Minute))
		f := &fakeIngest{fail: []int{429, 429, 429, 429, 429, 429, 429, 429}, body: "slow down", retryAfter: ra}
		c, _ := newTestClient(t, f, Config{})
		start := time.Now()
		sum, err := PushRun(context.Background(), c, st, run, PushOptions{})
		took := time.Since(start)
		t.Logf("Retry-After %s: push ended after %v", ra, took)
		if err == nil || !strings.Contains(err.Error(), "not waited for") {
			t.Fatalf("err = %v", err)
		}
		if took > 2*time.Second {
			t.Errorf("took %v", took)
		}
		if n := len(sum.Results); n < 2 || sum.Results[0].Attempts != 1 || sum.Results[1].Err != errNotAttempted {
			t.Errorf("results %+v", sum.Results)
		}
	}
}

// drip answers 200 with one byte of body every 100 ms, for ever.
type drip struct{ reqs chan struct{} }

func (d drip) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case d.reqs <- struct{}{}:
	default:
	}
	w.WriteHeader(http.StatusOK)
	for {
		if _, err := w.Write([]byte{' '}); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestPushTimeoutBoundsDrippingServer: a server that drips its answer
// costs the push one Timeout in all, not a timeout per attempt and per
// profile (it cost up to 90 s per profile at a fixed 30 s).
func TestPushTimeoutBoundsDrippingServer(t *testing.T) {
	st, run := writeTestRun(t, "20261130-100000-push-test", time.Now().Add(-time.Minute))
	d := drip{reqs: make(chan struct{}, 100)}
	c, _ := newTestClient(t, d, Config{Timeout: 700 * time.Millisecond})
	start := time.Now()
	sum, err := PushRun(context.Background(), c, st, run, PushOptions{})
	took := time.Since(start)
	t.Logf("push ended after %v, %d requests", took, len(d.reqs))
	if err == nil || !strings.Contains(err.Error(), "700ms") {
		t.Fatalf("err = %v", err)
	}
	if took > 2*time.Second {
		t.Errorf("took %v, want about one timeout", took)
	}
	if sum.Sent() != 0 || sum.Results[len(sum.Results)-1].Err != errNotAttempted {
		t.Errorf("results %+v", sum.Results)
	}
}
