package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/model"
)

func TestSafe(t *testing.T) {
	tests := []struct{ name, in, safe, text string }{
		{"plain", "variant=mutex/keys=128 µs ✓", "variant=mutex/keys=128 µs ✓", "variant=mutex/keys=128 µs ✓"},
		{"OSC retitle", "a\x1b]0;pwned\x07b", `a\x1b]0;pwned\x07b`, `a\x1b]0;pwned\x07b`},
		{"CSI clear", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`, `\x1b[2J\x1b[H`},
		{"C1 CSI", "x\u009b2Jy", `x\u009b2Jy`, `x\u009b2Jy`},
		{"bidi override", "abc\u202edcba", `abc\u202edcba`, `abc\u202edcba`},
		{"invalid UTF-8", "a\xffb", `a\xffb`, `a\xffb`},
		{"newline and tab", "a\nb\tc\r", `a\x0ab\x09c\x0d`, "a\nb\tc\\x0d"},
		{"DEL and NUL", "\x7f\x00", `\x7f\x00`, `\x7f\x00`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Safe(tt.in); got != tt.safe {
				t.Errorf("Safe(%q) = %q, want %q", tt.in, got, tt.safe)
			}
			if got := SafeText(tt.in); got != tt.text {
				t.Errorf("SafeText(%q) = %q, want %q", tt.in, got, tt.text)
			}
			if Safe(Safe(tt.in)) != Safe(tt.in) {
				t.Errorf("Safe is not idempotent on %q", tt.in)
			}
		})
	}
}

// TestWriteTextEscapes: an ESC sequence in a stored variant name, case
// name, parameter or warning reaches the table escaped, and the table's
// columns still line up.
func TestWriteTextEscapes(t *testing.T) {
	const evil = "\x1b]0;pwned\x07"
	st := model.Stat{N: 3, Median: 100, MedianLo: 90, MedianHi: 110, Mean: 100}
	mk := func(v string) model.Case {
		return model.Case{Name: "variant=" + v + "/threads=1", Variant: v, Threads: 1, Status: model.StatusOK,
			Params: map[string]string{}, Stats: map[string]model.Stat{"ns/op": st, "cpu-ns/op": st},
			Reps: []model.Rep{{Ops: 1}, {Ops: 1}, {Ops: 1}}, Warnings: []model.Warning{model.Warn(model.WarnOther, 0, "warned "+evil)}}
	}
	run := &model.Run{ID: "r", Scenario: "s" + evil, Cases: []model.Case{mk("ok"), mk(evil)},
		Env: model.Env{CPU: "cpu" + evil, GOGC: "100"}}
	var buf bytes.Buffer
	if err := WriteText(&buf, Build(run), TextOptions{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Fatalf("raw control characters in the table:\n%q", out)
	}
	if !strings.Contains(out, `\x1b]0;pwned\x07`) {
		t.Errorf("the escaped name is missing:\n%s", out)
	}
	// The time/op column lines up: both rows end at the same column.
	var ends []int
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "100ns") || strings.Contains(line, "100.0ns") {
			ends = append(ends, width(line))
		}
	}
	if len(ends) < 2 {
		t.Fatalf("rows not found:\n%s", out)
	}
	if ends[0] != ends[1] {
		t.Errorf("rows end at columns %v:\n%s", ends, out)
	}
}
