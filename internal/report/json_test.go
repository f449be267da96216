package report

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// TestJSONGolden: --json prints the report, the same groups, verdicts and
// warnings the table shows, as JSON.
func TestJSONGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, Build(fixture())); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.json", b.Bytes())
	var back map[string]any
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
}

// TestJSONNonFinite: a tampered run.json's infinite median is written as
// JSON can hold it, not refused.
func TestJSONNonFinite(t *testing.T) {
	run := fixture()
	st := run.Cases[0].Stats["ns/op"]
	st.Median, st.MedianLo = math.Inf(1), math.NaN()
	run.Cases[0].Stats["ns/op"] = st
	var b bytes.Buffer
	if err := WriteJSON(&b, Build(run)); err != nil {
		t.Fatalf("WriteJSON: %v", err)
	}
}
