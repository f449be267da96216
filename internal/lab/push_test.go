package lab

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/model"
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
		{"dashed label sent valid", func(r *PushRequest) { r.Labels = []string{"ci-job=x"} }, ""},
		{"label perflab sets", func(r *PushRequest) { r.Labels = []string{"variant=x"} }, `label "variant": perflab labels every profile with variant`},
		{"service name with a space", func(r *PushRequest) { r.ServiceName = "a b" }, `--service-name: invalid service name "a b"`},
		{"label perflab sets, dashed", func(r *PushRequest) { r.Labels = []string{"run-id=x"} }, `label "run-id": perflab labels every profile with run_id`},
		{"label the server sets", func(r *PushRequest) { r.Labels = []string{"service_name=x"} }, "--service-name"},
		{"one label twice", func(r *PushRequest) { r.Labels = []string{"a-b=x", "a_b=y"} }, "both sent as a_b"},
		{"long label", func(r *PushRequest) { r.Labels = []string{"note=" + strings.Repeat("n", 3000)} }, `label "note"`},
		{"negative push timeout", func(r *PushRequest) { r.Timeout, r.TimeoutFlag = -time.Second, "--push-timeout" }, "--push-timeout -1s"},
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

// TestPusherCheck: a label named like a parameter of the run is refused
// before the push begins, as a PlanError; one the run does not use is not.
func TestPusherCheck(t *testing.T) {
	run := &model.Run{ID: "r", Scenario: "s", Cases: []model.Case{{Name: "keys=128", Variant: "v", Params: map[string]string{"key-count": "128"}, Threads: 1}}}
	for _, tt := range []struct {
		name, label, want string
	}{
		{"unused name", "host=x", ""},
		{"a parameter's name", "key_count=x", "key_count"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := PlanPush(PushRequest{URL: "http://127.0.0.1:4040", Labels: []string{tt.label}})
			if err != nil {
				t.Fatal(err)
			}
			err = p.Check(run)
			var pe *PlanError
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Check: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !errors.As(err, &pe)):
				t.Errorf("Check: %v, want a PlanError with %q", err, tt.want)
			}
		})
	}
}
