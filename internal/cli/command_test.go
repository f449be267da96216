package cli

import (
	"bytes"
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// parse runs cmd on args with its run function replaced, and returns what
// the flags parsed to.
func parse[O any](t *testing.T, mk func(*IO, runFunc[O]) *cobra.Command, args ...string) *O {
	t.Helper()
	var got *O
	cmd := mk(&IO{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}, func(_ context.Context, _ *IO, o *O) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetFlagErrorFunc(flagErrors)
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	if got == nil {
		t.Fatalf("%v: run function not called", args)
	}
	return got
}

// TestCommandsParse: each verb's flags parse into its options struct, and
// nothing runs (the runF seam).
func TestCommandsParse(t *testing.T) {
	run := parse(t, newRunCmd, "cipher-cache", "-p", "keys=128", "--threads", "1,4", "--count", "3", "--until", "3%", "-o", "/x", "--wide")
	if !reflect.DeepEqual(run.Scenarios, []string{"cipher-cache"}) || run.Params[0] != "keys=128" || !reflect.DeepEqual(run.Threads, []int{1, 4}) ||
		run.Count != 3 || run.Until != "3%" || run.Out != "/x" || !run.Wide || run.Time != 200*time.Millisecond {
		t.Errorf("run options %+v", run)
	}
	show := parse(t, newShowCmd, "abc", "--json", "-o", "/y")
	if show.Ref != "abc" || !show.JSON || show.Dir != "/y" {
		t.Errorf("show options %+v", show)
	}
	if show := parse(t, newShowCmd); show.Ref != "latest" {
		t.Errorf("show with no run: ref %q, want latest", show.Ref)
	}
	cmp := parse(t, newCompareCmd, "a", "b", "--fail-on", "regression", "--threshold", "2%", "--format", "md")
	if !reflect.DeepEqual(cmp.Refs, []string{"a", "b"}) || cmp.FailOn != "regression" || cmp.Threshold != "2%" || cmp.Format != "md" {
		t.Errorf("compare options %+v", cmp)
	}
	list := parse(t, newListCmd, "-l", "cipher-cache")
	if !list.Long || !reflect.DeepEqual(list.Names, []string{"cipher-cache"}) {
		t.Errorf("list options %+v", list)
	}
	serve := parse(t, newServeCmd, "--addr", ":9", "-o", "/z")
	if serve.Addr != ":9" || serve.Dir != "/z" {
		t.Errorf("serve options %+v", serve)
	}
}

// TestUsageErrorsByType: every way of calling perflab wrongly exits 2, by
// the error's type, with no matching of cobra's wording.
func TestUsageErrorsByType(t *testing.T) {
	for _, args := range [][]string{
		{"nope"},
		{"show", "a", "b"},
		{"serve", "extra"},
		{"push", "a", "b"},
		{"flame", "a", "b", "c"},
		{"run", "--no-such-flag", "cipher-cache"},
		{"compare", "only-one"},
		{"run"},
	} {
		_, errs, code := execute(t, args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args, code, errs)
		}
	}
}

// TestParseUntil: --until is a percentage with or without its sign, as
// its help says and --threshold reads it: 3 is 3%, not 300%.
func TestParseUntil(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want float64
		err  bool
	}{
		{"", 0, false},
		{"3%", 0.03, false},
		{"3", 0.03, false},
		{" 0.5 % ", 0.005, false},
		{"0", 0, true},
		{"-3%", 0, true},
		{"NaN", 0, true},
		{"3x", 0, true},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseUntil(tt.in)
			if (err != nil) != tt.err || got != tt.want {
				t.Errorf("parseUntil(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.err)
			}
		})
	}
	// The help says so: "this percent (e.g. 3%)" left 3 to a guess.
	if out, _, _ := execute(t, "run", "--help"); !containsWords(out, "(3 and 3% both mean ±3%)") {
		t.Errorf("run --help does not say how --until reads 3:\n%s", out)
	}
}
