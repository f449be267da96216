package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/internal/model"
)

// ProfileSource fetches merged profiles from a continuous-profiling server:
// `perflab serve --pyroscope URL` passes a Pyroscope client. It is an
// interface so this package does not depend on the client.
type ProfileSource interface {
	// URL names the server, for the page.
	URL() string
	// Fetch returns the profiles of profileType matching selector over
	// the last since, merged into one.
	Fetch(ctx context.Context, selector, profileType string, since time.Duration) (*profile.Profile, error)
}

// pyroscopeTypes are the profile types offered in the form: the short names
// the Pyroscope client understands, as perflab pushes them.
var pyroscopeTypes = func() []string {
	// The store's one list of kinds, but fgprof: push sends it only when
	// asked, as it would merge with the exact wall profile.
	var out []string
	for _, k := range model.ProfileKinds {
		if k != "fgprof" {
			out = append(out, k)
		}
	}
	return out
}()

type pyroscopeView struct {
	Server   string
	Selector string
	Type     string
	Types    []string
	Since    string
	Error    string
}

func (s *Server) pyroscopeForm(w http.ResponseWriter, r *http.Request) {
	if s.opts.Profiles == nil {
		s.fail(w, r, http.StatusNotFound, "No Pyroscope server is configured: start perflab serve with --pyroscope URL to read profiles from one.")
		return
	}
	s.render(w, r, http.StatusOK, "pyroscope", pyroscopeView{
		Server: s.opts.Profiles.URL(), Selector: `{service_name="perflab"}`, Type: "wall", Types: pyroscopeTypes, Since: "1h",
	})
}

// selectorScenario finds scenario="name" in a label selector. Profiles of
// one scenario read back from Pyroscope are classified with its work
// patterns, as for a lab run and as `perflab flame --from-pyroscope` does;
// otherwise the scenario's work would show as "other".
var selectorScenario = regexp.MustCompile(`\bscenario\s*=\s*"([^"]+)"`)

// pyroscopePost fetches the merged profile and shows it like an uploaded
// file, with perflab's categories; it is kept in memory under a token until
// newer uploads push it out, and can be saved as a run.
func (s *Server) pyroscopePost(w http.ResponseWriter, r *http.Request) {
	if s.opts.Profiles == nil {
		s.fail(w, r, http.StatusNotFound, "No Pyroscope server is configured: start perflab serve with --pyroscope URL to read profiles from one.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	v := pyroscopeView{
		Server:   s.opts.Profiles.URL(),
		Selector: strings.TrimSpace(r.PostFormValue("query")),
		Type:     strings.TrimSpace(r.PostFormValue("type")),
		Types:    pyroscopeTypes,
		Since:    strings.TrimSpace(r.PostFormValue("since")),
	}
	since, err := time.ParseDuration(v.Since)
	switch {
	case err != nil || since <= 0:
		v.Error = fmt.Sprintf("%q is not a time range: use a Go duration such as 15m, 1h or 24h.", v.Since)
	case v.Selector == "":
		v.Error = `Enter a label selector, such as {service_name="perflab",scenario="cipher-cache"}.`
	case !strings.HasPrefix(v.Selector, "{") || !strings.HasSuffix(v.Selector, "}"):
		// A form mistake, not the Pyroscope server's failure (502).
		v.Error = "Write the label selector in braces: {" + strings.Trim(v.Selector, "{}") + "}."
	}
	if v.Error != "" {
		s.render(w, r, http.StatusBadRequest, "pyroscope", v)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), time.Minute)
	defer cancel()
	// The answer is parsed by the client with the limits of every path
	// (profiles.Read), under the same memory budget as the others: the
	// whole of a parse's reservation, since its size is not known before
	// (issue 14: /pyroscope parsed outside the bound, 3.45 GB for an
	// answer /upload refused).
	l, err := s.mem.acquire(ctx, s.parseReserve())
	if err != nil {
		v.Error = err.Error()
		s.render(w, r, http.StatusServiceUnavailable, "pyroscope", v)
		return
	}
	p, err := s.opts.Profiles.Fetch(ctx, v.Selector, v.Type, since)
	if err != nil {
		l.release()
		v.Error = err.Error()
		status := http.StatusBadGateway
		if errors.Is(err, context.DeadlineExceeded) {
			status = http.StatusGatewayTimeout
		}
		s.render(w, r, status, "pyroscope", v)
		return
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		l.release()
		s.fail(w, r, http.StatusInternalServerError, "The profile from %s could not be encoded: %v", v.Server, err)
		return
	}
	u := &upload{
		Token: newToken(),
		Name:  fmt.Sprintf("pyroscope %s %s last %s", v.Type, v.Selector, since),
		Size:  buf.Len(), Added: time.Now(), Data: buf.Bytes(), Prof: p, lease: l,
	}
	if m := selectorScenario.FindStringSubmatch(v.Selector); m != nil {
		u.Scenario = m[1]
	}
	if err := s.uploads.add(u); err != nil {
		s.fail(w, r, http.StatusInternalServerError, "The profile from %s could not be drawn: %v", v.Server, err)
		return
	}
	http.Redirect(w, r, "/upload/"+u.Token, http.StatusSeeOther)
}
