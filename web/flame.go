package web

import (
	"encoding/json"
	"io"
	"mime"
	"net/http"

	"github.com/perflab/perflab/profiles/flame"
)

// The interactive flame graph is package flame's viewer (issue 3): its
// script and style are served from /static, and pages mount it on
// <div class="flame" data-src="…flame.json"> (app.js). Flame JSON is built
// once per profile and kept: a stored profile does not change, and an
// upload lives under its own token.

// writeFlameSVG streams the static SVG flame graph of t.
func (s *Server) writeFlameSVG(w http.ResponseWriter, r *http.Request, t *flame.Tree, filename string) {
	h := http.Header{}
	h.Set("Content-Type", "image/svg+xml")
	h.Set("Content-Security-Policy", svgCSP)
	if r.URL.Query().Get("download") != "" {
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": filename}))
	}
	s.stream(w, r, h, "flame graph", t.WriteSVG)
}

// inlineFlameMax is the largest flame JSON put into the page itself, in a
// <script type="application/json"> (one request instead of two); larger
// graphs are fetched from their flame.json URL so the page comes first.
const inlineFlameMax = 512 << 10

// inlineFlame returns data for a page's <script type="application/json">,
// or nil if it is too large to inline. html/template marshals a
// json.RawMessage with <, > and & escaped, so nothing in it can close the
// script element.
func inlineFlame(data []byte) json.RawMessage {
	if len(data) > inlineFlameMax {
		return nil
	}
	return json.RawMessage(data)
}

// stream answers with what write writes, straight to the connection: the
// output is never held whole (issue 14: a 2 GB SVG was built in a
// bytes.Buffer). The headers h go out with the first byte; a writer that
// fails before writing any (its output over budget) gets an error page
// instead, and one that fails later can only cut the response short.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, h http.Header, what string, write func(io.Writer) error) {
	lw := &lazyWriter{w: w, h: h}
	if err := write(lw); err != nil {
		if !lw.started {
			s.fail(w, r, http.StatusUnprocessableEntity, "Cannot write the %s: %v", what, err)
			return
		}
		s.opts.Logf("perflab serve: %s %s: %s cut short: %v", r.Method, r.URL.Path, what, err)
	}
}

// lazyWriter sets its headers on the first write.
type lazyWriter struct {
	w       http.ResponseWriter
	h       http.Header
	started bool
}

func (l *lazyWriter) Write(p []byte) (int, error) {
	if !l.started {
		l.started = true
		for k, v := range l.h {
			l.w.Header()[k] = v
		}
	}
	return l.w.Write(p)
}

// svgCSP is the policy for SVG served on its own: it holds names from the
// profile, and even if one escaped its escaping it could run nothing.
const svgCSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"

func serveAsset(ctype, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ctype)
		w.Header().Set("Cache-Control", "no-cache")
		io.WriteString(w, body)
	}
}
