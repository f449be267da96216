package cli

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/store"
)

// doorRun stores a run with one case (storeCase) and returns the
// argument naming the case, the run directory and the path of its wall
// profile.
func doorRun(t *testing.T) (arg, runDir, wall string) {
	t.Helper()
	arg = storeCase(t, "cipher-cache", nil)
	runDir = filepath.Dir(filepath.Dir(arg))
	return arg, runDir, filepath.Join(runDir, "cases", "variant=a,threads=1", "wall.pb.gz")
}

// executeWithin is execute, failing the test if the command takes longer
// than d (a FIFO would make it hang forever), with the arguments recorded
// as Main records them.
func executeWithin(t *testing.T, d time.Duration, args ...string) (string, string, int) {
	t.Helper()
	type result struct {
		out, errs string
		code      int
	}
	done := make(chan result, 1)
	go func() {
		var out, errb bytes.Buffer
		root := NewRoot(&IO{Out: &out, Err: &errb, Args: args})
		root.SetArgs(args)
		err := root.Execute()
		if err != nil {
			printError(&errb, nil, err) // as Main prints it
		}
		done <- result{out.String(), errb.String(), exitCode(err)}
	}()
	select {
	case r := <-done:
		return r.out, r.errs, r.code
	case <-time.After(d):
		t.Fatalf("perflab %s: still running after %v", strings.Join(args, " "), d)
	}
	return "", "", 0
}

// TestFlameDoorRefusals: `perflab flame RUN/CASE` reads a stored profile
// only through the store: a symbolic link, a FIFO or a device in its
// place, a run.json whose profile path leaves the run, and a run directory
// that is a symbolic link are all refused, at once. (issue 14, part 3)
func TestFlameDoorRefusals(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.pb.gz")
	data, _ := os.ReadFile(realCPU)
	os.WriteFile(outside, data, 0o644)
	tests := []struct {
		name  string
		setup func(t *testing.T, runDir, wall string)
		link  bool // name the case through a link to the run directory
		want  string
	}{
		{"symlinked profile", func(t *testing.T, runDir, wall string) {
			os.Remove(wall)
			os.Symlink(outside, wall)
		}, false, "symbolic link"},
		{"fifo profile", func(t *testing.T, runDir, wall string) {
			os.Remove(wall)
			syscall.Mkfifo(wall, 0o644)
		}, false, "FIFO"},
		{"device profile", func(t *testing.T, runDir, wall string) {
			os.Remove(wall)
			if syscall.Mknod(wall, syscall.S_IFCHR|0o644, 1<<8|5) != nil {
				os.Symlink("/dev/zero", wall)
			}
		}, false, "refused"},
		{"profile path out of the run", func(t *testing.T, runDir, wall string) {
			editRun(t, runDir, func(r *model.Run) { r.Cases[0].Profiles["wall"] = "../../../../../../" + outside })
		}, false, "invalid path"},
		{"absolute profile path", func(t *testing.T, runDir, wall string) {
			editRun(t, runDir, func(r *model.Run) { r.Cases[0].Profiles["wall"] = outside })
		}, false, "invalid path"},
		{"symlinked run directory", func(t *testing.T, runDir, wall string) {}, true, "symbolic link"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			arg, runDir, wall := doorRun(t)
			tt.setup(t, runDir, wall)
			if tt.link {
				link := filepath.Join(t.TempDir(), filepath.Base(runDir))
				os.Symlink(runDir, link)
				arg = filepath.Join(link, "variant=a/threads=1")
			}
			for _, a := range []string{arg, filepath.Join(filepath.Dir(filepath.Dir(arg)), "cases", "variant=a,threads=1")} {
				out, errs, code := executeWithin(t, 10*time.Second, "flame", a)
				if code == 0 || !strings.Contains(errs, tt.want) {
					t.Errorf("flame %s: exit %d, stderr lacks %q:\n%s", a, code, tt.want, errs)
				}
				if strings.Contains(out, "<svg") {
					t.Errorf("flame %s drew a graph", a)
				}
			}
		})
	}
	// A profile file named directly: a FIFO is refused, not waited on.
	fifo := filepath.Join(t.TempDir(), "p.pb.gz")
	syscall.Mkfifo(fifo, 0o644)
	if _, errs, code := executeWithin(t, 10*time.Second, "flame", fifo); code == 0 || !strings.Contains(errs, "FIFO") {
		t.Errorf("flame FIFO: exit %d\n%s", code, errs)
	}
}

func editRun(t *testing.T, runDir string, edit func(*model.Run)) {
	t.Helper()
	p := filepath.Join(runDir, "run.json")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var r model.Run
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	edit(&r)
	if data, err = json.Marshal(&r); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// gzipBomb writes n zero bytes, gzip-compressed, to path: about 1 KB of
// file per MB of data.
func gzipBomb(t *testing.T, path string, n int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	zero := make([]byte, 1<<20)
	for ; n > 0; n -= int64(len(zero)) {
		zw.Write(zero)
	}
	zw.Close()
	f.Close()
}

// okIngest accepts every push and counts them.
type okIngest struct{ n atomic.Int32 }

func (o *okIngest) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	o.n.Add(1)
}

// TestPushDoorRefusals: push reads stored profiles through the store and
// the bounded reader: a FIFO, a symbolic link out of the store and a gzip
// bomb are each that profile's failure, reported, while the others are
// sent; a run directory that is a symbolic link is refused before
// anything is sent. (issue 14, part 3)
func TestPushDoorRefusals(t *testing.T) {
	dir := quickRun(t, "wall,cpu,block")
	st := store.Open(dir)
	run, err := st.Load(store.Latest)
	if err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(dir, run.ID)
	outside := filepath.Join(t.TempDir(), "secret.pb.gz")
	data, _ := os.ReadFile(realCPU)
	os.WriteFile(outside, data, 0o644)
	// Case 0: wall a FIFO, cpu a link out of the store, block a gzip bomb.
	c := run.Cases[0]
	p := func(kind string) string { return filepath.Join(runDir, filepath.FromSlash(c.Profiles[kind])) }
	os.Remove(p("wall"))
	syscall.Mkfifo(p("wall"), 0o644)
	os.Remove(p("cpu"))
	os.Symlink(outside, p("cpu"))
	gzipBomb(t, p("block"), 512<<20) // 512 MB of zeros in about 0.5 MB
	ingest := &okIngest{}
	srv := httptest.NewServer(ingest)
	defer srv.Close()
	start := time.Now()
	out, errs, code := executeWithin(t, 60*time.Second, "push", run.ID, "-o", dir, "--url", srv.URL)
	t.Logf("push took %v", time.Since(start))
	if code != 1 {
		t.Fatalf("push: exit %d, want 1\n%s%s", code, out, errs)
	}
	for _, want := range []string{"FIFO", "symbolic link", "gzip bomb"} {
		if !strings.Contains(out+errs, want) {
			t.Errorf("push output lacks %q:\n%s%s", want, out, errs)
		}
	}
	// The other case's profiles went (its block profile may be empty).
	sent := strings.Count(out, "  sent\n")
	if n := ingest.n.Load(); n < 2 || int(n) != sent {
		t.Errorf("%d profiles reached the server, %d reported sent, want the other case's 2 or 3", n, sent)
	}
	// The whole run through a link: refused before sending.
	link := filepath.Join(t.TempDir(), run.ID)
	os.Symlink(runDir, link)
	ingest.n.Store(0)
	_, errs, code = executeWithin(t, 10*time.Second, "push", link, "--url", srv.URL)
	if code == 0 || !strings.Contains(errs, "symbolic link") || ingest.n.Load() != 0 {
		t.Errorf("push of a linked run: exit %d, %d sent\n%s", code, ingest.n.Load(), errs)
	}
}
