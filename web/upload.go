package web

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/profiles/flame"
)

// An uploaded profile lives in memory only, under an unguessable token,
// until it is evicted or the user asks to save it as a run.
type upload struct {
	// Views (one per sample type, up to maxUploadTypes) and Types are
	// computed once, when the upload arrives; then Prof is dropped, since
	// a parsed profile of 100,000 stacks takes tens of MB more than the
	// file itself.
	Views   []*uploadTypeView
	Default int      // index in Views of the profile's default sample type
	Types   []string // "type (unit)", per sample type
	names   []string // the types' names, for ?type=
	Token   string
	Name    string
	// Scenario, when set, is the perflab scenario whose work patterns
	// classify the profile (one read back from Pyroscope by its label).
	Scenario string
	Size     int
	Added    time.Time
	Data     []byte
	Prof     *profile.Profile
}

// uploadTypeView is what an upload's page shows for one sample type.
type uploadTypeView struct {
	View     *profileView
	Budget   []budgetPart
	Flame    []byte
	FlameErr error
}

// maxUploadTypes bounds the sample types precomputed per upload (Go's
// profiles have two or four); each costs a flame graph build.
const maxUploadTypes = 6

// flameBytes is the size of the flame JSON an upload holds.
func (u *upload) flameBytes() int {
	n := 0
	for _, v := range u.Views {
		n += len(v.Flame)
	}
	return n
}

type uploadCache struct {
	mu    sync.Mutex
	max   int
	items map[string]*upload
	order []string
	bytes int64 // of Data and Flame, over all items
}

// maxUploadBytes bounds the memory uploads hold (files and their flame
// JSON); the oldest are dropped first.
const maxUploadBytes = 256 << 20

func newUploadCache(max int) *uploadCache {
	return &uploadCache{max: max, items: map[string]*upload{}}
}

// add keeps u, first computing what its page shows (outside the lock).
func (c *uploadCache) add(u *upload) {
	if u.Prof != nil {
		p := u.Prof
		rules := rulesFor(u.Scenario)
		u.Default, _ = sampleIndex(p, "")
		for i, st := range p.SampleType {
			u.Types = append(u.Types, st.Type+" ("+st.Unit+")")
			u.names = append(u.names, st.Type)
			if i >= maxUploadTypes && i != u.Default {
				u.Views = append(u.Views, nil)
				continue
			}
			q := "?type=" + url.QueryEscape(st.Type)
			tv := &uploadTypeView{View: newProfileView(p, i, "/upload/"+u.Token+"/flame.json"+q, rules), Budget: profileBudget(p, i, rules)}
			tv.View.Types = typeLinks(p, i, "/upload/"+u.Token+"?")
			var buf bytes.Buffer
			t, err := flame.Build(p, flame.Options{Title: u.Name, SampleType: st.Type, Rules: rules})
			if err == nil {
				err = t.WriteJSON(&buf)
			}
			tv.Flame, tv.FlameErr = buf.Bytes(), err
			u.Views = append(u.Views, tv)
		}
		if len(u.Data) < 2 || u.Data[0] != 0x1f || u.Data[1] != 0x8b {
			// Stored profiles are gzipped, as Go writes them.
			var gz bytes.Buffer
			if err := p.Write(&gz); err == nil {
				u.Data = gz.Bytes()
			}
		}
		u.Prof = nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.items[u.Token] = u
	c.order = append(c.order, u.Token)
	c.bytes += int64(len(u.Data) + u.flameBytes())
	for len(c.order) > c.max || (c.bytes > maxUploadBytes && len(c.order) > 1) {
		old := c.items[c.order[0]]
		c.bytes -= int64(len(old.Data) + old.flameBytes())
		delete(c.items, c.order[0])
		c.order = c.order[1:]
	}
}

func (c *uploadCache) get(token string) *upload {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.items[token]
}

type uploadFormView struct {
	MaxMiB int64
	// Pyroscope says whether /pyroscope can fetch profiles.
	Pyroscope bool
}

type uploadView struct {
	Upload  *upload
	Type    string // the sample type shown
	Profile *profileView
	Budget  []budgetPart
	Legend  []legendItem
	Types   []string
}

func (s *Server) uploadForm(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, "upload", uploadFormView{MaxMiB: s.opts.MaxUpload >> 20, Pyroscope: s.opts.Profiles != nil})
}

// errTooLarge marks an upload over the limit.
var errTooLarge = errors.New("too large")

// uploadPost reads a multipart form with a "profile" file and an optional
// "save" field. It streams the parts instead of calling ParseMultipartForm,
// so nothing is spilled to temporary files and memory stays bounded by
// MaxUpload.
func (s *Server) uploadPost(w http.ResponseWriter, r *http.Request) {
	// The form's own fields and boundaries add a little to the file.
	r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxUpload+64<<10)
	mr, err := r.MultipartReader()
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "Send the profile as a multipart form with a file field named \"profile\" (%v).", err)
		return
	}
	var (
		data []byte
		name string
		save bool
	)
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			s.uploadError(w, r, err)
			return
		}
		switch part.FormName() {
		case "profile":
			name = path.Base(strings.ReplaceAll(part.FileName(), "\\", "/"))
			data, err = readLimited(part, s.opts.MaxUpload)
		case "save":
			var v []byte
			v, err = readLimited(part, 16)
			save = len(v) > 0 && string(v) != "0"
		default:
			_, err = io.Copy(io.Discard, io.LimitReader(part, 1<<10))
		}
		part.Close()
		if err != nil {
			s.uploadError(w, r, err)
			return
		}
	}
	if data == nil {
		s.fail(w, r, http.StatusBadRequest, "The form had no file named \"profile\". Choose a pprof file (.pb.gz) to upload.")
		return
	}
	prof, err := parseProfile(data)
	if err != nil {
		s.fail(w, r, http.StatusUnprocessableEntity, "%s could not be read: %v.", orUnnamed(name), err)
		return
	}
	u := &upload{Token: newToken(), Name: orUnnamed(name), Size: len(data), Added: time.Now(), Data: data, Prof: prof}
	if save {
		if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
			var gz bytes.Buffer
			if err := prof.Write(&gz); err == nil {
				u.Data = gz.Bytes()
			}
		}
		s.saveUpload(w, r, u)
		return
	}
	s.uploads.add(u)
	http.Redirect(w, r, "/upload/"+u.Token, http.StatusSeeOther)
}

func (s *Server) uploadError(w http.ResponseWriter, r *http.Request, err error) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) || errors.Is(err, errTooLarge) {
		s.fail(w, r, http.StatusRequestEntityTooLarge, "The upload is larger than the limit of %d MiB.", s.opts.MaxUpload>>20)
		return
	}
	s.fail(w, r, http.StatusBadRequest, "The upload could not be read: %v.", err)
}

// readLimited reads all of r, failing with errTooLarge past max bytes.
func readLimited(r io.Reader, max int64) ([]byte, error) {
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if n > max {
		return nil, errTooLarge
	}
	return buf.Bytes(), nil
}

func orUnnamed(name string) string {
	if name == "" || name == "." || name == "/" {
		return "unnamed profile"
	}
	return name
}

func newToken() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (s *Server) loadUpload(w http.ResponseWriter, r *http.Request) (*upload, bool) {
	token := r.PathValue("token")
	u := s.uploads.get(token)
	if u == nil {
		s.fail(w, r, http.StatusNotFound, "This upload is no longer in memory (uploads are kept only until the server restarts or newer ones push them out). Upload the file again, and tick \"save\" to keep it.")
		return nil, false
	}
	return u, true
}

func (s *Server) uploadPage(w http.ResponseWriter, r *http.Request) {
	u, ok := s.loadUpload(w, r)
	if !ok {
		return
	}
	tv, status, err := u.typeView(r.URL.Query().Get("type"))
	if err != nil {
		s.fail(w, r, status, "%v.", err)
		return
	}
	pv := *tv.View
	if tv.FlameErr == nil {
		pv.FlameData = inlineFlame(tv.Flame)
	}
	v := uploadView{Upload: u, Type: tv.View.SampleType, Profile: &pv, Budget: tv.Budget, Types: u.Types}
	for _, p := range v.Budget {
		v.Legend = append(v.Legend, legendItem{Label: p.Category, Color: p.Color})
	}
	s.render(w, r, http.StatusOK, "uploaded", v)
}

func (s *Server) uploadFlameJSON(w http.ResponseWriter, r *http.Request) {
	u := s.uploads.get(r.PathValue("token"))
	if u == nil {
		s.failJSON(w, http.StatusNotFound, errors.New("this upload is no longer in memory"))
		return
	}
	tv, status, err := u.typeView(r.URL.Query().Get("type"))
	if err != nil {
		s.failJSON(w, status, err)
		return
	}
	if tv.FlameErr != nil {
		s.failJSON(w, http.StatusUnprocessableEntity, tv.FlameErr)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(tv.Flame)
}

// typeView returns what the upload shows for sample type typ ("" for the
// default).
func (u *upload) typeView(typ string) (*uploadTypeView, int, error) {
	if typ == "" {
		return u.Views[u.Default], http.StatusOK, nil
	}
	for i, name := range u.names {
		if name == typ {
			if u.Views[i] == nil {
				return nil, http.StatusNotFound, fmt.Errorf("this upload shows only its first %d sample types", maxUploadTypes)
			}
			return u.Views[i], http.StatusOK, nil
		}
	}
	return nil, http.StatusNotFound, fmt.Errorf("this profile has no sample type %q (it has: %s)", typ, strings.Join(u.Types, ", "))
}

func (s *Server) uploadSave(w http.ResponseWriter, r *http.Request) {
	u, ok := s.loadUpload(w, r)
	if !ok {
		return
	}
	s.saveUpload(w, r, u)
}

// saveUpload stores an uploaded profile as a run of the pseudo-scenario
// "upload" with one case, and redirects to that case.
// maxCaseName bounds the file-name part of an uploaded profile's case
// name, in bytes (the slug has one byte per byte), well under the usual
// 255-byte limit on a directory name.
const maxCaseName = 100

func (s *Server) saveUpload(w http.ResponseWriter, r *http.Request, u *upload) {
	now := time.Now()
	name := strings.TrimSuffix(strings.TrimSuffix(u.Name, ".gz"), ".pb")
	// The case's directory is named after the file: a name of 300
	// characters made it longer than file systems allow (a 500 and a
	// partial run left behind).
	for len(name) > maxCaseName {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	c := store.Case{Name: "profile=" + name, Status: store.StatusOK}
	slug := store.Slug(c.Name)
	rel := "cases/" + slug + "/profile.pb.gz"
	c.Profiles = map[string]string{"profile": rel}
	run := &store.Run{
		ID:       store.NewID(now, "upload"),
		Scenario: "upload",
		Started:  now,
		Finished: now,
		Complete: true,
		Note:     fmt.Sprintf("uploaded through the web UI from %s (%d bytes)", u.Name, u.Size),
		Cases:    []store.Case{c},
	}
	wr, err := s.store.Create(run)
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, "Cannot save the upload: %v", err)
		return
	}
	err = wr.WriteFile(rel, u.Data)
	if err == nil {
		_, err = wr.Commit()
	}
	if err != nil {
		// The partial run holds nothing worth keeping.
		os.RemoveAll(wr.Dir())
		s.fail(w, r, http.StatusInternalServerError, "Cannot save the upload: %v", err)
		return
	}
	http.Redirect(w, r, "/runs/"+run.ID+"/cases/"+slug, http.StatusSeeOther)
}
