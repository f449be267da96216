package store

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/model"
)

func newRun(t *testing.T, s *Store, started time.Time, scenario string) *Writer {
	t.Helper()
	r := &model.Run{ID: NewID(started, scenario), Scenario: scenario, Started: started}
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
	w1.run.Cases = append(w1.run.Cases, model.Case{Name: "variant=a/threads=1", Status: model.StatusOK})
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
	if c, ok := r.Case(model.Slug("variant=a/threads=1")); !ok || c.Status != model.StatusOK {
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
		if _, err := Open(filepath.Join(f, "runs")).Create(&model.Run{ID: "a"}); err == nil {
			t.Fatal("Create under a regular file succeeded")
		}
		return
	}
	d := t.TempDir()
	os.Chmod(d, 0o555)
	if _, err := Open(d).Create(&model.Run{ID: "a"}); err == nil {
		t.Fatal("Create in read-only dir succeeded")
	}
}

// TestClassificationRoundTrip: the classification inputs survive run.json,
// an empty one stays distinct from none (a run made without work patterns
// is not an old run), and a run.json from before the field still loads.
func TestClassificationRoundTrip(t *testing.T) {
	s := Open(filepath.Join(t.TempDir(), "runs"))
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	want := &model.Classification{
		Work:  []string{`^example\.com/codec\.`},
		Rules: []model.Rule{{Category: "lock", Pattern: `^example\.com/spin\.`}, {Category: "other", Pattern: `^cgocall$`, Fallback: true}},
	}
	tests := []struct {
		name string
		c    *model.Classification
		json string // what run.json says, if given: not written through Create
	}{
		{name: "recorded", c: want},
		{name: "empty", c: &model.Classification{}},
		{name: "none", c: nil},
		{name: "old run.json", json: `{"id":"old","scenario":"x","started":"2026-01-02T03:04:05Z","complete":true,` +
			`"env":{"go_version":"go1.26.8"},"config":{"args":null,"count":1,"time":"1s","warmup":"0s","profile":[],"profile_time":"1s","seed":1},"cases":[]}`},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := "old"
			if tt.json != "" {
				os.MkdirAll(filepath.Join(s.Root, id), 0o755)
				if err := os.WriteFile(filepath.Join(s.Root, id, "run.json"), []byte(tt.json), 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				w := newRun(t, s, t0.Add(time.Duration(i)*time.Minute), "s")
				w.run.Config.Classification = tt.c
				if _, err := w.Commit(); err != nil {
					t.Fatal(err)
				}
				id = w.run.ID
			}
			r, err := s.Load(id)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(r.Config.Classification)
			wantJSON, _ := json.Marshal(tt.c)
			if string(got) != string(wantJSON) {
				t.Errorf("classification %s, want %s", got, wantJSON)
			}
			if tt.c == nil && r.Config.Classification != nil {
				t.Errorf("no classification read as %+v", r.Config.Classification)
			}
		})
	}
	raw, _ := json.Marshal(model.Config{Classification: want})
	for _, key := range []string{`"classification":{"work":`, `"rules":[{"category":"lock","pattern":`, `"fallback":true`} {
		if !strings.Contains(string(raw), key) {
			t.Errorf("config JSON lacks %s: %s", key, raw)
		}
	}
}

// TestLatestAllUnreadable: a store whose only run cannot be read has no
// latest, and says so, not that it has no runs.
func TestLatestAllUnreadable(t *testing.T) {
	dir := t.TempDir()
	id := NewID(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), "cipher-cache")
	if err := os.MkdirAll(filepath.Join(dir, id), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, id, "run.json"), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(dir).Load(Latest)
	if !errors.Is(err, ErrNoRuns) || !errors.Is(err, ErrUnreadable) || !strings.Contains(err.Error(), "no run in "+dir+" can be read") {
		t.Errorf("Load(latest) = %v; want ErrNoRuns and ErrUnreadable, 'no run in … can be read'", err)
	}
	if _, err := Open(t.TempDir()).Load(Latest); !errors.Is(err, ErrNoRuns) || errors.Is(err, ErrUnreadable) {
		t.Errorf("empty store: Load(latest) = %v; want ErrNoRuns alone", err)
	}
	// Being written: not called unreadable.
	if err := os.Rename(filepath.Join(dir, id), filepath.Join(dir, "."+id+".partial")); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir).Load(Latest); !errors.Is(err, ErrUnreadable) || !strings.Contains(err.Error(), "no run in "+dir+" is finished: the one there is partial") {
		t.Errorf("partial only: Load(latest) = %v", err)
	}
}
