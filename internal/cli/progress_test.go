package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestProgressLineFits(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&IO{Err: &b, ErrIsTerminal: true}, 2*time.Minute)
	p.Phase("round 10/10", 48)
	long := "variant=nocache-pool/keys=1024/key=ssk-with-a-long-value/another=parameter/threads=16"
	for i := 0; i < 48; i++ {
		p.Step(long)
	}
	lines := strings.Split(b.String(), "\r\033[K")
	last := lines[len(lines)-1]
	if n := utf8.RuneCountInString(last); n > lineWidth {
		t.Errorf("progress line is %d columns: %q", n, last)
	}
	if !strings.Contains(last, "nocache-pool keys=1024") {
		t.Errorf("progress line hides the variant: %q", last)
	}
	if !strings.Contains(last, "of ~2:00") {
		t.Errorf("progress line lacks elapsed of estimate: %q", last)
	}
}

// TestListFits80: `perflab list` and `list -l` keep every line within 80
// columns, wrapping docs under their column.
func TestListFits80(t *testing.T) {
	for _, args := range [][]string{{"list"}, {"list", "-l", "cipher-cache"}} {
		out, errs, code := execute(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, errs)
		}
		for i, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); n > listWidth {
				t.Errorf("%v line %d is %d columns: %q", args, i+1, n, line)
			}
		}
		if !strings.Contains(out, "nocache-pool") {
			t.Errorf("%v lists no variants:\n%s", args, out)
		}
	}
}

func TestAnnouncement(t *testing.T) {
	for _, tt := range []struct {
		name  string
		cases int
		count int
		prof  []string
		est   time.Duration
		want  string
	}{
		{"profiled", 24, 10, []string{"wall", "cpu"}, 130 * time.Second,
			"cipher-cache: 24 cases, 10 rounds of 50ms each, then profiling; about 2m10s"},
		{"--profile none", 2, 3, []string{}, 2 * time.Second,
			"cipher-cache: 2 cases, 3 rounds of 50ms each, no profiling; about 2s"},
		{"one case, one round", 1, 1, nil, time.Second,
			"cipher-cache: 1 case, 1 round of 50ms each, no profiling; about 1s"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := announcement("cipher-cache", tt.cases, tt.count, 50*time.Millisecond, tt.prof, tt.est); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
