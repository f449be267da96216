package pyroscope

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/profiles"
)

// Query selects profiles to merge.
type Query struct {
	// ProfileType is a Pyroscope profile type id
	// (name:sample_type:sample_unit:period_type:period_unit), or one of
	// the short names ParseProfileType accepts.
	ProfileType string
	// Selector is a label selector, e.g. {service_name="perflab",scenario="cipher-cache"}.
	Selector string
	// Start and End bound the time range; a zero End means now, a zero
	// Start means an hour before End.
	Start, End time.Time
	// MaxNodes, when > 0, asks the server to keep only the biggest nodes.
	MaxNodes int64
}

// ParseProfileType turns a short name into the profile type id perflab
// pushes it under: wall, cpu, mutex or block (the time or delay sample type),
// or wall-samples, cpu-samples, mutex-count, block-count. A full id
// (five colon-separated fields) is returned unchanged.
func ParseProfileType(s string) (string, error) {
	if strings.Count(s, ":") == 4 || strings.Count(s, ":") == 5 {
		return s, nil
	}
	short := map[string]string{
		"wall":         ProfileTypes(KindWall)[0],
		"wall-samples": ProfileTypes(KindWall)[1],
		"cpu":          ProfileTypes(KindCPU)[0],
		"cpu-samples":  ProfileTypes(KindCPU)[1],
		"mutex":        ProfileTypes(KindMutex)[0],
		"mutex-count":  ProfileTypes(KindMutex)[1],
		"block":        ProfileTypes(KindBlock)[0],
		"block-count":  ProfileTypes(KindBlock)[1],
	}
	if id, ok := short[s]; ok {
		return id, nil
	}
	names := make([]string, 0, len(short))
	for k := range short {
		names = append(names, k)
	}
	sort.Strings(names)
	return "", fmt.Errorf("unknown profile type %q: use one of %s, or a full id such as %s",
		s, strings.Join(names, ", "), ProfileTypes(KindWall)[0])
}

func (q Query) bounds() (start, end time.Time) {
	end = q.End
	if end.IsZero() {
		end = time.Now()
	}
	start = q.Start
	if start.IsZero() {
		start = end.Add(-time.Hour)
	}
	return start, end
}

// SelectMergeProfile fetches the profiles matching q, merged into one. It
// returns an error, not an empty profile, when nothing matches, and names
// the profile types the server has when the asked one is not among them.
func (c *Client) SelectMergeProfile(ctx context.Context, q Query) (*profile.Profile, error) {
	pt, err := ParseProfileType(q.ProfileType)
	if err != nil {
		return nil, err
	}
	q.Selector = strings.TrimSpace(q.Selector)
	if q.Selector == "" {
		q.Selector = "{}"
	}
	if fixed, ok := selectorFix(q.Selector); ok {
		// The server's parse error ("1:9: parse error: unexpected \"=\"")
		// does not say that braces or quotes are what is missing; the
		// fix offered must be one the server accepts (issue 25: the
		// hint {service_name=perflab} was refused in turn).
		return nil, fmt.Errorf("label selector %s: write it in braces with its values quoted: %s", q.Selector, fixed)
	}
	if !strings.HasPrefix(q.Selector, "{") || !strings.HasSuffix(q.Selector, "}") {
		return nil, fmt.Errorf("label selector %s: write it in braces, such as {service_name=\"perflab\"}", q.Selector)
	}
	start, end := q.bounds()
	// The request is a querier.v1.SelectMergeProfileRequest in protobuf,
	// encoded by hand: four fields do not warrant the generated API module
	// and its dependencies. The response is a google.v1.Profile, which is
	// pprof's profile.proto.
	var req []byte
	req = appendString(req, 1, pt)
	req = appendString(req, 2, q.Selector)
	req = appendVarint(req, 3, uint64(start.UnixMilli()))
	req = appendVarint(req, 4, uint64(end.UnixMilli()))
	if q.MaxNodes > 0 {
		req = appendVarint(req, 5, uint64(q.MaxNodes))
	}
	body, _, err := c.do(ctx, connectRequest(c.endpoint("/querier.v1.QuerierService/SelectMergeProfile", nil), "application/proto", req), c.cfg.MaxProfileAnswer, "merged profile")
	if err != nil {
		return nil, fmt.Errorf("querying %s for %s %s: %w", c.URL(), pt, q.Selector, err)
	}
	// profiles.Read bounds memory and turns corrupt data into an error: the
	// bytes come from another machine.
	p, err := profiles.Read(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("reading merged profile from %s: %w", c.URL(), err)
	}
	if len(p.Sample) == 0 {
		msg := fmt.Sprintf("no %s profiles match %s between %s and %s", pt, q.Selector,
			start.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339))
		if types, err := c.ProfileTypes(ctx, start, end); err == nil && !contains(types, pt) {
			if len(types) == 0 {
				msg += "; the server has no profiles in that range"
			} else {
				msg += "; profile types there: " + listSome(types, maxListed)
			}
		}
		return nil, fmt.Errorf("%s", msg)
	}
	return p, nil
}

// Fetch returns the profiles of profileType (an id or a short name, see
// ParseProfileType) matching selector over the last since, merged into one:
// what `perflab flame --from-pyroscope` and `perflab serve --pyroscope` show.
func (c *Client) Fetch(ctx context.Context, selector, profileType string, since time.Duration) (*profile.Profile, error) {
	if since <= 0 {
		return nil, fmt.Errorf("the time range must be positive, not %v", since)
	}
	end := time.Now()
	return c.SelectMergeProfile(ctx, Query{ProfileType: profileType, Selector: selector, Start: end.Add(-since), End: end})
}

// ProfileTypes lists the profile type ids the server has between start and
// end.
func (c *Client) ProfileTypes(ctx context.Context, start, end time.Time) ([]string, error) {
	var resp struct {
		ProfileTypes []struct {
			ID string `json:"ID"`
		} `json:"profileTypes"`
	}
	err := c.connectJSON(ctx, "ProfileTypes", map[string]int64{"start": start.UnixMilli(), "end": end.UnixMilli()}, &resp)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(resp.ProfileTypes))
	for _, t := range resp.ProfileTypes {
		ids = append(ids, t.ID)
	}
	sort.Strings(ids)
	return ids, nil
}

// Series returns the label sets of the series matching selector between
// start and end, each as a map, sorted by their string form.
func (c *Client) Series(ctx context.Context, selector string, start, end time.Time) ([]map[string]string, error) {
	var resp struct {
		LabelsSet []struct {
			Labels []struct {
				Name  string `json:"name"`
				Value string `json:"value"`
			} `json:"labels"`
		} `json:"labelsSet"`
	}
	req := map[string]any{"matchers": []string{selector}, "start": start.UnixMilli(), "end": end.UnixMilli()}
	if err := c.connectJSON(ctx, "Series", req, &resp); err != nil {
		return nil, err
	}
	out := make([]map[string]string, 0, len(resp.LabelsSet))
	for _, ls := range resp.LabelsSet {
		m := make(map[string]string, len(ls.Labels))
		for _, l := range ls.Labels {
			m[l.Name] = l.Value
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return fmt.Sprint(out[i]) < fmt.Sprint(out[j]) })
	return out, nil
}

// connectJSON calls a querier method with the Connect protocol's JSON codec.
func (c *Client) connectJSON(ctx context.Context, method string, req, resp any) error {
	data, err := json.Marshal(req)
	if err != nil {
		return err
	}
	body, _, err := c.do(ctx, connectRequest(c.endpoint("/querier.v1.QuerierService/"+method, nil), "application/json", data), maxJSONAnswer, method+" answer")
	if err != nil {
		return fmt.Errorf("%s on %s: %w", method, c.URL(), err)
	}
	if err := json.Unmarshal(body, resp); err != nil {
		return fmt.Errorf("%s on %s: %w", method, c.URL(), err)
	}
	return nil
}

func connectRequest(url, ctype string, body []byte) func() (*http.Request, error) {
	return func() (*http.Request, error) {
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", ctype)
			req.Header.Set("Connect-Protocol-Version", "1")
		}
		return req, err
	}
}

// maxListed is the most names an error lists: a server answered 5
// million profile types, which made an 89 MB error line (issue 26).
const maxListed = 20

// listSome joins the first max of xs, each shortened, and says how many
// more there are.
func listSome(xs []string, max int) string {
	var b strings.Builder
	for i, x := range xs {
		if i == max {
			fmt.Fprintf(&b, " and %d more", len(xs)-max)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(shorten(x, 120))
	}
	return b.String()
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Protobuf wire format: a field key is (number << 3 | wire type); 0 is
// varint, 2 is length-delimited.
func appendVarint(b []byte, field int, v uint64) []byte {
	b = binary.AppendUvarint(b, uint64(field)<<3) // wire type 0
	return binary.AppendUvarint(b, v)
}

func appendString(b []byte, field int, s string) []byte {
	b = binary.AppendUvarint(b, uint64(field)<<3|2)
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}
