package store

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/model"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestRunJSONGolden: run.json, the file every other tool reads (perflab
// show, compare, serve, a user's own scripts), of a run with one case of
// each status, written through the store's door (Create, Commit), against
// testdata/run.json; go test ./internal/store -update rewrites it. An
// interval too few repetitions could give is written as null.
func TestRunJSONGolden(t *testing.T) {
	st := Open(t.TempDir())
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	others := 0.02
	r := &model.Run{
		ID: NewID(t0, "cipher-cache"), Scenario: "cipher-cache", Started: t0, Finished: t0.Add(2 * time.Minute), Complete: true,
		Env: model.Env{GoVersion: "go1.26.8", GOOS: "linux", GOARCH: "amd64", CPU: "Test CPU @ 2.0GHz", NumCPU: 2, GOMAXPROCS: 2,
			GOGC: "100", Hostname: "lab-1", Commit: "0123456789abcdef0123456789abcdef01234567"},
		Config: model.Config{Args: []string{"run", "cipher-cache", "--count", "3"}, Variants: []string{"mutex", "sum256", "sharded"},
			Threads: []int{2}, Count: 3, Time: model.Duration(50 * time.Millisecond), Profile: []string{"wall"}},
		ParamOrder: []string{"keys"},
		Rounds:     []model.Round{{Load1: 0.4, Steal: 0, Others: &others}},
		Cases: []model.Case{
			{Name: "variant=mutex/keys=128/threads=2", Variant: "mutex", Params: map[string]string{"keys": "128"}, Threads: 2, Status: model.StatusOK,
				Reps: []model.Rep{{Ops: 1000, Metrics: map[string]float64{"ns/op": 101, "B/op": 64}}, {Ops: 1000, Metrics: map[string]float64{"ns/op": 99, "B/op": 64}}, {Ops: 1000, Metrics: map[string]float64{"ns/op": 100, "B/op": 64}}},
				Stats: map[string]model.Stat{
					"ns/op": {N: 3, Mean: 100, MeanLo: 97, MeanHi: 103, Median: 100, MedianLo: math.Inf(-1), MedianHi: math.Inf(1), Min: 99, Max: 101},
					"B/op":  {N: 3, Mean: 64, MeanLo: 64, MeanHi: 64, Median: 64, MedianLo: 64, MedianHi: 64, Min: 64, Max: 64},
				},
				Budget:   map[string]float64{"work": 60, "lock": 30, "other": 10},
				Profiles: map[string]string{"wall": "cases/variant=mutex,keys=128,threads=2/wall.pb.gz"},
				Warnings: []model.Warning{model.Warn(model.WarnWideCI, 12, "time/op confidence interval ±12% is wide: noisy machine?")}},
			{Name: "variant=sum256/keys=128/threads=2", Variant: "sum256", Params: map[string]string{"keys": "128"}, Threads: 2,
				Status: model.StatusFailed, Error: "panic: boom"},
			{Name: "variant=sharded/keys=128/threads=2", Variant: "sharded", Params: map[string]string{"keys": "128"}, Threads: 2,
				Status: model.StatusNotApplicable, Error: "no sharding below 256 keys"},
		},
	}
	w, err := st.Create(r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(st.Root, r.ID, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "run.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/store -run TestRunJSONGolden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("run.json differs from %s; run go test ./internal/store -run TestRunJSONGolden -update and review the diff:\n%s", path, got)
	}
	// What was written reads back as the run.
	back, err := st.Load(r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st := back.Cases[0].Stats["ns/op"]; !math.IsInf(st.MedianLo, -1) || st.Median != 100 || len(back.Cases) != 3 {
		t.Errorf("read back: %+v", back.Cases[0].Stats)
	}
}
