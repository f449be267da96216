package web

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/web/webtest"
)

// The run stores the tests read are package webtest's, shared with the
// browser tests (browsertests/, a module of its own). These names keep
// this package's tests short.

// hostile is a function and variant name that would run script if any
// page, SVG or JSON output failed to escape it.
const hostile = webtest.Hostile

// fixture describes the run store the tests build.
type fixture struct {
	root   string
	full   *model.Run // complete run: 3 variants × keys × threads 1,4
	small  *model.Run // incomplete run with a hostile variant name
	broken string     // id of a run whose profile is corrupt
}

func writeFixture(t testing.TB, root string) *fixture {
	f := webtest.WriteFixture(t, root)
	return &fixture{root: f.Root, full: f.Full, small: f.Small, broken: f.Broken}
}

func testProfile(t testing.TB, kind string, variant int) []byte {
	return webtest.Profile(t, kind, variant)
}

// TestWriteFixture writes the fixture store to $PERFLAB_WEB_FIXTURE, for
// looking at the pages by hand: PERFLAB_WEB_FIXTURE=/tmp/runs go test
// -run TestWriteFixture ./web && perflab serve -o /tmp/runs
func TestWriteFixture(t *testing.T) {
	dir := os.Getenv("PERFLAB_WEB_FIXTURE")
	if dir == "" {
		t.Skip("set PERFLAB_WEB_FIXTURE=dir to write the fixture run store there")
	}
	webtest.WriteFixture(t, filepath.Clean(dir))
}
