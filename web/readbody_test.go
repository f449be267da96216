package web

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// cutReader gives its text, then err: a part that ends at its boundary
// (io.EOF) or a connection that ends inside it (io.ErrUnexpectedEOF).
type cutReader struct {
	r   io.Reader
	err error
}

func (c *cutReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.EOF {
		err = c.err
	}
	return n, err
}

// TestReadBodyCutShort: a file whose connection ended inside it is refused,
// not parsed as if whole (stalled uploads whose clients left held 149 MB of
// the budget for over 10 s under -race, parsing what had come); a file
// that ends at its part's end is read whole, in one chunk or several.
func TestReadBodyCutShort(t *testing.T) {
	for _, tt := range []struct {
		name string
		size int
		end  error
		want error
	}{
		{"whole, one chunk", 1000, io.EOF, nil},
		{"whole, several chunks", 300 << 10, io.EOF, nil},
		{"cut short, one chunk", 1000, io.ErrUnexpectedEOF, errCutShort},
		{"cut short, several chunks", 300 << 10, io.ErrUnexpectedEOF, errCutShort},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := New(t.TempDir(), Options{})
			l, err := s.mem.acquire(context.Background(), 0)
			if err != nil {
				t.Fatal(err)
			}
			defer l.release()
			text := strings.Repeat("p", tt.size)
			got, err := s.readBody(context.Background(), &cutReader{strings.NewReader(text), tt.end}, l)
			if !errors.Is(err, tt.want) {
				t.Fatalf("readBody: %v, want %v", err, tt.want)
			}
			if tt.want == nil && string(got) != text {
				t.Errorf("read %d bytes, want the %d sent", len(got), len(text))
			}
		})
	}
}
