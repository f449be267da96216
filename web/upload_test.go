package web

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/profiles"
	"github.com/perflab/perflab/profiles/flame"
)

// TestUploadWork gives an upload work patterns, as perflab flame's --work:
// the hashing becomes work in the budget and the top functions; a pattern
// that does not compile is refused.
func TestUploadWork(t *testing.T) {
	srv, _ := newTestServer(t)
	prof := testProfile(t, "cpu", 1)
	post := func(work string) *http.Response {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		mw.WriteField("work", work)
		fw, _ := mw.CreateFormFile("profile", "cpu.pb.gz")
		fw.Write(prof)
		mw.Close()
		req, _ := http.NewRequest("POST", srv.URL+"/upload", &body)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	for _, tc := range []struct {
		name, work string
		isWork     bool
	}{{"none", "", false}, {"one a line", "^crypto/\n^nothing\\.", true}, {"commas", "^nothing\\., ^crypto/", true}} {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(tc.work)
			if resp.StatusCode != http.StatusSeeOther {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			_, _, page := get(t, srv.URL+resp.Header.Get("Location"))
			// The hashing's row in the top-functions table names its
			// category in its title.
			m := regexp.MustCompile(`title="[^"]*sha256\.blockSHANI \(([a-z]+)\)"`).FindStringSubmatch(page)
			if m == nil {
				t.Fatal("no blockSHANI row on the page")
			}
			if got := m[1] == "work"; got != tc.isWork {
				t.Errorf("blockSHANI classified as %s; want work: %v", m[1], tc.isWork)
			}
		})
	}
	resp := post("(")
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "work patterns are refused") {
		t.Errorf("bad pattern: %d %s", resp.StatusCode, b)
	}
}

var uploadLimit = flag.Bool("upload-limit", false, "measure the peak memory of uploading the generated 100k-stack profile (make bench)")

// TestUploadLimit measures what an upload of the generated 100,000-stack
// profile takes at its peak, in a child process that does what the upload
// handler does after reading the form (TestUploadChild). Issue 13's
// target: ≤ 300 MB. The profile is the one `go test ./profiles/flame -run
// TestDrawLimit -limit` generates.
func TestUploadLimit(t *testing.T) {
	if !*uploadLimit {
		t.Skip("run with -upload-limit (make bench)")
	}
	file := filepath.Join(os.TempDir(), "perflab-bench", "stacks-100000.pb.gz")
	if _, err := os.Stat(file); err != nil {
		t.Skipf("%v: run go test ./profiles/flame -run TestDrawLimit -limit first", err)
	}
	for range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestUploadChild$")
		cmd.Env = append(os.Environ(), "PERFLAB_UPLOAD="+file)
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		rss := float64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) / 1024
		verdict := "ok"
		if rss > 300 {
			verdict = "MISSED"
		}
		t.Logf("upload of %s: %.2f s, peak RSS %.0f MB (target ≤ 300 MB): %s", filepath.Base(file), time.Since(start).Seconds(), rss, verdict)
	}
}

func TestUploadChild(t *testing.T) {
	file := os.Getenv("PERFLAB_UPLOAD")
	if file == "" {
		t.Skip("a child of TestUploadLimit")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	src, err := flame.ReadSource(bytes.NewReader(data), profiles.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	c := newUploadCache(8, maxUploadBytes)
	u := &upload{Token: newToken(), Name: filepath.Base(file), Size: len(data), Added: time.Now(), Data: data, Src: src}
	c.add(u)
	if len(u.Views) == 0 || u.Views[u.Default].FlameErr != nil {
		t.Fatal(fmt.Sprint("no flame graph: ", u.Views))
	}
}
