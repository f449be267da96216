// Package web serves a perflab run store as web pages: the list of runs, a
// run's results with charts, a case's profiles and flame graph, a comparison
// of two cases with a statistical verdict, and a viewer for uploaded pprof
// files. It is the handler behind `perflab serve`.
//
// The pages lay out what internal/report says (and internal/lab builds, for
// comparisons): the figures, units, intervals, verdicts and warnings are the
// CLI's, and so is which warnings show by default; what is decided here is
// layout (column widths, charts, colours) and what a link opens by default
// (a run's comparison against its first variant).
//
// Pages are rendered on the server with html/template; data that scripts
// need travels as JSON inside <script type="application/json"> and is read
// with textContent, never innerHTML. Templates and static assets are
// embedded, so the server works without the network.
//
// By default the handler refuses clients that are not on a loopback address
// and requests whose Host is not a loopback name (a guard against DNS
// rebinding): a run store can hold source paths and host names that should
// not leave the machine.
package web

import (
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"log"
	"net"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/profiles/flame"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// DefaultMaxUpload bounds the size of an uploaded profile. Real CPU profiles
// of long runs are a few MB; 32 MiB leaves room and still bounds memory.
const DefaultMaxUpload = 32 << 20

// Options configures a Server.
type Options struct {
	// AllowRemote lets clients in from any address. Leave it false unless
	// the user asked to listen on a non-loopback address.
	AllowRemote bool
	// MaxUpload bounds an uploaded file's size in bytes; 0 means
	// DefaultMaxUpload.
	MaxUpload int64
	// Profiles, if set, lets users fetch merged profiles from a
	// continuous-profiling server (/pyroscope).
	Profiles ProfileSource
	// MakeRun is the command line an empty store's page tells the user
	// to type to make a run; "" means "perflab run cipher-cache". A
	// user's own module (perflab new) runs perflab as "go run ." and has
	// its own scenarios.
	MakeRun string
	// Logf, if set, receives one line per server-side error.
	Logf func(format string, args ...any)
	// MemoryBudget bounds the memory profiles take, in bytes, from the
	// start of their parse until nothing built from them is kept: the
	// parses in flight, the cache of built flame trees and the uploads
	// held in memory (0 means DefaultMemoryBudget).
	MemoryBudget int64
}

// Server is an http.Handler over a run store.
type Server struct {
	store   *store.Store
	opts    Options
	mux     *http.ServeMux
	pages   map[string]*template.Template
	uploads *uploadCache
	csrf    *http.CrossOriginProtection
	runs    *runCache
	// mem is the server's memory budget, and trees what is built from
	// stored profiles, keyed by the file's identity (Server.openProfile),
	// the sample type, the rules and the title: built once for all the
	// requests that need it, and kept while the budget has room.
	mem   *memBudget
	trees *builtCache
	// bodies is the part of mem held by upload bodies being received
	// (Server.readBody), at most a quarter of it.
	bodies atomic.Int64
}

var _ http.Handler = (*Server)(nil)

// New returns a Server showing the runs stored in dir (a perflab run
// store: `perflab run --out`, default ./perflab-runs). It takes only public
// types so that another module can serve its runs. It panics if the
// embedded templates do not parse: that is a programmer error caught by any
// test.
func New(dir string, opts Options) *Server {
	st := store.Open(dir)
	if opts.MaxUpload <= 0 {
		opts.MaxUpload = DefaultMaxUpload
	}
	if opts.Logf == nil {
		opts.Logf = log.Printf
	}
	if opts.MemoryBudget <= 0 {
		opts.MemoryBudget = DefaultMemoryBudget
	}
	if opts.MakeRun == "" {
		opts.MakeRun = "perflab run cipher-cache"
	}
	s := &Server{store: st, opts: opts, mux: http.NewServeMux(), uploads: newUploadCache(8, min(maxUploadBytes, opts.MemoryBudget/4)), csrf: http.NewCrossOriginProtection(), mem: newMemBudget(opts.MemoryBudget), trees: newBuiltCache(64)}
	s.runs = newRunCache(st, s.mem)
	// Built trees first, then decoded runs: a tree is cheaper to keep.
	s.mem.evict = func() bool { return s.trees.evictIdle() || s.runs.evictOne() }
	s.pages = parsePages()
	static, _ := fs.Sub(staticFS, "static")
	fileServer := http.StripPrefix("/static/", http.FileServerFS(static))
	s.mux.Handle("GET /static/", fileServer)
	s.mux.HandleFunc("GET /static/flame.js", serveAsset("text/javascript; charset=utf-8", flame.Script))
	s.mux.HandleFunc("GET /static/flame.css", serveAsset("text/css; charset=utf-8", flame.Style))
	s.mux.HandleFunc("GET /{$}", s.runsPage)
	s.mux.HandleFunc("GET /runs/{id}", s.runPage)
	s.mux.HandleFunc("GET /runs/{id}/cases/{case}", s.casePage)
	s.mux.HandleFunc("GET /runs/{id}/cases/{case}/flame.json", s.caseFlameJSON)
	s.mux.HandleFunc("GET /runs/{id}/cases/{case}/folded", s.caseFolded)
	s.mux.HandleFunc("GET /runs/{id}/cases/{case}/flame.svg", s.caseFlameSVG)
	s.mux.HandleFunc("GET /runs/{id}/cases/{rest...}", s.caseBySlashedName)
	s.mux.HandleFunc("GET /runs/{id}/files/{path...}", s.runFile)
	s.mux.HandleFunc("GET /runs/{id}/compare", s.runComparePage)
	s.mux.HandleFunc("GET /compare", s.comparePage)
	s.mux.HandleFunc("GET /compare/flame.json", s.compareFlameJSON)
	s.mux.HandleFunc("GET /upload", s.uploadForm)
	s.mux.HandleFunc("POST /upload", s.uploadPost)
	s.mux.HandleFunc("GET /upload/{token}", s.uploadPage)
	s.mux.HandleFunc("GET /upload/{token}/flame.json", s.uploadFlameJSON)
	s.mux.HandleFunc("POST /upload/{token}/save", s.uploadSave)
	s.mux.HandleFunc("GET /pyroscope", s.pyroscopeForm)
	s.mux.HandleFunc("POST /pyroscope", s.pyroscopePost)
	return s
}

// ServeHTTP applies the access checks and security headers, then routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// Scripts and styles come only from /static; SVG files from the store
	// are served with a stricter policy of their own (runFile).
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	if !s.opts.AllowRemote {
		if !loopbackAddr(r.RemoteAddr) {
			s.fail(w, r, http.StatusForbidden, "This perflab server only answers clients on this machine. Restart it with --addr set to a non-loopback address to open it.")
			return
		}
		if !loopbackHost(r.Host) {
			s.fail(w, r, http.StatusMisdirectedRequest, "Host %q is not a loopback name; open the page through localhost or 127.0.0.1.", r.Host)
			return
		}
	}
	// Uploads change server state; a page on another site must not be
	// able to post one into the user's store (Sec-Fetch-Site/Origin).
	if err := s.csrf.Check(r); err != nil {
		s.fail(w, r, http.StatusForbidden, "Cross-origin request refused: %v.", err)
		return
	}
	route, pattern := s.mux.Handler(r)
	if pattern == "" {
		// No route: ServeMux would answer a plain-text 404 or 405; give
		// the same status as a page.
		rec := &statusRecorder{header: http.Header{}}
		route.ServeHTTP(rec, r)
		if rec.status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", rec.header.Get("Allow"))
			s.fail(w, r, http.StatusMethodNotAllowed, "%s is not allowed on %s (allowed: %s).", r.Method, r.URL.Path, rec.header.Get("Allow"))
			return
		}
		s.fail(w, r, http.StatusNotFound, "There is no page at %s.", r.URL.Path)
		return
	}
	// ServeHTTP again rather than route: only it sets r's path values.
	s.mux.ServeHTTP(w, r)
}

// statusRecorder captures the status and headers of ServeMux's own
// not-found and method-not-allowed answers.
type statusRecorder struct {
	header http.Header
	status int
}

func (r *statusRecorder) Header() http.Header         { return r.header }
func (r *statusRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *statusRecorder) WriteHeader(status int)      { r.status = status }

// loopbackAddr reports whether a "host:port" remote address is on a
// loopback interface.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackHost reports whether a Host header names this machine.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// LoopbackOnly reports whether addr (as given to --addr) listens on loopback
// addresses only, in which case remote clients should be refused.
func LoopbackOnly(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// fail writes a plain error page with the given status.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if status >= 500 {
		s.opts.Logf("perflab serve: %s %s: %s", r.Method, r.URL.Path, msg)
	}
	w.Header().Set("Cache-Control", "no-store")
	s.render(w, r, status, "error", errorData{Status: status, StatusText: http.StatusText(status), Message: msg})
}

type errorData struct {
	Status     int
	StatusText string
	Message    string
}
