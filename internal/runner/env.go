package runner

import (
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/model"
)

// Environment describes the machine and runtime settings of this process:
// Go version, GOMAXPROCS, the effective GOGC, CPU model and the git commit
// of the code (from the build's VCS stamp, else of the working directory).
func Environment() model.Env {
	e := model.Env{
		GoVersion:  runtime.Version(),
		GOOS:       runtime.GOOS,
		GOARCH:     runtime.GOARCH,
		NumCPU:     runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		CPU:        CPUName(),
	}
	// SetGCPercent returns the effective setting, whatever set it.
	gogc := debug.SetGCPercent(100)
	debug.SetGCPercent(gogc)
	if gogc < 0 {
		e.GOGC = "off"
	} else {
		e.GOGC = strconv.Itoa(gogc)
	}
	e.Hostname, _ = os.Hostname()
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				e.Commit = s.Value
			case "vcs.modified":
				e.Dirty = s.Value == "true"
			}
		}
	}
	if e.Commit == "" {
		if out, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
			e.Commit = strings.TrimSpace(string(out))
			if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil {
				e.Dirty = len(strings.TrimSpace(string(st))) > 0
			}
		}
	}
	return e
}
