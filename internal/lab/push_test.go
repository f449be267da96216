package lab

import (
	"errors"
	"strings"
	"testing"
)

// TestPlanPush: a push request is checked before any run is read or any
// profile sent, and every refusal is a PlanError that says what to type.
func TestPlanPush(t *testing.T) {
	ok := PushRequest{URL: "http://127.0.0.1:4040", ServiceName: "perflab"}
	for _, tt := range []struct {
		name string
		edit func(*PushRequest)
		want string // "" for accepted
	}{
		{"accepted", func(*PushRequest) {}, ""},
		{"now", func(r *PushRequest) { r.Timestamp = "now" }, ""},
		{"no server", func(r *PushRequest) { r.URL = "" }, "no Pyroscope server"},
		{"bad url", func(r *PushRequest) { r.URL = "localhost:4040" }, "want http://host:port"},
		{"negative timeout", func(r *PushRequest) { r.Timeout = -1 }, "--timeout"},
		{"bad label", func(r *PushRequest) { r.Labels = []string{"novalue"} }, `--label "novalue": want name=value`},
		{"bad kind", func(r *PushRequest) { r.Profile = []string{"wal"} }, `--profile "wal": unknown profile: did you mean wall`},
		{"bad timestamp", func(r *PushRequest) { r.Timestamp = "yesterday" }, "want profile or now"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := ok
			tt.edit(&req)
			p, err := PlanPush(req)
			if tt.want == "" {
				if err != nil || p.URL() != req.URL {
					t.Errorf("PlanPush: %v (URL %v)", err, p)
				}
				return
			}
			var pe *PlanError
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.As(err, &pe) {
				t.Errorf("err %v, want a PlanError with %q", err, tt.want)
			}
		})
	}
	if _, err := PlanPush(PushRequest{}); !errors.Is(err, ErrNoServer) {
		t.Errorf("no URL: %v, want ErrNoServer", err)
	}
}
