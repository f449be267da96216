package pyroscope

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/pyroscope/pyroscopetest"
)

// TestUploadKeepsDuration: an uploaded profile keeps its own duration when
// it lies within the window it is sent for (a wall-clock profile's is its
// trace's span, the time its values cover), and gets the window's when it
// has none or claims more. Overwriting it with the window, trace.Start's
// and Stop's latency included, made two workers busy throughout a 400 ms
// window read 0.75-0.9 of twice it under -race.
func TestUploadKeepsDuration(t *testing.T) {
	f := &pyroscopetest.Ingest{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	b, err := NewBackground(srv.URL, Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop()
	end := time.Now()
	start := end.Add(-400 * time.Millisecond)
	tests := []struct {
		name      string
		own, want time.Duration
	}{
		{"own span within the window", 370 * time.Millisecond, 370 * time.Millisecond},
		{"none", 0, 400 * time.Millisecond},
		{"more than the window", 2 * time.Second, 400 * time.Millisecond},
	}
	for _, tt := range tests {
		p := wallProfile(3)
		p.DurationNanos = tt.own.Nanoseconds()
		p.TimeNanos = 0
		if err := b.Upload(KindWall, "svc", nil, p, start, end); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !b.Flush(5 * time.Second) {
			t.Fatal("flush timed out")
		}
		all := f.All()
		if len(all) == 0 {
			t.Fatalf("%s: nothing received", tt.name)
		}
		got := all[len(all)-1].Profile
		if d := time.Duration(got.DurationNanos); d != tt.want {
			t.Errorf("%s: duration %v, want %v", tt.name, d, tt.want)
		}
		if got.TimeNanos != start.UnixNano() {
			t.Errorf("%s: time %d, want the window's start %d", tt.name, got.TimeNanos, start.UnixNano())
		}
	}
}
