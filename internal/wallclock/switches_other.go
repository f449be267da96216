//go:build !linux

package wallclock

import (
	"errors"
	"time"
)

// SwitchRecorder records threads' preemptions where the kernel tells of
// them (Linux); elsewhere StartSwitches fails and the caller keeps to
// schedstat, which is Linux's too.
type SwitchRecorder struct{}

// StartSwitches fails: only Linux has context-switch records.
func StartSwitches() (*SwitchRecorder, error) {
	return nil, errors.New("context-switch records are Linux's")
}

// Stop returns nothing.
func (r *SwitchRecorder) Stop() ([]Preemption, error) { return nil, nil }

// Unseen is 0.
func (r *SwitchRecorder) Unseen() time.Duration { return 0 }

// OwnUnknown is false.
func (r *SwitchRecorder) OwnUnknown() bool { return false }
