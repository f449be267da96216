package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/store"
)

// TestRunPushKeepsPasswordSecret: `run --push http://user:pw@host` sends
// the credentials to the server and nowhere else: not into run.json's
// config.args, not to stdout, stderr, `show --json` or the run's web page.
// (issue 14, part 4)
func TestRunPushKeepsPasswordSecret(t *testing.T) {
	const pw = "hunter2-secret"
	var mu sync.Mutex
	var gotUser, gotPass string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotUser, gotPass, _ = r.BasicAuth()
		mu.Unlock()
	}))
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "runs")
	push := strings.Replace(srv.URL, "http://", "http://alice:"+pw+"@", 1)
	out, errs, code := executeWithin(t, time.Minute, "run", "test-broken-push", "--variant", "spins", "--count", "2", "--time", "5ms", "--warmup", "1ms",
		"--profile", "wall", "--profile-time", "200ms", "-o", dir, "--push", push)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	mu.Lock()
	if gotUser != "alice" || gotPass != pw {
		t.Errorf("server got basic auth %q:%q", gotUser, gotPass)
	}
	mu.Unlock()
	run, err := store.Open(dir).Load(store.Latest)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, run.ID, "run.json"))
	show, _, _ := execute(t, "show", "--json", "-o", dir)
	for what, s := range map[string]string{"stdout": out, "stderr": errs, "run.json": string(data), "show --json": show} {
		if strings.Contains(s, pw) {
			t.Errorf("%s shows the password:\n%s", what, s)
		}
	}
	if !strings.Contains(string(data), "http://xxxxx@127.0.0.1") {
		t.Errorf("run.json does not record the redacted URL:\n%s", data)
	}
}

// TestRunPushKeepsQuerySecret: a token in the --push URL's query is
// neither stored nor shown, whatever its parameter is called (issue 26).
func TestRunPushKeepsQuerySecret(t *testing.T) {
	const token, pw = "tok-3e1f9a", "pw-hunter2"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "runs")
	push := srv.URL + "/?token=" + token + "&password=" + pw + "&x=" + token
	out, errs, code := executeWithin(t, time.Minute, "run", "test-broken-push", "--variant", "spins", "--count", "2", "--time", "5ms", "--warmup", "1ms",
		"--profile", "wall", "--profile-time", "200ms", "-o", dir, "--push", push)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	run, err := store.Open(dir).Load(store.Latest)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, run.ID, "run.json"))
	show, _, _ := execute(t, "show", "--json", "-o", dir)
	for what, s := range map[string]string{"stdout": out, "stderr": errs, "run.json": string(data), "show --json": show} {
		if strings.Contains(s, token) || strings.Contains(s, pw) {
			t.Errorf("%s shows the secret:\n%s", what, s)
		}
	}
	if !strings.Contains(string(data), "?token=xxxxx\\u0026password=xxxxx\\u0026x=xxxxx") {
		t.Errorf("run.json does not record the redacted URL:\n%s", data)
	}
}
