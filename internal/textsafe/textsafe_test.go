package textsafe

import "testing"

func TestControl(t *testing.T) {
	for _, tt := range []struct {
		r    rune
		want bool
	}{
		{'a', false}, {' ', false}, {'é', false}, {'世', false}, {0x2069 + 1, false},
		{'\x1b', true}, {'\n', true}, {'\t', true}, {0x7f, true}, {0x9b, true},
		{0x202e, true}, {0x2066, true},
	} {
		if got := Control(tt.r); got != tt.want {
			t.Errorf("Control(%U) = %v, want %v", tt.r, got, tt.want)
		}
	}
}
