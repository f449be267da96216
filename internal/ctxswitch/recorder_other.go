//go:build !linux

package ctxswitch

import (
	"errors"
	"time"
)

// Recorder records threads' preemptions where the kernel tells of
// them (Linux); elsewhere Start fails and the caller keeps to
// schedstat, which is Linux's too.
type Recorder struct{}

// Start fails: only Linux has context-switch records.
func Start() (*Recorder, error) {
	return nil, errors.New("context-switch records are Linux's")
}

// StartProcess fails: only Linux has context-switch records.
func StartProcess(pid int) (*Recorder, error) {
	return nil, errors.New("context-switch records are Linux's")
}

// Stop returns nothing.
func (r *Recorder) Stop() ([]Preemption, error) { return nil, nil }

// Unseen is 0.
func (r *Recorder) Unseen() time.Duration { return 0 }

// OwnUnknown is false.
func (r *Recorder) OwnUnknown() bool { return false }
