package continuous_test

import (
	"net/http/httptest"

	"github.com/perflab/perflab/internal/pyroscope/pyroscopetest"
)

var exampleIngest = &pyroscopetest.Ingest{}

// fakePyroscope starts the example's stand-in server (it lives as long as
// the test binary).
func fakePyroscope() string { return httptest.NewServer(exampleIngest).URL }

func fakeIngested(kind string) int { return exampleIngest.Count(kind) }
