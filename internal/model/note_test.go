package model

import "testing"

func TestInterruptedNote(t *testing.T) {
	for _, tt := range []struct {
		name, by, where, want string
	}{
		{"signal and round", "by SIGINT", "in round 3/10", "interrupted by SIGINT in round 3/10"},
		{"before measuring", "by SIGTERM", "before any case was measured", "interrupted by SIGTERM before any case was measured"},
		{"no signal", "", "while profiling case 2/4", "interrupted while profiling case 2/4"},
		{"nothing known", "", "", "interrupted"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := InterruptedNote(tt.by, tt.where); got != tt.want {
				t.Errorf("InterruptedNote(%q, %q) = %q, want %q", tt.by, tt.where, got, tt.want)
			}
		})
	}
}

// TestWhy: runs stored with the long note printed at Ctrl-C read as the
// short one; other notes are their first line.
func TestWhy(t *testing.T) {
	for _, tt := range []struct {
		name, note, want string
	}{
		{"legacy, by SIGINT",
			"interrupted: the rounds measured so far are saved and the run is marked incomplete (by SIGINT)",
			"interrupted by SIGINT"},
		{"legacy, before any case",
			"interrupted: the rounds measured so far are saved and the run is marked incomplete (by SIGTERM) (before any case was measured: the run is saved, empty)",
			"interrupted by SIGTERM before any case was measured"},
		{"legacy, by nothing",
			"interrupted: the rounds measured so far are saved and the run is marked incomplete",
			"interrupted"},
		{"short already", "interrupted by SIGINT in round 3/10", "interrupted by SIGINT in round 3/10"},
		{"lost profiles", "incomplete: the profiles of 1 of 3 profiled cases were not all saved: x\nmore", "incomplete: the profiles of 1 of 3 profiled cases were not all saved: x"},
		{"none", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &Run{Note: tt.note}
			if got := r.Why(); got != tt.want {
				t.Errorf("Why() = %q, want %q", got, tt.want)
			}
		})
	}
}
