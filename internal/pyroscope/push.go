package pyroscope

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// Profile kinds as perflab stores them (model.Case.Profiles keys).
const (
	KindWall = "wall"
	// KindFgprof is fgprof's sampling wall-clock profile, stored only with
	// --profile fgprof; it is pushed as a wall profile when asked for.
	KindFgprof = "fgprof"
	KindCPU    = "cpu"
	KindMutex  = "mutex"
	KindBlock  = "block"
)

// Upload is one profile to push.
type Upload struct {
	// Kind is the perflab profile kind; it decides how Pyroscope names
	// the profile type (see prepare).
	Kind string
	// Profile is the parsed profile. Push may change its sample types
	// (wall) and time (Stamp).
	Profile *profile.Profile
	// ServiceName is the service_name label (Pyroscope's application
	// name).
	ServiceName string
	// Labels are the other labels; names must already be valid (see
	// LabelName).
	Labels map[string]string
	// Stamp, when not zero, replaces the profile's own start time.
	// Pyroscope refuses profiles older than its ingestion window (1 h by
	// default), so an old run must be stamped with the push time.
	Stamp time.Time
	// Started, when not zero, is the start time of a profile that records
	// none: the run's. The wall-clock profiles perflab makes from an
	// execution trace (perflab run's, perflab bench's) have no time of
	// their own, and were filed at the push's time, apart from the same
	// case's CPU profile and outside the run's span.
	Started time.Time
}

// sampleTypeConfig is the JSON the /ingest endpoint reads from the
// sample_type_config form file, as pyroscope-go sends it.
type sampleTypeConfig struct {
	Units       string `json:"units,omitempty"`
	DisplayName string `json:"display-name,omitempty"`
	Aggregation string `json:"aggregation,omitempty"`
	Cumulative  bool   `json:"cumulative,omitempty"`
	Sampled     bool   `json:"sampled,omitempty"`
}

// prepare makes a profile of the given kind come out of Pyroscope's /ingest
// under the right profile type, and returns the sample type config to send
// with it (nil for the server's defaults).
//
// The server names a pprof profile from its sample types
// (pkg/og/convert/pprof, Pyroscope v1.12): a sample type "wall" makes it
// "wall"; otherwise "samples" (shown as "cpu") makes it "process_cpu",
// "contentions" (shown as "mutex_count") makes it "mutex", and a display
// name starting "block_" makes it "block". So:
//
//   - wall: fgprof writes samples/count and time/nanoseconds with period
//     wallclock/nanoseconds, which the server would file as process_cpu —
//     wall time shown as CPU. We rename the time sample type to
//     wall/nanoseconds (and the period type to wall/nanoseconds), giving
//     wall:wall:nanoseconds:wall:nanoseconds, Pyroscope's wall-clock type.
//   - cpu and mutex: runtime/pprof's sample types already map right (so do
//     heap and allocs, as "memory").
//   - block: has the same sample types as mutex (contentions, delay), so
//     we send display names block_count and block_duration, as pyroscope-go
//     does for its block profiles.
//
// Our mutex and block profiles are deltas over the profiling window, not
// cumulative counts; /ingest marks every series __delta__=false, so the
// server stores them as they are.
func prepare(kind string, p *profile.Profile) (map[string]sampleTypeConfig, error) {
	switch kind {
	case KindWall, KindFgprof:
		found := false
		for _, st := range p.SampleType {
			if st.Type == "wall" || (st.Unit == "nanoseconds" && !found) {
				st.Type, found = "wall", true
			}
		}
		if !found {
			// A wall profile with counts only: derive time from the
			// sampling period.
			if p.Period <= 0 || len(p.SampleType) == 0 {
				return nil, fmt.Errorf("wall profile has no time (nanoseconds) sample type and no period")
			}
			p.SampleType = append(p.SampleType, &profile.ValueType{Type: "wall", Unit: "nanoseconds"})
			for _, s := range p.Sample {
				s.Value = append(s.Value, s.Value[0]*p.Period)
			}
		}
		p.PeriodType = &profile.ValueType{Type: "wall", Unit: "nanoseconds"}
		return nil, nil
	case KindBlock:
		return map[string]sampleTypeConfig{
			"contentions": {DisplayName: "block_count", Units: "lock_samples"},
			"delay":       {DisplayName: "block_duration", Units: "lock_nanoseconds"},
		}, nil
	}
	// cpu and mutex, and kinds perflab may capture later (heap, allocs):
	// the server's defaults name them from their sample types.
	return nil, nil
}

// ProfileTypes returns the Pyroscope profile type ids a pushed profile of
// the given kind is stored under, first the one to look at.
func ProfileTypes(kind string) []string {
	switch kind {
	case KindWall, KindFgprof:
		return []string{"wall:wall:nanoseconds:wall:nanoseconds", "wall:samples:count:wall:nanoseconds"}
	case KindCPU:
		return []string{"process_cpu:cpu:nanoseconds:cpu:nanoseconds", "process_cpu:samples:count:cpu:nanoseconds"}
	case KindMutex:
		return []string{"mutex:delay:nanoseconds:contentions:count", "mutex:contentions:count:contentions:count"}
	case KindBlock:
		return []string{"block:delay:nanoseconds:contentions:count", "block:contentions:count:contentions:count"}
	}
	return nil
}

// Push uploads one profile and returns how many attempts it took.
func (c *Client) Push(ctx context.Context, u Upload) (int, error) {
	if err := ValidServiceName(u.ServiceName); err != nil {
		return 0, err
	}
	p := u.Profile.Copy()
	stc, err := prepare(u.Kind, p)
	if err != nil {
		return 0, err
	}
	if !u.Stamp.IsZero() {
		p.TimeNanos = u.Stamp.UnixNano()
	}
	if p.TimeNanos == 0 && !u.Started.IsZero() {
		p.TimeNanos = u.Started.UnixNano()
	}
	if p.TimeNanos == 0 {
		p.TimeNanos = time.Now().UnixNano()
	}
	sent := make(map[string]string, len(u.Labels))
	for k, v := range u.Labels {
		sent[k] = LabelValue(v)
	}
	if err := c.cfg.Limits.CheckProfile(u.ServiceName, sent, p); err != nil {
		return 0, err
	}
	var pb bytes.Buffer
	if err := p.Write(&pb); err != nil {
		return 0, fmt.Errorf("encoding profile: %w", err)
	}
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	fw, err := mw.CreateFormFile("profile", "profile.pprof")
	if err != nil {
		return 0, err
	}
	fw.Write(pb.Bytes())
	if stc != nil {
		fw, err := mw.CreateFormFile("sample_type_config", "sample_type_config.json")
		if err != nil {
			return 0, err
		}
		if err := json.NewEncoder(fw).Encode(stc); err != nil {
			return 0, err
		}
	}
	if err := mw.Close(); err != nil {
		return 0, err
	}

	from := time.Unix(0, p.TimeNanos)
	until := from.Add(time.Duration(p.DurationNanos))
	if p.DurationNanos <= 0 {
		until = from.Add(time.Second)
	}
	q := url.Values{}
	q.Set("name", ingestName(u.ServiceName, u.Labels))
	q.Set("from", strconv.FormatInt(from.UnixNano(), 10))
	q.Set("until", strconv.FormatInt(until.UnixNano(), 10))
	// gospy: these are Go profiles; the server and UI treat function names
	// by language, and "gospy" is what pyroscope-go sends.
	q.Set("spyName", "gospy")
	target := c.endpoint("/ingest", q)
	ctype := mw.FormDataContentType()
	_, attempts, err := c.do(ctx, func() (*http.Request, error) {
		req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(form.Bytes()))
		if err == nil {
			req.Header.Set("Content-Type", ctype)
		}
		return req, err
	}, 0, "")
	if err != nil && strings.Contains(err.Error(), "outside of ingestion window") {
		err = fmt.Errorf("%w\n(the server refuses profiles this old; push again with --timestamp now to stamp them with the push time)", err)
	}
	return attempts, err
}

// ingestName builds the /ingest "name" parameter: service{k=v,...}. The
// server's parser (pkg/og/storage/segment.ParseKey) splits values at ',' and
// '}' and trims spaces, with no escaping, so those characters are replaced.
func ingestName(service string, labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(service)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(LabelValue(labels[k]))
	}
	b.WriteByte('}')
	return b.String()
}

// LabelValue returns v as it arrives at the server through /ingest: ',', '{'
// and '}' become '_', and surrounding spaces are dropped.
func LabelValue(v string) string {
	v = strings.Map(func(r rune) rune {
		switch r {
		case ',', '{', '}':
			return '_'
		}
		return r
	}, v)
	return strings.TrimSpace(v)
}

// LabelName turns s into a valid Pyroscope label name: letters, digits and
// underscores, not starting with a digit or "__" (reserved for the server).
// Pyroscope rejects dashes, so "key-size" becomes "key_size".
func LabelName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	s = string(b)
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		s = "_" + s
	}
	for strings.HasPrefix(s, "__") {
		s = s[1:]
	}
	return s
}

// ValidServiceName applies the server's rule for application names
// (flameql.ValidateAppName): letters, digits and "_.-/".
func ValidServiceName(s string) error {
	if s == "" {
		return fmt.Errorf("empty service name")
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.-/", r)) {
			return fmt.Errorf("invalid service name %q: use letters, digits and _ . - /", s)
		}
	}
	return nil
}
