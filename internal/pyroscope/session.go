package pyroscope

import (
	"runtime"

	"github.com/perflab/perflab/internal/model"
)

// UserLabels checks extra labels for a session that labels its profiles as
// PushRun does (a soak): names made valid with LabelName, and none naming
// the same label twice or one perflab or the server sets on a case of run.
func UserLabels(run *model.Run, extra map[string]string) (map[string]string, error) {
	return userLabels(run, extra)
}

// SDKLabels returns the series labels pyroscope-go adds to every profile it
// sends (its internal/semconv), with values of the right length: they count
// towards the server's labels per series, so a check of the labels a
// pyroscope-go profiler will send (Limits.CheckLabels) must include them.
func SDKLabels() map[string]string {
	return map[string]string{
		"__session_id__":          "0000000000000000",
		"process_runtime_name":    "go",
		"process_runtime_version": runtime.Version(),
		"otel_scope_name":         "com.grafana.pyroscope/go",
		"otel_scope_version":      "v1.5.0",
	}
}
