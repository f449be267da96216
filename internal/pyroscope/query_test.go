package pyroscope

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// decodeFields reads a flat protobuf message of varint and string fields.
func decodeFields(t *testing.T, b []byte) map[int]any {
	t.Helper()
	out := map[int]any{}
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		b = b[n:]
		switch key & 7 {
		case 0:
			v, n := binary.Uvarint(b)
			b = b[n:]
			out[int(key>>3)] = int64(v)
		case 2:
			l, n := binary.Uvarint(b)
			b = b[n:]
			out[int(key>>3)] = string(b[:l])
			b = b[l:]
		default:
			t.Fatalf("unexpected wire type %d", key&7)
		}
	}
	return out
}

// fakeQuerier answers SelectMergeProfile with merged, and ProfileTypes with
// types.
type fakeQuerier struct {
	t      *testing.T
	merged *profile.Profile
	types  []string
	got    map[int]any
	header http.Header
}

func (f *fakeQuerier) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.header = r.Header
	switch r.URL.Path {
	case "/querier.v1.QuerierService/SelectMergeProfile":
		if ct := r.Header.Get("Content-Type"); ct != "application/proto" {
			http.Error(w, `{"code":"invalid_argument","message":"bad content type `+ct+`"}`, http.StatusUnsupportedMediaType)
			return
		}
		f.got = decodeFields(f.t, body)
		if f.got[1] == "bad:type" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"code":"invalid_argument","message":"profile-type selection must be of the form ..."}`)
			return
		}
		w.Header().Set("Content-Type", "application/proto")
		f.merged.WriteUncompressed(w)
	case "/querier.v1.QuerierService/ProfileTypes":
		var resp struct {
			ProfileTypes []map[string]string `json:"profileTypes"`
		}
		for _, id := range f.types {
			resp.ProfileTypes = append(resp.ProfileTypes, map[string]string{"ID": id})
		}
		json.NewEncoder(w).Encode(resp)
	case "/querier.v1.QuerierService/Series":
		var req struct {
			Matchers   []string
			Start, End int64
		}
		json.Unmarshal(body, &req)
		fmt.Fprintf(w, `{"labelsSet":[{"labels":[{"name":"service_name","value":"perflab"},{"name":"matcher","value":%q}]}]}`, req.Matchers[0])
	default:
		http.NotFound(w, r)
	}
}

func TestSelectMergeProfile(t *testing.T) {
	merged := testProfile(KindWall, time.Now(), map[string][]string{"2s": {"main.work", "main.main"}})
	f := &fakeQuerier{t: t, merged: merged}
	c, _ := newTestClient(t, f, Config{TenantID: "t1"})
	start := time.UnixMilli(1_700_000_000_000)
	end := start.Add(time.Hour)
	p, err := c.SelectMergeProfile(context.Background(), Query{
		ProfileType: "wall", Selector: `{service_name="perflab"}`, Start: start, End: end, MaxNodes: 1024,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sample) != 1 || p.Sample[0].Location[0].Line[0].Function.Name != "main.work" {
		t.Errorf("merged profile:\n%s", p)
	}
	want := map[int]any{
		1: "wall:wall:nanoseconds:wall:nanoseconds", 2: `{service_name="perflab"}`,
		3: start.UnixMilli(), 4: end.UnixMilli(), 5: int64(1024),
	}
	if fmt.Sprint(f.got) != fmt.Sprint(want) {
		t.Errorf("request fields %v, want %v", f.got, want)
	}
	if f.header.Get("X-Scope-OrgID") != "t1" || f.header.Get("Connect-Protocol-Version") != "1" {
		t.Errorf("headers %v", f.header)
	}
}

func TestSelectMergeProfileErrors(t *testing.T) {
	empty := &profile.Profile{SampleType: []*profile.ValueType{{Type: "wall", Unit: "nanoseconds"}}}
	f := &fakeQuerier{t: t, merged: empty, types: []string{"process_cpu:cpu:nanoseconds:cpu:nanoseconds"}}
	c, _ := newTestClient(t, f, Config{})
	_, err := c.SelectMergeProfile(context.Background(), Query{ProfileType: "wall", Selector: `{run_id="x"}`})
	if err == nil || !strings.Contains(err.Error(), `no wall:wall:nanoseconds:wall:nanoseconds profiles match {run_id="x"}`) ||
		!strings.Contains(err.Error(), "profile types there: process_cpu:cpu:nanoseconds:cpu:nanoseconds") {
		t.Errorf("empty result: err = %v", err)
	}
	_, err = c.SelectMergeProfile(context.Background(), Query{ProfileType: "bad:type:x:y:z"})
	if err == nil {
		t.Error("no error for a bad profile type")
	}
	_, err = c.SelectMergeProfile(context.Background(), Query{ProfileType: "heap"})
	if err == nil || !strings.Contains(err.Error(), "unknown profile type \"heap\"") {
		t.Errorf("short name: err = %v", err)
	}
	f.types = nil
	_, err = c.SelectMergeProfile(context.Background(), Query{ProfileType: "cpu"})
	if err == nil || !strings.Contains(err.Error(), "the server has no profiles in that range") {
		t.Errorf("empty server: err = %v", err)
	}
}

func TestSelectorNeedsBraces(t *testing.T) {
	c, _ := newTestClient(t, &fakeQuerier{t: t}, Config{})
	_, err := c.SelectMergeProfile(context.Background(), Query{ProfileType: "wall", Selector: `scenario="uuid-hash"`})
	if err == nil || !strings.Contains(err.Error(), `write it in braces with its values quoted: {scenario="uuid-hash"}`) {
		t.Errorf("err = %v", err)
	}
}

// TestConnectMessage: the query frontend wraps the querier's Connect error
// in its own; the innermost message is shown.
func TestConnectMessage(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{`{"code":"invalid_argument","message":"unmarshal message: unexpected EOF"}`, "invalid_argument: unmarshal message: unexpected EOF"},
		{`{"code":"unknown","message":"{\"code\":\"internal\",\"message\":\"failed to parse label selector\"}"}`, "internal: failed to parse label selector"},
		{"plain text\n", "plain text\n"},
		{`{"code":"x","message":"{not json"}`, "x: {not json"},
	} {
		if got := connectMessage([]byte(tt.body)); got != tt.want {
			t.Errorf("connectMessage(%s) = %q, want %q", tt.body, got, tt.want)
		}
	}
}

func TestSeriesAndProfileTypes(t *testing.T) {
	f := &fakeQuerier{t: t, types: []string{"b:x:y:z:w", "a:x:y:z:w"}}
	c, _ := newTestClient(t, f, Config{})
	types, err := c.ProfileTypes(context.Background(), time.Now().Add(-time.Hour), time.Now())
	if err != nil || strings.Join(types, " ") != "a:x:y:z:w b:x:y:z:w" {
		t.Errorf("ProfileTypes = %v, %v", types, err)
	}
	series, err := c.Series(context.Background(), `{a="b"}`, time.Now().Add(-time.Hour), time.Now())
	if err != nil || len(series) != 1 || series[0]["matcher"] != `{a="b"}` || series[0]["service_name"] != "perflab" {
		t.Errorf("Series = %v, %v", series, err)
	}
}

func TestParseProfileType(t *testing.T) {
	for in, want := range map[string]string{
		"wall":                                  "wall:wall:nanoseconds:wall:nanoseconds",
		"cpu":                                   "process_cpu:cpu:nanoseconds:cpu:nanoseconds",
		"block-count":                           "block:contentions:count:contentions:count",
		"memory:alloc_space:bytes:space:bytes":  "memory:alloc_space:bytes:space:bytes",
		"memory:alloc_space:bytes::bytes:delta": "memory:alloc_space:bytes::bytes:delta",
	} {
		if got, err := ParseProfileType(in); err != nil || got != want {
			t.Errorf("ParseProfileType(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseProfileType("wal"); err == nil {
		t.Error("typo accepted")
	}
}
