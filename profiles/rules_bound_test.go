package profiles

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// lines is a rules file of n generated lines, made as it is read; read
// counts the bytes taken from it.
type lines struct {
	n, i int
	line func(i int) string
	buf  []byte
	read int
}

func (l *lines) Read(p []byte) (int, error) {
	for len(l.buf) == 0 {
		if l.i == l.n {
			return 0, io.EOF
		}
		l.buf = []byte(l.line(l.i) + "\n")
		l.i++
	}
	n := copy(p, l.buf)
	l.buf = l.buf[n:]
	l.read += n
	return n, nil
}

// TestParseRulesBounded: the bounds a run records rules within are checked
// while reading, so a huge rules file fails at its first rule too many
// (issue 26: 1,000,000 lines compiled for 9 s in 3.1 GB before "at most
// 256" was checked).
func TestParseRulesBounded(t *testing.T) {
	long := strings.Repeat("a", MaxRulePattern+1)
	for _, tt := range []struct {
		name    string
		n       int
		line    func(int) string
		want    string
		maxRead int
	}{
		{"a million rules", 1_000_000, func(i int) string { return fmt.Sprintf("work ^example\\.com/pkg%d\\.", i) }, "rules:257: more than 256 rules", 64 << 10},
		{"a long pattern", 3, func(i int) string { return "lock " + long }, "rules:1: the pattern is 4097 bytes long (at most 4096)", 64 << 10},
		{"long patterns in all", 1000, func(i int) string { return "lock " + long[:4000] }, "rules:17: the patterns are over 65536 bytes in all", 128 << 10},
		{"comments do not count", 300, func(i int) string {
			if i%2 == 0 {
				return "# a comment"
			}
			return "work ^x\\."
		}, "", 1 << 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := &lines{n: tt.n, line: tt.line}
			_, err := ParseRules(src, "rules")
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if src.read > tt.maxRead {
				t.Errorf("read %d bytes of the file, want at most %d", src.read, tt.maxRead)
			}
		})
	}
}
