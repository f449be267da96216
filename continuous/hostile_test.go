package continuous_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/continuous"
)

// TestStopBoundedBySlowServer: stop ends within its bound against a
// server that never answers, with uploads queued behind those in flight,
// and says they failed (issue 26: stop took 64 s, documented 10 s).
func TestStopBoundedBySlowServer(t *testing.T) {
	defer continuous.SetStopTimeout(2 * time.Second)()
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		io.Copy(io.Discard, r.Body) // then the server sees the client hang up
		<-r.Context().Done()
	}))
	defer srv.Close()
	stop, err := continuous.Start(continuous.Config{ApplicationName: "svc", ServerAddress: srv.URL,
		UploadRate: 300 * time.Millisecond, WallWindow: 100 * time.Millisecond, Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	start := time.Now()
	err = stop()
	took := time.Since(start)
	t.Logf("stop took %v after %d requests: %v", took, requests.Load(), err)
	if took > 2500*time.Millisecond {
		t.Errorf("stop took %v, want at most its 2 s bound", took)
	}
	if err == nil || !strings.Contains(err.Error(), "failed") {
		t.Errorf("stop: %v, want the aborted uploads counted as failed", err)
	}
}

// TestHugeAnswerNotSent: a server answering 200 with a body that does not
// end is not a server that took the profiles: the service reads 64 KiB of
// each answer, and stop says the uploads failed (issue 26: the answers
// were read whole, 8.6 GB in 30 s, and counted as sent).
func TestHugeAnswerNotSent(t *testing.T) {
	var written atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		chunk := make([]byte, 32<<10)
		for written.Load() < 4<<30 {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	stop, err := continuous.Start(continuous.Config{ApplicationName: "svc", ServerAddress: srv.URL,
		UploadRate: 300 * time.Millisecond, WallWindow: 100 * time.Millisecond, Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1 * time.Second)
	err = stop()
	t.Logf("the server wrote %d bytes in all: %v", written.Load(), err)
	if err == nil || !strings.Contains(err.Error(), "over 64 KiB") || !strings.Contains(err.Error(), "sent 0") {
		t.Errorf("stop: %v, want nothing sent, the answers over 64 KiB", err)
	}
	// Each answer read to 64 KiB, beside the sockets' buffers.
	if w := written.Load(); w > 256<<20 {
		t.Errorf("the server wrote %d bytes", w)
	}
}
