// Package pyroscopetest has a stand-in Pyroscope /ingest for tests of
// code that uploads profiles (the continuous package, perflab soak): it
// keeps what it is sent, parsed.
package pyroscopetest

import (
	"io"
	"net/http"
	"sync"

	"github.com/google/pprof/profile"
)

// Ingest is an http.Handler that takes Pyroscope ingest requests (a
// multipart "profile" field, the series in the "name" parameter).
type Ingest struct {
	mu       sync.Mutex
	profiles []Upload
}

// Upload is one profile received.
type Upload struct {
	// Name is the name parameter: service{labels}.
	Name string
	// Kind is the profile's first sample type ("wall", "cpu", …).
	Kind    string
	Profile *profile.Profile
}

// ServeHTTP keeps a well-formed upload, or answers 400.
func (f *Ingest) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	file, _, err := r.FormFile("profile")
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	data, _ := io.ReadAll(file)
	p, err := profile.ParseData(data)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.profiles = append(f.profiles, Upload{Name: r.URL.Query().Get("name"), Kind: p.SampleType[0].Type, Profile: p})
}

// All returns a copy of what was received.
func (f *Ingest) All() []Upload {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Upload(nil), f.profiles...)
}

// Count returns how many profiles of kind were received.
func (f *Ingest) Count(kind string) int {
	n := 0
	for _, u := range f.All() {
		if u.Kind == kind {
			n++
		}
	}
	return n
}
