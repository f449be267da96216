package profiles

import "testing"

// TestTracerFrame holds TracerFrame to Go 1.26's runtime: the execution
// tracer's functions (runtime/trace*.go) are its own; the traceback
// family, which unwinds and prints stacks for panics and the profilers,
// and runtime/trace, whose WithRegion runs the program's function, are
// not, nor is a program's function that only looks like one.
func TestTracerFrame(t *testing.T) {
	for _, tt := range []struct {
		name string
		fn   string
		want bool
	}{
		{"event on creation", "runtime.traceLocker.GoCreate", true},
		{"event on park", "runtime.traceLocker.GoPark", true},
		{"stack of an event", "runtime.traceStack", true},
		{"buffer", "runtime.(*traceBuf).varint", true},
		{"writer", "runtime.traceWriter.flush", true},
		{"stack table", "runtime.(*traceStackTable).put", true},
		{"status", "runtime.(*traceSchedResourceState).acquireStatus", true},
		{"acquire", "runtime.traceAcquireEnabled", true},
		{"system call exit", "runtime.traceExitedSyscall", true},
		{"traceback", "runtime.traceback", false},
		{"traceback1", "runtime.traceback1", false},
		{"unwinding for the profilers", "runtime.tracebackPCs", false},
		{"every goroutine's traceback", "runtime.tracebackothers", false},
		{"hex dump", "runtime.tracebackHexdump", false},
		{"frame-pointer unwinding for the profilers", "runtime.fpTracebackPCs", false},
		{"user region", "runtime/trace.WithRegion", false},
		{"user region end", "runtime/trace.(*Region).End", false},
		{"a program's", "main.traceHandler", false},
		{"a package named runtime elsewhere", "example.com/x/runtime.traceX", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := TracerFrame(tt.fn); got != tt.want {
				t.Errorf("TracerFrame(%q) = %v, want %v", tt.fn, got, tt.want)
			}
		})
	}
}
