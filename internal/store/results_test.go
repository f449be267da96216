package store

import (
	"bytes"
	"math"
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

// TestWriteResultsZeroUnits: a zero in a scaled unit reads back, through
// benchfmt's reader, in the unit its other values tidy to, so benchstat
// puts it in their table. Written as 0 cpu-ns/op, it kept that unit and
// benchstat gave the one repetition a table of its own.
func TestWriteResultsZeroUnits(t *testing.T) {
	for _, tt := range []struct {
		name string
		reps []map[string]float64
		// want is each repetition's values as benchfmt reads them, unit
		// and tidied value.
		want []map[string]float64
	}{
		{"a zero cpu/op among others",
			[]map[string]float64{{"ns/op": 25, "cpu-ns/op": 26}, {"ns/op": 25, "cpu-ns/op": 0}, {"ns/op": 26, "cpu-ns/op": 27}},
			[]map[string]float64{{"sec/op": 25e-9, "cpu-sec/op": 26e-9}, {"sec/op": 25e-9, "cpu-sec/op": 0}, {"sec/op": 26e-9, "cpu-sec/op": 27e-9}}},
		{"a case that does not allocate",
			[]map[string]float64{{"ns/op": 25, "B/op": 0, "allocs/op": 0, "alloc-MB/s": 0}},
			[]map[string]float64{{"sec/op": 25e-9, "B/op": 0, "allocs/op": 0, "alloc-B/s": 0}}},
		{"a scenario's own scaled unit, zero and not",
			[]map[string]float64{{"ns/op": 10, "wait-ns/op": 0}, {"ns/op": 10, "wait-ns/op": 3}},
			[]map[string]float64{{"sec/op": 10e-9, "wait-sec/op": 0}, {"sec/op": 10e-9, "wait-sec/op": 3e-9}}},
		{"units benchfmt leaves as they are", []map[string]float64{{"ns/op": 10, "hits/op": 0, "gc/op": 0}},
			[]map[string]float64{{"sec/op": 10e-9, "hits/op": 0, "gc/op": 0}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := model.Case{Name: "variant=a/threads=1", Status: model.StatusOK}
			for _, m := range tt.reps {
				c.Reps = append(c.Reps, model.Rep{Ops: 100, Metrics: m})
			}
			run := &model.Run{ID: "r1", Scenario: "s", Env: model.Env{GOMAXPROCS: 2}, Cases: []model.Case{c}}
			var buf bytes.Buffer
			if err := WriteResults(&buf, run); err != nil {
				t.Fatal(err)
			}
			rd := benchfmt.NewReader(&buf, "results.txt")
			var got []map[string]float64
			for rd.Scan() {
				res, ok := rd.Result().(*benchfmt.Result)
				if !ok {
					t.Fatalf("record %v", rd.Result())
				}
				m := map[string]float64{}
				for _, v := range res.Values {
					m[v.Unit] = v.Value
				}
				got = append(got, m)
			}
			if err := rd.Err(); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("read %d results, want %d:\n%s", len(got), len(tt.want), buf.String())
			}
			for i := range got {
				if len(got[i]) != len(tt.want[i]) {
					t.Errorf("repetition %d reads %v, want %v", i+1, got[i], tt.want[i])
					continue
				}
				for u, w := range tt.want[i] {
					if v, ok := got[i][u]; !ok || math.Abs(v-w) > 1e-6*math.Abs(w) {
						t.Errorf("repetition %d reads %v, want %v", i+1, got[i], tt.want[i])
						break
					}
				}
			}
		})
	}
}
