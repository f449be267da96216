package lab

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/store"
)

// ProfileImport is a profile file, already read and checked to be one,
// to store as a run of its own.
type ProfileImport struct {
	// Name is the file's name: the case is named after it, without .pb.gz.
	Name string
	// Data is the profile, gzipped or not (it is stored gzipped, as Go
	// writes profiles); Size is how many bytes arrived.
	Data []byte
	Size int
	// Via says how the profile came, for the run's note ("the web UI").
	Via string
	// Now is when it is stored (zero: time.Now()).
	Now time.Time
}

// maxCaseName bounds the file-name part of an imported profile's case
// name, in bytes (the slug has one byte per byte), well under the usual
// 255-byte limit on a directory name.
const maxCaseName = 100

// ImportProfile stores a profile as a complete run of the pseudo-scenario
// "upload" with one case, "profile=NAME", whose "profile" profile it is,
// and returns the run. The run is written whole or not at all: a failed
// write leaves no partial run behind.
func ImportProfile(st *store.Store, p ProfileImport) (*model.Run, error) {
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	name := strings.TrimSuffix(strings.TrimSuffix(p.Name, ".gz"), ".pb")
	// The case's directory is named after the file: a name of 300
	// characters made it longer than file systems allow (a 500 and a
	// partial run left behind).
	for len(name) > maxCaseName {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	c := model.Case{Name: "profile=" + name, Status: model.StatusOK}
	rel := "cases/" + model.Slug(c.Name) + "/profile.pb.gz"
	c.Profiles = map[string]string{"profile": rel}
	run := &model.Run{
		ID:       store.NewID(now, "upload"),
		Scenario: "upload",
		Started:  now,
		Finished: now,
		Complete: true,
		Note:     fmt.Sprintf("uploaded through %s from %s (%d bytes)", p.Via, p.Name, p.Size),
		Cases:    []model.Case{c},
	}
	w, err := st.Create(run)
	if err != nil {
		return nil, err
	}
	err = w.WriteFile(rel, Gzipped(p.Data))
	if err == nil {
		_, err = w.Commit()
	}
	if err != nil {
		// The partial run holds nothing worth keeping.
		w.Abandon()
		return nil, err
	}
	return run, nil
}

// Gzipped returns a profile gzip-compressed, as Go writes profiles and
// the store keeps them: data itself if it is gzipped already. A pprof
// reader takes protobuf and text profiles either way.
func Gzipped(data []byte) []byte {
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		return data
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(data)
	zw.Close()
	return buf.Bytes()
}
