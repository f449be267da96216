package store

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/perflab/perflab/internal/model"
)

func TestWriteResultsReadsBack(t *testing.T) {
	run := &model.Run{ID: "r1", Scenario: "cipher-cache", Benchmark: "BenchmarkCipherCache", Env: model.Env{GOOS: "linux", GOARCH: "amd64", GOMAXPROCS: 2, GOGC: "100", CPU: "x"},
		Cases: []model.Case{
			{Name: "variant=mutex/keys=128/threads=4", Status: model.StatusOK, Reps: []model.Rep{
				{Ops: 1000, Metrics: map[string]float64{"ns/op": 123.5, "B/op": 70.25, "hits/op": 0.125, "ops/s": 1}},
				{Ops: 1000, Metrics: map[string]float64{"ns/op": 120, "B/op": 70, "hits/op": 0.125}},
			}},
			{Name: "variant=broken/keys=128/threads=4", Status: model.StatusFailed},
		}}
	var buf bytes.Buffer
	if err := WriteResults(&buf, run); err != nil {
		t.Fatal(err)
	}
	// The raw text is what benchstat and `go test -bench` output share.
	if !strings.Contains(buf.String(), "\nBenchmarkCipherCache/variant=mutex/keys=128/threads=4-2 ") {
		t.Errorf("raw benchfmt lacks the go test name:\n%s", buf.String())
	}
	rd := benchfmt.NewReader(&buf, "results.txt")
	var n int
	for rd.Scan() {
		res, ok := rd.Result().(*benchfmt.Result)
		if !ok {
			t.Fatalf("record %v", rd.Result())
		}
		n++
		if got := string(res.Name); got != "CipherCache/variant=mutex/keys=128/threads=4-2" {
			t.Errorf("name %q", got)
		}
		if v, ok := res.Value("B/op"); n == 1 && (!ok || v != 70.25) {
			t.Errorf("B/op %v (fractions must survive)", v)
		}
		if _, ok := res.Value("hits/op"); !ok {
			t.Error("scenario metric hits/op missing")
		}
	}
	if err := rd.Err(); err != nil || n != 2 {
		t.Fatalf("read %d results, err %v", n, err)
	}
}
