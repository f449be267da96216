package pyroscope

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// envFakeServer makes the test binary act as the Pyroscope server that
// scripts/pyroscope.sh starts, so the script's cold build, start and stop
// can be tested in seconds and without the real 71 MB binary.
const envFakeServer = "PERFLAB_TEST_FAKE_PYROSCOPE"

func TestMain(m *testing.M) {
	if os.Getenv(envFakeServer) != "" {
		fakeServer(os.Args[1:])
		return
	}
	os.Exit(m.Run())
}

// fakeServer serves /ready on the -server.http-listen-port it is given, as
// the real server does, until SIGTERM; like the real one it exits with an
// error when the port is taken.
func fakeServer(args []string) {
	port := ""
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "-server.http-listen-port="); ok {
			port = v
		}
		if a == "-test.fail-at-start" { // as the real one does with a bad flag
			fmt.Fprintln(os.Stderr, "fake pyroscope: flag provided but not defined")
			os.Exit(1)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake pyroscope:", err)
		os.Exit(1)
	}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ready" {
			http.NotFound(w, r)
		}
	}))
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	<-sig
}

// scriptEnv runs scripts/pyroscope.sh against a fake go command, whose
// `go build` "builds" a wrapper that runs this test binary as the server.
type scriptEnv struct {
	t     *testing.T
	env   []string
	tmp   string // the script's TMPDIR: source copies and data dirs
	cache string
	port  int
}

// skipOrFail skips a script test for want of a tool, except in CI, where
// .ci/run's machine must have it: a skip there would hide the test.
func skipOrFail(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(why + " (CI=true: the script tests must run)")
	}
	t.Skip(why)
}

func newScriptEnv(t *testing.T) *scriptEnv {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("scripts/pyroscope.sh is a bash script")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		skipOrFail(t, "no bash")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin, mod := filepath.Join(dir, "bin"), filepath.Join(dir, "mod")
	for _, d := range []string{bin, mod, filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// What `go mod download -json` prints: the error is in the JSON, on
	// stdout, with exit status 1.
	fakeGo := `#!/bin/sh
case "$1 $2" in
"mod download")
	if [ -n "$FAKE_GO_FAIL" ]; then
		printf '{\n\t"Path": "github.com/grafana/pyroscope",\n\t"Error": "github.com/grafana/pyroscope@v1.12.0: 403 Forbidden\\n\\tserver response: not available"\n}\n'
		exit 1
	fi
	printf '{\n\t"Path": "github.com/grafana/pyroscope",\n\t"Dir": "%s",\n\t"Sum": "h1:x"\n}\n' "$FAKE_GO_MOD" ;;
"mod edit") ;;
build*)
	out=
	while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
	printf '#!/bin/sh\n%s=1 exec "%s" "$@"\n' "$FAKE_SERVER_ENV" "$FAKE_SERVER" >"$out"
	chmod +x "$out" ;;
*) echo "fake go: unexpected $*" >&2; exit 3 ;;
esac
`
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(fakeGo), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module github.com/grafana/pyroscope\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := &scriptEnv{t: t, tmp: filepath.Join(dir, "tmp"), cache: filepath.Join(dir, "cache"), port: freePort(t)}
	e.env = append(os.Environ(),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"FAKE_GO_MOD="+mod, "FAKE_SERVER="+self, "FAKE_SERVER_ENV="+envFakeServer,
		"PERFLAB_CACHE="+e.cache, "TMPDIR="+e.tmp, "PYROSCOPE_PORT="+strconv.Itoa(e.port),
		"PYROSCOPE_VERSION=v1.12.0", "PYROSCOPE_API_VERSION=", "PYROSCOPE_EXTRA_ARGS=")
	t.Cleanup(func() { e.run("stop") })
	return e
}

// freePort returns a port whose neighbours at the script's offsets (gRPC
// +5055, memberlist +3906) are free too.
func freePort(t *testing.T) int {
	t.Helper()
	for i := 0; i < 50; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if p+5055 > 65535 {
			continue
		}
		free := true
		for _, q := range []int{p + 5055, p + 3906} {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", q))
			if err != nil {
				free = false
				break
			}
			l.Close()
		}
		if free {
			return p
		}
	}
	skipOrFail(t, "no free port with free neighbours")
	return 0
}

// run runs the script with args and returns its stdout, stderr and exit
// status.
func (e *scriptEnv) run(args ...string) (string, string, int) {
	e.t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "pyroscope.sh"))
	if err != nil {
		e.t.Fatal(err)
	}
	cmd := exec.Command("bash", append([]string{script}, args...)...)
	cmd.Env = e.env
	var out, errs strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errs
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return out.String(), errs.String(), code
}

func (e *scriptEnv) url() string { return fmt.Sprintf("http://127.0.0.1:%d", e.port) }

func (e *scriptEnv) ready() bool {
	resp, err := http.Get(e.url() + "/ready")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func (e *scriptEnv) stateDir() string {
	return filepath.Join(e.cache, fmt.Sprintf("pyroscope-run-%d", e.port))
}

// tmpLeft lists what the script left in its TMPDIR.
func (e *scriptEnv) tmpLeft() []string {
	entries, _ := os.ReadDir(e.tmp)
	var names []string
	for _, en := range entries {
		names = append(names, en.Name())
	}
	return names
}

// TestScriptColdStartAndStop builds into an empty cache, starts, starts
// again and stops. A cold start used to die after printing the URL ("src:
// unbound variable", from a RETURN trap that outlived the build), so CI
// failed on every machine without a cached binary.
func TestScriptColdStartAndStop(t *testing.T) {
	e := newScriptEnv(t)
	out, errs, code := e.run("start")
	if code != 0 || strings.TrimSpace(out) != e.url() {
		t.Fatalf("cold start: exit %d, stdout %q, stderr:\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "built ") || !e.ready() {
		t.Fatalf("cold start did not build or the server is not ready; stderr:\n%s", errs)
	}
	out, errs, code = e.run("start")
	if code != 0 || strings.TrimSpace(out) != e.url() || !strings.Contains(errs, "already running") {
		t.Errorf("second start: exit %d, stdout %q, stderr:\n%s", code, out, errs)
	}
	if left := e.tmpLeft(); len(left) != 1 || !strings.HasPrefix(left[0], "pyroscope-data.") {
		t.Errorf("TMPDIR holds %v, want only the running server's data dir", left)
	}
	if _, errs, code = e.run("stop"); code != 0 {
		t.Fatalf("stop: exit %d\n%s", code, errs)
	}
	if e.ready() {
		t.Error("server still answers after stop")
	}
	if left := e.tmpLeft(); len(left) != 0 {
		t.Errorf("stop left %v in TMPDIR", left)
	}
}

// TestScriptDownloadFailure: the reason is shown (go mod download puts it
// in its JSON on stdout, which the script used to discard before exiting
// silently) and no source copy is left behind.
func TestScriptDownloadFailure(t *testing.T) {
	e := newScriptEnv(t)
	e.env = append(e.env, "FAKE_GO_FAIL=1")
	_, errs, code := e.run("start")
	if code == 0 || !strings.Contains(errs, "403 Forbidden server response: not available") {
		t.Errorf("exit %d, stderr:\n%s\nwant a failure naming the proxy's answer", code, errs)
	}
	if left := e.tmpLeft(); len(left) != 0 {
		t.Errorf("failed build left %v in TMPDIR", left)
	}
}

// TestScriptPortInUse: another process on the port would have answered
// /ready for a server that failed to bind.
func TestScriptPortInUse(t *testing.T) {
	e := newScriptEnv(t)
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", e.port))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, errs, code := e.run("start")
	if code == 0 || !strings.Contains(errs, fmt.Sprintf("port %d is in use", e.port)) {
		t.Errorf("exit %d, stderr:\n%s\nwant a failure naming the port", code, errs)
	}
}

// TestScriptStalePidFile: a pid file left by a crash names a pid that is
// now another process; start must not report it as the server and stop
// must not kill it.
func TestScriptStalePidFile(t *testing.T) {
	e := newScriptEnv(t)
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		skipOrFail(t, "no sleep command: "+err.Error())
	}
	exited := make(chan error, 1)
	go func() { exited <- other.Wait() }()
	defer other.Process.Kill()
	writeState := func() {
		if err := os.MkdirAll(e.stateDir(), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(e.stateDir(), "pid"), []byte(strconv.Itoa(other.Process.Pid)+"\n"), 0o644)
		os.WriteFile(filepath.Join(e.stateDir(), "data"), []byte(filepath.Join(e.tmp, "pyroscope-data.gone")+"\n"), 0o644)
	}
	writeState()
	out, errs, code := e.run("start")
	if code != 0 || strings.Contains(errs, "already running") || !e.ready() {
		t.Fatalf("start over a stale pid file: exit %d, stdout %q, stderr:\n%s", code, out, errs)
	}
	e.run("stop")
	writeState()
	if _, errs, code := e.run("stop"); code != 0 {
		t.Errorf("stop with a stale pid file: exit %d\n%s", code, errs)
	}
	select {
	case err := <-exited:
		t.Errorf("stop killed pid %d, which was not the server: %v", other.Process.Pid, err)
	case <-time.After(200 * time.Millisecond):
	}
	if _, err := os.Stat(e.stateDir()); !os.IsNotExist(err) {
		t.Errorf("stale state not removed: %v", err)
	}
}

// TestScriptServerDiesAtStart: a server that exits at once is reported at
// once, with its log, not after the 30 s wait for /ready.
func TestScriptServerDiesAtStart(t *testing.T) {
	e := newScriptEnv(t)
	e.env = append(e.env, "PYROSCOPE_EXTRA_ARGS=-test.fail-at-start")
	start := time.Now()
	_, errs, code := e.run("start")
	if code == 0 || !strings.Contains(errs, "exited during startup") || !strings.Contains(errs, "flag provided but not defined") {
		t.Errorf("exit %d, stderr:\n%s\nwant the failure and the server's log", code, errs)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v to notice", d)
	}
	if _, err := os.Stat(e.stateDir()); !os.IsNotExist(err) {
		t.Errorf("state left behind: %v", err)
	}
}
