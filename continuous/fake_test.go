package continuous_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"

	"github.com/google/pprof/profile"
)

// ingest is a stand-in Pyroscope /ingest that keeps what it is sent.
type ingest struct {
	mu       sync.Mutex
	profiles []ingested
}

type ingested struct {
	name    string // the name parameter: service{labels}
	kind    string // the first sample type
	profile *profile.Profile
}

func (f *ingest) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
	f.profiles = append(f.profiles, ingested{name: r.URL.Query().Get("name"), kind: p.SampleType[0].Type, profile: p})
	f.mu.Unlock()
}

func (f *ingest) count(kind string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, p := range f.profiles {
		if p.kind == kind {
			n++
		}
	}
	return n
}

func (f *ingest) all() []ingested {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]ingested(nil), f.profiles...)
}

var exampleIngest = &ingest{}

// fakePyroscope starts the example's stand-in server (it lives as long as
// the test binary).
func fakePyroscope() string { return httptest.NewServer(exampleIngest).URL }

func fakeIngested(kind string) int { return exampleIngest.count(kind) }
