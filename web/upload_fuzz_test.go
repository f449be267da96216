package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/textsafe"
)

// FuzzUpload posts any body as a multipart form to /upload. Invariants:
// the answer is a redirect, a 4xx or a 503, never a panic or another 5xx;
// and the budget holds no more than the kept uploads do, so nothing a
// request reserved outlives it (issue 26). Seeds: a real profile, work
// fields, a profile of 8 sample types, hostile patterns, two files.
func FuzzUpload(f *testing.F) {
	prof := testProfile(f, "cpu", 1)
	types8 := typesProfile(f, 8)
	const boundary = "fuzzboundary"
	seed := func(fields [][2]string, p []byte) {
		body, ct := uploadForm(fields, p)
		// The fuzzer changes the body; the boundary stays the one it
		// was written with.
		_, b, _ := strings.Cut(ct, "boundary=")
		f.Add([]byte(strings.ReplaceAll(string(body), b, boundary)))
	}
	seed(nil, prof)
	seed([][2]string{{"work", `^main\.`}, {"save", "0"}}, prof)
	seed(nil, types8)
	seed([][2]string{{"work", strings.Repeat("x{1000}", 40)}}, prof)
	seed([][2]string{{"work", "("}}, prof)
	seed([][2]string{{"other", "x"}}, nil)
	body, _ := uploadForm(nil, prof)
	f.Add(append(body, body...))
	f.Add([]byte("--" + boundary + "\r\nContent-Disposition: form-data; name=\"profile\"; filename=\"x\"\r\n\r\n\x1f\x8b\r\n--" + boundary + "--\r\n"))

	s := New(f.TempDir(), Options{Logf: func(string, ...any) {}, MaxUpload: 1 << 20, MemoryBudget: 256 << 20})
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := serveUpload(s, body, "multipart/form-data; boundary="+boundary)
		switch c := rec.Code; {
		case c == http.StatusSeeOther, c >= 400 && c < 500, c == http.StatusServiceUnavailable:
		default:
			t.Errorf("status %d: %s", c, textsafe.Clip(rec.Body.String(), 1000))
		}
		checkReleased(t, s)
	})
}
