package web

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStoreDoorRefusals: a case profile replaced by a FIFO, a device node
// or a symbolic link out of the store, and a run.json replaced by a FIFO,
// are refused by every page that reads them, at once: no request hangs
// and nothing outside the store is served. (issue 14, part 3)
func TestStoreDoorRefusals(t *testing.T) {
	srv, f := newTestServer(t)
	run := f.full
	runDir := filepath.Join(f.root, run.ID)
	outside := filepath.Join(t.TempDir(), "outside.pb.gz")
	os.WriteFile(outside, testProfile(t, "wall", 0), 0o644)

	replace := func(i int, how string) {
		p := filepath.Join(runDir, filepath.FromSlash(run.Cases[i].Profiles["wall"]))
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		var err error
		switch how {
		case "fifo":
			err = syscall.Mkfifo(p, 0o644)
		case "device":
			if err = syscall.Mknod(p, syscall.S_IFCHR|0o644, 1<<8|5); err != nil { // /dev/zero
				err = os.Symlink("/dev/zero", p) // not root: a link to one
			}
		case "symlink":
			err = os.Symlink(outside, p)
		case "hardlink": // issue 26: read and served
			err = os.Link(outside, p)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// Before: a case page links its profile file.
	if _, _, body := get(t, srv.URL+caseURL(run, 0)+"?kind=wall"); !strings.Contains(body, `href="/runs/`+run.ID+`/files/`+escapePath(run.Cases[0].Profiles["wall"])+`"`) {
		t.Fatalf("the case page does not link its profile file %s", run.Cases[0].Profiles["wall"])
	}
	hows := []string{"fifo", "device", "symlink", "hardlink"}
	for i, how := range hows {
		replace(i, how)
	}
	// A second run whose run.json is a FIFO.
	fifoRun := filepath.Join(f.root, "20200101-000000-fifo")
	os.Mkdir(fifoRun, 0o755)
	syscall.Mkfifo(filepath.Join(fifoRun, "run.json"), 0o644)

	cl := &http.Client{Timeout: 10 * time.Second}
	for i, how := range hows {
		c := caseURL(run, i)
		file := "/runs/" + run.ID + "/files/" + run.Cases[i].Profiles["wall"]
		for _, path := range []string{c + "?kind=wall", c + "/flame.svg?kind=wall", c + "/flame.json?kind=wall", c + "/folded?kind=wall", file} {
			t.Run(how+" "+path[strings.LastIndex(path, "/"):], func(t *testing.T) {
				start := time.Now()
				resp, err := cl.Get(srv.URL + path)
				if err != nil {
					t.Fatalf("GET %s: %v (after %v)", path, err, time.Since(start))
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if strings.Contains(path, "?kind=wall") && !strings.Contains(path, "/flame") && !strings.Contains(path, "/folded") {
					// The case page shows the profile's error in place,
					// with the refusal's status (issue 26: it was 200).
					if strings.Contains(string(body), `href="/runs/`+run.ID+`/files/`+escapePath(run.Cases[i].Profiles["wall"])+`"`) {
						t.Errorf("GET %s: the page links the refused file %s", path, file)
					}
					if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "refused") {
						t.Errorf("GET %s: status %d, want 403 and a page that says refused", path, resp.StatusCode)
					}
					return
				}
				if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusBadRequest {
					t.Errorf("GET %s: status %d, want 403 or 400", path, resp.StatusCode)
				}
			})
		}
	}
	for _, path := range []string{"/runs/20200101-000000-fifo", "/"} {
		start := time.Now()
		resp, err := cl.Get(srv.URL + path)
		if err != nil {
			t.Fatalf("GET %s: %v (after %v)", path, err, time.Since(start))
		}
		resp.Body.Close()
		if path != "/" && resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET %s: status %d, want 403", path, resp.StatusCode)
		}
	}
	// The runs page says why a linked run is not listed.
	os.Symlink(runDir, filepath.Join(f.root, "linked-run"))
	_, _, body := get(t, srv.URL+"/")
	if !strings.Contains(body, "linked-run") || !strings.Contains(body, "symbolic link") {
		t.Errorf("runs page does not mention the linked run")
	}
}

// TestRunPageHidesPassword: a run stored before args were redacted, with
// a password in its recorded command line, shows the command without it.
// (issue 14, part 4)
func TestRunPageHidesPassword(t *testing.T) {
	srv, f := newTestServer(t)
	dir := filepath.Join(f.root, "20200101-000000-old")
	os.Mkdir(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "run.json"), []byte(`{"id":"20200101-000000-old","scenario":"x","started":"2020-01-01T00:00:00Z",
		"config":{"args":["run","x","--push","http://alice:hunter2@h:4040"],"count":1,"time":"1s","warmup":"0s","profile":[],"profile_time":"1s","seed":1},"cases":[]}`), 0o644)
	for _, path := range []string{"/runs/20200101-000000-old", "/", "/runs/20200101-000000-old/files/run.json"} {
		status, _, body := get(t, srv.URL+path)
		if status != http.StatusOK || strings.Contains(body, "hunter2") {
			t.Errorf("GET %s: status %d, password shown: %v", path, status, strings.Contains(body, "hunter2"))
		}
	}
	if _, _, body := get(t, srv.URL+"/runs/20200101-000000-old"); !strings.Contains(body, "xxxxx@h:4040") {
		t.Errorf("run page does not show the redacted command")
	}
}

// TestIncompleteNoteShown: the reason a run is incomplete (a lost profile,
// an interrupt) is on its page. (issue 14, part 5)
func TestIncompleteNoteShown(t *testing.T) {
	srv, f := newTestServer(t)
	dir := filepath.Join(f.root, "20200101-000000-lost")
	os.Mkdir(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "run.json"), []byte(`{"id":"20200101-000000-lost","scenario":"x","started":"2020-01-01T00:00:00Z","complete":false,
		"note":"incomplete: the profiles of 1 of 1 profiled cases were not all saved: variant=a: no space left on device",
		"config":{"count":1,"time":"1s","warmup":"0s","profile":[],"profile_time":"1s","seed":1},"cases":[]}`), 0o644)
	_, _, body := get(t, srv.URL+"/runs/20200101-000000-lost")
	if !strings.Contains(body, "incomplete") || !strings.Contains(body, "no space left on device") {
		t.Errorf("run page does not give the reason")
	}
	// A run stored with the long note of older versions reads as new ones do.
	dir = filepath.Join(f.root, "20200101-000001-old")
	os.Mkdir(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "run.json"), []byte(`{"id":"20200101-000001-old","scenario":"x","started":"2020-01-01T00:00:01Z","complete":false,
		"note":"interrupted: the rounds measured so far are saved and the run is marked incomplete (by SIGINT)",
		"config":{"count":1,"time":"1s","warmup":"0s","profile":[],"profile_time":"1s","seed":1},"cases":[]}`), 0o644)
	_, _, body = get(t, srv.URL+"/runs/20200101-000001-old")
	if !strings.Contains(body, "interrupted by SIGINT") || strings.Contains(body, "rounds measured so far") {
		t.Errorf("run page gives the old long note, not its short form")
	}
}
