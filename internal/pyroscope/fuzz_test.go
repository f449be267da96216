package pyroscope

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// cycle is a body that repeats data n times, counting what is read of it.
type cycle struct {
	data []byte
	n    int // repetitions left
	off  int
	read int64
}

func (c *cycle) Read(p []byte) (int, error) {
	if len(c.data) == 0 || c.n == 0 {
		return 0, io.EOF
	}
	k := copy(p, c.data[c.off:])
	c.off += k
	if c.off == len(c.data) {
		c.off, c.n = 0, c.n-1
	}
	c.read += int64(k)
	return k, nil
}

func (c *cycle) Close() error { return nil }

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// fuzzProfileCap is the merged-profile cap the fuzzer runs with, small
// enough that its repeated bodies cross it.
const fuzzProfileCap = 4 << 10

// FuzzClientAnswer feeds the client any answer: a status, a body repeated
// up to 255 times, a declared length and a header value (as Retry-After
// and Location), to each call that reads one. Invariants: no panic; an
// error, or a result (a merged profile has samples); the error at most a
// few KiB; the client reads no more of the body than the cap of what it
// asked (issue 26).
func FuzzClientAnswer(f *testing.F) {
	var prof bytes.Buffer
	testProfile(KindCPU, time.Unix(1e9, 0), map[string][]string{"1s": {"main.f", "main.main"}}).Write(&prof)
	f.Add(uint8(0), uint16(200), prof.Bytes(), uint8(1), int64(-1), "")
	f.Add(uint8(0), uint16(200), prof.Bytes(), uint8(200), int64(-1), "") // over the cap
	f.Add(uint8(0), uint16(200), []byte("x"), uint8(1), int64(8<<30), "") // declares 8 GiB
	f.Add(uint8(0), uint16(500), []byte(`{"code":"x","message":"`), uint8(255), int64(-1), "")
	f.Add(uint8(1), uint16(200), []byte(`{"profileTypes":[{"ID":"a"},`), uint8(255), int64(-1), "")
	f.Add(uint8(1), uint16(200), []byte(`{"profileTypes":[{"ID":"a"}]}`), uint8(1), int64(-1), "")
	f.Add(uint8(2), uint16(200), []byte("ok"), uint8(255), int64(-1), "")
	f.Add(uint8(2), uint16(429), []byte("slow down"), uint8(1), int64(-1), "9")
	f.Add(uint8(2), uint16(302), []byte{}, uint8(0), int64(0), "http://u:pw@other/ingest?token=t")
	f.Add(uint8(3), uint16(200), []byte(`{"labelsSet":[{"labels":[{"name":"a","value":"b"}]}]}`), uint8(1), int64(-1), "")
	f.Add(uint8(0), uint16(401), []byte("<html><b>no org id</b>\x1b[2J</html>"), uint8(3), int64(-1), "")
	f.Fuzz(func(t *testing.T, call uint8, status uint16, data []byte, reps uint8, declared int64, header string) {
		if status < 100 || status > 999 {
			status = 200
		}
		var body *cycle
		c, err := New("http://alice:"+fuzzSecret+"@pyroscope.test", Config{
			Retries: 1, RetryDelay: time.Millisecond, MaxRetryWait: 5 * time.Millisecond,
			MaxProfileAnswer: fuzzProfileCap, Timeout: 5 * time.Second,
			HTTPClient: &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
				body = &cycle{data: data, n: int(reps)}
				h := http.Header{}
				if header != "" {
					h.Set("Retry-After", header)
					h.Set("Location", header)
				}
				return &http.Response{StatusCode: int(status), Header: h, Body: body, ContentLength: declared, Request: r}, nil
			})},
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		limit := int64(maxErrorBody)
		switch call % 4 {
		case 0:
			pr, err := c.SelectMergeProfile(ctx, Query{ProfileType: "cpu", Start: time.Unix(1, 0), End: time.Unix(2, 0)})
			if err == nil && (pr == nil || len(pr.Sample) == 0) {
				t.Fatalf("no error and no samples: %v", pr)
			}
			checkErr(t, err)
			limit = max(limit, fuzzProfileCap+1)
		case 1:
			_, err := c.ProfileTypes(ctx, time.Unix(1, 0), time.Unix(2, 0))
			checkErr(t, err)
			limit = max(limit, maxJSONAnswer+1)
		case 2:
			_, err := c.Push(ctx, Upload{Kind: KindCPU, Profile: testProfile(KindCPU, time.Unix(1e9, 0), map[string][]string{"1s": {"main.f"}}), ServiceName: "svc"})
			checkErr(t, err)
			limit = max(limit, maxIgnoredBody+1)
		case 3:
			_, err := c.Series(ctx, "{}", time.Unix(1, 0), time.Unix(2, 0))
			checkErr(t, err)
			limit = max(limit, maxJSONAnswer+1)
		}
		if body != nil && body.read > limit {
			t.Fatalf("read %d bytes of an answer, over its cap of %d", body.read, limit)
		}
	})
}

// fuzzSecret is the password the fuzzed client is given: no error may
// show it, whatever the server answers.
const fuzzSecret = "s3cret-pw"

// checkErr holds an error to what a terminal line can take: the server's
// text shortened, whatever it sent.
func checkErr(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if n := len(err.Error()); n > 4<<10 {
		t.Fatalf("error of %d bytes: %.300s…", n, err)
	}
	if strings.Contains(err.Error(), fuzzSecret) {
		t.Fatalf("error shows credentials: %v", err)
	}
}
