package lab

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/profiles"
	"github.com/perflab/perflab/profiles/flame"
)

// TestImportProfile: an imported profile is a complete run of one case,
// named after the file within what a directory name may hold, its
// profile stored gzipped and readable through the store as flame reads
// it.
func TestImportProfile(t *testing.T) {
	gz, err := os.ReadFile(realCPU)
	if err != nil {
		t.Fatal(err)
	}
	src, err := flame.ReadSource(bytes.NewReader(gz), profiles.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr) // the same profile, not gzipped
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, file string
		data       []byte
		wantCase   string
	}{
		{"gzipped", "cpu.pb.gz", gz, "profile=cpu"},
		{"not gzipped", "cpu.pb", plain, "profile=cpu"},
		{"a long name", strings.Repeat("é", 80) + ".pb.gz", gz, "profile=" + strings.Repeat("é", 50)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := store.Open(t.TempDir())
			now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
			run, err := ImportProfile(st, ProfileImport{Name: tt.file, Data: tt.data, Size: len(tt.data), Via: "a test", Now: now})
			if err != nil {
				t.Fatal(err)
			}
			got, err := st.Load(run.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Complete || got.Scenario != "upload" || len(got.Cases) != 1 || got.Cases[0].Name != tt.wantCase || !utf8.ValidString(got.Cases[0].Name) {
				t.Fatalf("stored %+v", got)
			}
			if want := "uploaded through a test from " + tt.file; !strings.HasPrefix(got.Note, want) {
				t.Errorf("note %q, want %q…", got.Note, want)
			}
			s, err := readStoredProfile(st, got, got.Cases[0].Profiles["profile"])
			if err != nil {
				t.Fatal(err)
			}
			if s.Samples() != src.Samples() {
				t.Errorf("stored profile has %d samples, want %d", s.Samples(), src.Samples())
			}
			f, _, err := st.OpenFile(run.ID, got.Cases[0].Profiles["profile"])
			if err != nil {
				t.Fatal(err)
			}
			head := make([]byte, 2)
			io.ReadFull(f, head)
			f.Close()
			if head[0] != 0x1f || head[1] != 0x8b {
				t.Errorf("stored profile begins %x, want gzip's 1f8b", head)
			}
		})
	}
	// A store that cannot be written: an error, and no run.
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/runs", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ImportProfile(store.Open(dir+"/runs"), ProfileImport{Name: "x.pb.gz", Data: gz}); err == nil {
		t.Error("a store that is a file: no error")
	}
}
