package store

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func newRun(t *testing.T, s *Store, started time.Time, scenario string) *Writer {
	t.Helper()
	r := &Run{ID: NewID(started, scenario), Scenario: scenario, Started: started}
	w, err := s.Create(r)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestCreateCommitListLoad(t *testing.T) {
	s := Open(filepath.Join(t.TempDir(), "runs"))
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	w1 := newRun(t, s, t0, "cipher-cache")
	if err := w1.WriteFile("cases/a/wall.pb.gz", []byte("x")); err != nil {
		t.Fatal(err)
	}
	// A partial run is invisible to readers.
	if runs, _, _ := s.List(); len(runs) != 0 {
		t.Fatalf("partial run listed: %v", runs)
	}
	w1.run.Cases = append(w1.run.Cases, Case{Name: "variant=a/threads=1", Status: StatusOK})
	w1.run.Complete = true
	dir, err := w1.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "cases/a/wall.pb.gz")); err != nil {
		t.Fatal(err)
	}
	w2 := newRun(t, s, t0.Add(time.Minute), "uuid-hash")
	if _, err := w2.Commit(); err != nil {
		t.Fatal(err)
	}
	// The same second and scenario again gets a distinct id.
	w3 := newRun(t, s, t0, "cipher-cache")
	if w3.run.ID == w1.run.ID {
		t.Fatalf("duplicate id %s", w3.run.ID)
	}
	w3.Commit()

	runs, skipped, err := s.List()
	if err != nil || len(skipped) != 0 {
		t.Fatal(err, skipped)
	}
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	want := []string{"20261130-100100-uuid-hash", "20261130-100000-cipher-cache-2", "20261130-100000-cipher-cache"}
	if len(ids) != 3 || ids[0] != want[0] || ids[1] != want[1] || ids[2] != want[2] {
		t.Fatalf("List order %v, want %v", ids, want)
	}
	latest, err := s.Load(Latest)
	if err != nil || latest.ID != want[0] {
		t.Fatalf("Load(latest) = %v, %v", latest, err)
	}
	r, err := s.Load("20261130-100000-cipher-cache")
	if err != nil || !r.Complete || len(r.Cases) != 1 {
		t.Fatalf("Load = %+v, %v", r, err)
	}
	if c, ok := r.Case(Slug("variant=a/threads=1")); !ok || c.Status != StatusOK {
		t.Fatalf("Case by slug: %v %v", c, ok)
	}
}

func TestCorruptRunIsSkippedNotFatal(t *testing.T) {
	s := Open(t.TempDir())
	w := newRun(t, s, time.Now(), "x")
	w.Commit()
	bad := filepath.Join(s.Root, "20200101-000000-bad")
	os.Mkdir(bad, 0o755)
	os.WriteFile(filepath.Join(bad, "run.json"), []byte("{not json"), 0o644)
	runs, skipped, err := s.List()
	if err != nil || len(runs) != 1 || len(skipped) != 1 {
		t.Fatalf("runs=%d skipped=%v err=%v", len(runs), skipped, err)
	}
	if _, err := s.Load("20200101-000000-bad"); err == nil {
		t.Fatal("corrupt run loaded")
	}
}

func TestPathRefusesEscapes(t *testing.T) {
	s := Open(t.TempDir())
	w := newRun(t, s, time.Now(), "x")
	w.WriteFile("cases/a/wall.svg", []byte("<svg/>"))
	dir, _ := w.Commit()
	id := filepath.Base(dir)
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("s"), 0o644)
	os.Symlink(secret, filepath.Join(dir, "cases/a/link.svg"))

	tests := []struct {
		name, id, rel string
		ok            bool
	}{
		{"plain", id, "cases/a/wall.svg", true},
		{"dotdot", id, "../x/run.json", false},
		{"dotdot in id", "..", "run.json", false},
		{"absolute", id, "/etc/passwd", false},
		{"hidden", id, "cases/.a", false},
		{"encoded stays literal", id, "%2e%2e/run.json", false},
		{"symlink", id, "cases/a/link.svg", false},
		{"id with slash", id + "/cases", "a/wall.svg", false},
		{"empty", id, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Path(tt.id, tt.rel)
			if (err == nil) != tt.ok {
				t.Errorf("Path(%q, %q) err=%v, want ok=%v", tt.id, tt.rel, err, tt.ok)
			}
		})
	}
}

func TestCreateUnwritable(t *testing.T) {
	if os.Geteuid() == 0 {
		// root ignores permission bits; use a path under a regular file.
		f := filepath.Join(t.TempDir(), "file")
		os.WriteFile(f, nil, 0o644)
		if _, err := Open(filepath.Join(f, "runs")).Create(&Run{ID: "a"}); err == nil {
			t.Fatal("Create under a regular file succeeded")
		}
		return
	}
	d := t.TempDir()
	os.Chmod(d, 0o555)
	if _, err := Open(d).Create(&Run{ID: "a"}); err == nil {
		t.Fatal("Create in read-only dir succeeded")
	}
}

func TestSlug(t *testing.T) {
	tests := []struct{ in, want string }{
		{"variant=mutex/keys=1024/key=ssk/threads=4", "variant=mutex,keys=1024,key=ssk,threads=4"},
		{"variant=a/p=../../x", "variant=a,p=..,..,x"}, // one path segment: no traversal,
		{".hidden", "_hidden"},
	}
	for _, tt := range tests {
		if got := Slug(tt.in); got != tt.want {
			t.Errorf("Slug(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestStatInfinitiesRoundTrip(t *testing.T) {
	in := Stat{N: 3, Mean: 2, MeanLo: 1, MeanHi: 3, Median: 2, MedianLo: math.Inf(-1), MedianHi: math.Inf(1), Min: 1, Max: 3}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out Stat
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Fatalf("round trip %+v -> %s -> %+v", in, b, out)
	}
}
