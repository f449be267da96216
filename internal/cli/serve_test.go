package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeShutsDown starts `perflab serve` on a free loopback port, fetches
// the runs page, then cancels the command's context (what SIGINT does) and
// expects a clean return.
func TestServeShutsDown(t *testing.T) {
	var stderr bytes.Buffer
	io := &IO{Out: io.Discard, Err: &stderr}
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serveRun(ctx, io, &ServeOptions{Addr: "127.0.0.1:0", Dir: t.TempDir(), ready: func(a string) { addrc <- a }})
	}()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatalf("serve returned early: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not start")
	}
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /: %s", resp.Status)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop after its context was cancelled")
	}
	if !strings.Contains(stderr.String(), "server stopped") {
		t.Errorf("stderr: %q", stderr.String())
	}
	if _, err := http.Get("http://" + addr + "/"); err == nil {
		t.Error("server still answers after shutdown")
	}
}

func TestServeBadAddr(t *testing.T) {
	err := serveRun(context.Background(), &IO{Out: io.Discard, Err: io.Discard}, &ServeOptions{Addr: "nonsense", Dir: t.TempDir()})
	if err == nil || !isUsageError(err) {
		t.Fatalf("err = %v, want a usage error", err)
	}
}
