package web

import (
	"bufio"
	"fmt"
	"net"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSlowUploadsWithinBudget: many uploads trickle their files in at
// once and stall (issue 26 item 7: 24 stalled uploads took 812 MB while
// their bodies were charged, since each doubling of a body's buffer left
// the one before it as garbage no budget saw). Under a small budget the
// budget and the bodies' quarter of it hold, the uploads past it answered
// 503; under a large one, what the server allocates while 24 uploads
// arrive and stall is what it charged for them, not twice that.
func TestSlowUploadsWithinBudget(t *testing.T) {
	defer func(w time.Duration) { maxWait = w }(maxWait)
	maxWait = 200 * time.Millisecond
	const uploads, size = 24, 3 << 20 // each sends 3 MiB of a file that claims 30, then stalls

	t.Run("small budget", func(t *testing.T) {
		const budget = 64 << 20 // bodies: 16 MiB
		s := New(t.TempDir(), Options{Logf: func(string, ...any) {}, MemoryBudget: budget, MaxUpload: 32 << 20})
		r := trickle(t, s, uploads, size)
		if r.stalled == 0 || r.stalled == uploads {
			t.Errorf("%d of %d uploads stalled: want some held and the others refused with 503 (answers %q)", r.stalled, uploads, r.answers)
		}
		for _, a := range r.answers {
			if a != "" && a != "HTTP/1.1 503 Service Unavailable" {
				t.Errorf("answer %q, want a 503 or none (held)", a)
			}
		}
		if r.peak > budget || r.maxBodies > budget/4 {
			t.Errorf("budget peak %d KB of %d, bodies %d KB of %d", r.peak>>10, budget>>10, r.maxBodies>>10, budget>>12)
		}
	})
	t.Run("large budget", func(t *testing.T) {
		const budget = 1 << 30
		s := New(t.TempDir(), Options{Logf: func(string, ...any) {}, MemoryBudget: budget, MaxUpload: 32 << 20})
		r := trickle(t, s, uploads, size)
		if r.stalled != uploads {
			t.Errorf("%d of %d uploads held (answers %q), want all", r.stalled, uploads, r.answers)
		}
		// Besides the bodies, the server allocates the connections'
		// buffers and requests: a few KB each. Doubling a buffer
		// allocated 1.9 times the bodies.
		if r.alloc > r.held+r.held/10+2<<20 {
			t.Errorf("allocated %d KB while the uploads arrived, against %d KB charged for them", r.alloc>>10, r.held>>10)
		}
	})
}

type trickled struct {
	answers          []string // each upload's status line, "" if it is held
	stalled          int      // uploads held, stalled
	held, peak       int64    // the budget held with them stalled, and its peak
	maxBodies, alloc int64    // the bodies' share, sampled; bytes allocated meanwhile
}

// trickle sends n uploads to s at once, each size bytes of its file in
// 32 KiB pieces 2 ms apart, then stalls them, and returns what s made of
// them. Closing the connections must give the budget back.
func trickle(t *testing.T, s *Server, n, size int) trickled {
	srv := httptest.NewServer(s)
	defer srv.Close()
	block := []byte(strings.Repeat("p", 32<<10)) // one buffer for every client: the test allocates little
	var r trickled
	var mu sync.Mutex
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
				mu.Lock()
				r.maxBodies = max(r.maxBodies, s.bodies.Load())
				mu.Unlock()
			}
		}
	}()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	r.answers = make([]string, n)
	conns := make([]net.Conn, n)
	for i := range n {
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = conn
		wg.Add(1)
		go func() {
			defer wg.Done()
			fmt.Fprintf(conn, "POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Type: multipart/form-data; boundary=XX\r\nContent-Length: %d\r\n\r\n", 30<<20)
			fmt.Fprintf(conn, "--XX\r\nContent-Disposition: form-data; name=\"profile\"; filename=\"p.pb.gz\"\r\n\r\n")
			for sent := 0; sent < size; sent += len(block) {
				conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
				if _, err := conn.Write(block); err != nil {
					break // the server answered (503) and stopped reading
				}
				time.Sleep(2 * time.Millisecond)
			}
			conn.SetReadDeadline(time.Now().Add(time.Second))
			line, _ := bufio.NewReader(conn).ReadString('\n')
			r.answers[i] = strings.TrimSpace(line)
		}()
	}
	wg.Wait()
	runtime.ReadMemStats(&after)
	close(done)
	<-sampled
	r.held, r.peak = s.mem.usage()
	r.alloc = int64(after.TotalAlloc - before.TotalAlloc)
	for _, a := range r.answers {
		if a == "" {
			r.stalled++
		}
	}
	t.Logf("%d of %d uploads stalled and held; budget %d KB held, %d KB at the peak; bodies at most %d KB; %d KB allocated while they arrived",
		r.stalled, n, r.held>>10, r.peak>>10, r.maxBodies>>10, r.alloc>>10)
	for _, c := range conns {
		c.Close()
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if used, _ := s.mem.usage(); used == 0 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("%d KB of the budget still held after the clients left", used>>10)
		}
	}
	return r
}
