package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/store"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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

// TestServeStoreFlag: serve names its store with -o/--out, as every other
// command does; --dir, its old name, still works, hidden from the help,
// and says on stderr to use --out.
func TestServeStoreFlag(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		warn bool
	}{
		{"short", []string{"-o", "/s"}, false},
		{"long", []string{"--out", "/s"}, false},
		{"long with =", []string{"--out=/s"}, false},
		{"old name", []string{"--dir", "/s"}, true},
		{"old name with =", []string{"--dir=/s"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			var got string
			cmd := newServeCmd(&IO{Out: &out, Err: &errb}, func(_ context.Context, _ *IO, o *ServeOptions) error {
				got = o.Dir
				return nil
			})
			cmd.SetArgs(tt.args)
			cmd.SetOut(&out)
			cmd.SetErr(&errb)
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			if got != "/s" {
				t.Errorf("store %q, want /s", got)
			}
			if warned := strings.Contains(errb.String(), "--dir is deprecated: name the store with -o/--out"); warned != tt.warn {
				t.Errorf("deprecation said %v, want %v: stderr %q", warned, tt.warn, errb.String())
			}
			if out.Len() > 0 {
				t.Errorf("stdout %q", out.String())
			}
		})
	}
	help, _, _ := execute(t, "serve", "--help")
	if strings.Contains(help, "--dir") || !strings.Contains(help, "-o, --out") {
		t.Errorf("serve --help:\n%s", help)
	}
}

// TestStoreFlagNamed: every command that takes a run store names it
// -o/--out (serve's was --dir).
func TestStoreFlagNamed(t *testing.T) {
	var visit func(c *cobra.Command)
	n := 0
	visit = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden || !strings.HasPrefix(f.Usage, "run store directory") {
				return
			}
			n++
			if f.Name != "out" || f.Shorthand != "o" {
				t.Errorf("%s: the store flag is -%s/--%s, want -o/--out", c.CommandPath(), f.Shorthand, f.Name)
			}
		})
		for _, s := range c.Commands() {
			visit(s)
		}
	}
	visit(NewRoot(&IO{Out: io.Discard, Err: io.Discard}))
	if n < 8 {
		t.Errorf("%d commands take a store, want run, bench, show, compare, push, runs (3), recover, serve", n)
	}
}

// TestMakeRunHint: the empty store's page names a scenario this binary
// has, by the command the user ran, and the store served unless it is
// the default one.
func TestMakeRunHint(t *testing.T) {
	for _, tt := range []struct{ name, dir, want string }{
		{"default store", store.DefaultDir, "go run . run cipher-cache"},
		{"a store of its own", "/tmp/runs", "go run . run cipher-cache -o /tmp/runs"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := makeRunHint(&IO{Cmd: "go run ."}, tt.dir); got != tt.want {
				t.Errorf("makeRunHint(%q) = %q, want %q", tt.dir, got, tt.want)
			}
		})
	}
}
