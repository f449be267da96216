package web

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/profiles"
	"github.com/perflab/perflab/profiles/flame"
)

// The interactive flame graph is package flame's viewer (issue 3): its
// script and style are served from /static, and pages mount it on
// <div class="flame" data-src="…flame.json"> (app.js). Flame JSON is built
// once per profile and kept: a stored profile does not change, and an
// upload lives under its own token.

// flameJSON returns the flame graph JSON built by build, unless key is
// cached.
func (s *Server) flameJSON(key string, build func() (*flame.Tree, error)) ([]byte, error) {
	return s.flames.get(key, func() ([]byte, error) {
		t, err := build()
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if err := t.WriteJSON(&buf); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	})
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

// writeFlameJSON answers with the flame graph JSON built by build, unless
// key is cached.
func (s *Server) writeFlameJSON(w http.ResponseWriter, r *http.Request, key string, build func() (*flame.Tree, error)) {
	data, err := s.flameJSON(key, build)
	if err != nil {
		s.failJSON(w, http.StatusUnprocessableEntity, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(data)
}

// writeFlameSVG answers with the static SVG flame graph of t.
func (s *Server) writeFlameSVG(w http.ResponseWriter, r *http.Request, t *flame.Tree, filename string) {
	var buf bytes.Buffer
	if err := t.WriteSVG(&buf); err != nil {
		s.fail(w, r, http.StatusInternalServerError, "Cannot draw the flame graph: %v", err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "image/svg+xml")
	h.Set("Content-Security-Policy", svgCSP)
	if r.URL.Query().Get("download") != "" {
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": filename}))
	}
	w.Write(buf.Bytes())
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

// profileBudget splits a profile's total by category.
func profileBudget(p *profile.Profile, idx int, rules *profiles.Rules) []budgetPart {
	by, total := profiles.Breakdown(p, idx, rules)
	if total == 0 {
		return nil
	}
	b := map[string]float64{}
	for c, v := range by {
		if v != 0 {
			b[string(c)] = float64(v)
		}
	}
	return budgetParts(b)
}

// writeFolded writes the profile as folded stacks, the format
// flamegraph.pl and speedscope read.
func writeFolded(w io.Writer, p *profile.Profile, idx int) error {
	return profiles.WriteFolded(w, p, idx)
}
