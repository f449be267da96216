package ctxswitch

import (
	"testing"
	"time"
)

// TestParseSchedStat: run and wait as the kernel prints them, unsigned;
// a negative or overflowing figure is no reading, not a negative time.
func TestParseSchedStat(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want SchedStat
		ok   bool
	}{
		{"1500000 250000 42\n", SchedStat{Run: 1500 * time.Microsecond, Wait: 250 * time.Microsecond}, true},
		{"0 0 0\n", SchedStat{}, true},
		{"-5000000 -3 0\n", SchedStat{}, false},
		{"9223372036854775808 1 0\n", SchedStat{}, false}, // 2^63
		{"12 x 0\n", SchedStat{}, false},
		{"12\n", SchedStat{}, false},
		{"", SchedStat{}, false},
	} {
		got, ok := parseSchedStat([]byte(tt.in))
		if ok != tt.ok || got != tt.want {
			t.Errorf("parseSchedStat(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
