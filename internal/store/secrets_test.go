package store

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/model"
)

func TestRedactArgs(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"push URL", []string{"run", "x", "--push", "http://user:pw@host:4040/"}, []string{"run", "x", "--push", "http://xxxxx@host:4040/"}},
		{"flag=URL", []string{"--push=https://u:p%40ss@h/a?q=1"}, []string{"--push=https://xxxxx@h/a?q=xxxxx"}},
		// issue 26: a query's values, whatever their names, and a
		// fragment's; the names stay, to say what was given.
		{"query values", []string{"--push", "http://h/?token=abc123&password=hunter2"}, []string{"--push", "http://h/?token=xxxxx&password=xxxxx"}},
		{"query and userinfo", []string{"--push=http://u:pw@h:4040/p?k=v;x=y#access_token=t&z"}, []string{"--push=http://xxxxx@h:4040/p?k=xxxxx;x=xxxxx#access_token=xxxxx&xxxxx"}},
		{"bare query token", []string{"http://h/?s3cr3t"}, []string{"http://h/?xxxxx"}},
		{"empty query", []string{"http://h/?"}, []string{"http://h/?"}},
		{"no query", []string{"http://h/a/b"}, []string{"http://h/a/b"}},
		{"in a sentence", []string{"push to http://h/?token=abc failed"}, []string{"push to http://h/?token=xxxxx failed"}},
		{"@ in password", []string{"http://u:p@ss@h/x@y"}, []string{"http://xxxxx@h/x@y"}},
		{"user only", []string{"http://token@h"}, []string{"http://xxxxx@h"}},
		{"password flag", []string{"push", "--basic-auth-password", "hunter2", "--url", "u"}, []string{"push", "--basic-auth-password", "xxxxx", "--url", "u"}},
		{"password flag=", []string{"--basic-auth-password=hunter2"}, []string{"--basic-auth-password=xxxxx"}},
		{"no URL", []string{"run", "a@b", "-p", "keys=1"}, []string{"run", "a@b", "-p", "keys=1"}},
		{"query @ is not userinfo", []string{"http://h/x?a=b@c"}, []string{"http://h/x?a=xxxxx"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RedactArgs(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("RedactArgs(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestLoadRedactsOldRuns: a run stored before args were redacted shows no
// password once read, so no page or command shows it.
func TestLoadRedactsOldRuns(t *testing.T) {
	s := Open(t.TempDir())
	dir := filepath.Join(s.Root, "old")
	os.Mkdir(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "run.json"), []byte(`{"id":"old","scenario":"x","started":"2026-01-02T03:04:05Z",
		"config":{"args":["run","x","--push","http://user:hunter2@h:4040"],"count":1,"time":"1s","warmup":"0s","profile":[],"profile_time":"1s","seed":1},"cases":[]}`), 0o644)
	r, err := s.Load("old")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(r.Config.Args, " "), "hunter2") {
		t.Errorf("args %q", r.Config.Args)
	}
	// And Create records only redacted args.
	w, err := s.Create(&model.Run{ID: "new", Started: time.Now(), Config: model.Config{Args: []string{"--push", "http://u:hunter2@h"}}})
	if err != nil {
		t.Fatal(err)
	}
	w.Commit()
	data, _ := os.ReadFile(filepath.Join(s.Root, "new", "run.json"))
	if strings.Contains(string(data), "hunter2") {
		t.Errorf("run.json holds the password:\n%s", data)
	}
}
