package wallclock

import "github.com/perflab/perflab/internal/ctxswitch"

// SwitchRecorder records the preempted intervals of this process's threads
// (package ctxswitch, which reads the kernel's records).
type SwitchRecorder = ctxswitch.Recorder

// StartSwitches starts recording preemptions (ctxswitch.Start), or says
// why it cannot: the caller keeps to schedstat.
func StartSwitches() (*SwitchRecorder, error) { return ctxswitch.Start() }

// StartProcessSwitches records the preemptions of process pid's threads
// (ctxswitch.StartProcess): a child whose trace FromTrace will read.
func StartProcessSwitches(pid int) (*SwitchRecorder, error) { return ctxswitch.StartProcess(pid) }

// ReadSchedStats returns every thread of this process's kernel scheduling
// figures (ctxswitch.ReadSchedStats), or nil where the kernel does not keep
// them.
func ReadSchedStats() map[int64]SchedStat { return ctxswitch.ReadSchedStats() }
