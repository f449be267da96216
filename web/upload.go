package web

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/internal/lab"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/profiles"
	"github.com/perflab/perflab/profiles/flame"
)

// An uploaded profile lives in memory only, under an unguessable token,
// until it is evicted or the user asks to save it as a run.
type upload struct {
	// Views (one per sample type, up to maxUploadTypes) and Types are
	// computed once, when the upload arrives, from the profile decoded
	// for drawing (flame.ReadSource: no profile.Profile, whose objects
	// held hundreds of MB transiently for a file of 100,000 stacks, issue
	// 13); then Src and Prof are dropped.
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
	Src      *flame.Source
	Prof     *profile.Profile // a profile already parsed (from Pyroscope), if no Src
	// Work are work patterns given with the upload, as perflab flame's
	// --work: without them the program's own code is "other".
	Work []string
	// rules are the rules compiled with Work (charged to lease), until the
	// views are built; nil means rulesFor(Scenario).
	rules *profiles.Rules
	// lease is the server's memory budget the upload holds: its parse's
	// while its views are built, then what it keeps (Data and the flame
	// JSON), until the cache drops it.
	lease *lease
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

// flameBytes is the size of the flame JSON an upload holds. Views past
// maxUploadTypes are nil (issue 26: a profile of 8 sample types panicked
// here, and its lease was never given back).
func (u *upload) flameBytes() int {
	n := 0
	for _, v := range u.Views {
		if v != nil {
			n += len(v.Flame)
		}
	}
	return n
}

type uploadCache struct {
	mu       sync.Mutex
	max      int
	maxBytes int64 // maxUploadBytes, or a quarter of the memory budget
	items    map[string]*upload
	order    []string
	bytes    int64 // of Data and Flame, over all items
}

// maxUploadBytes bounds the memory uploads hold (files and their flame
// JSON), within a quarter of the server's memory budget; the oldest are
// dropped first.
const maxUploadBytes = 256 << 20

func newUploadCache(max int, maxBytes int64) *uploadCache {
	return &uploadCache{max: max, maxBytes: maxBytes, items: map[string]*upload{}}
}

// add keeps u, first computing what its page shows (outside the lock). If
// that fails (a panic is a bug, but must not keep the memory u holds: issue
// 26), u is not kept, its lease is given back, and the error says why.
func (c *uploadCache) add(u *upload) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("internal error drawing the profile: %v", v)
		}
		if err != nil {
			u.lease.release()
		}
	}()
	u.build()
	u.lease.shrink(int64(len(u.Data) + u.flameBytes()))
	var drop []*upload
	c.mu.Lock()
	c.items[u.Token] = u
	c.order = append(c.order, u.Token)
	c.bytes += int64(len(u.Data) + u.flameBytes())
	for len(c.order) > c.max || (c.bytes > c.maxBytes && len(c.order) > 1) {
		old := c.items[c.order[0]]
		c.bytes -= int64(len(old.Data) + old.flameBytes())
		delete(c.items, c.order[0])
		c.order = c.order[1:]
		drop = append(drop, old)
	}
	c.mu.Unlock()
	for _, old := range drop {
		old.lease.release()
	}
	return nil
}

// held returns the budget the kept uploads hold, for tests.
func (c *uploadCache) held() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for _, u := range c.items {
		n += u.lease.size()
	}
	return n
}

// build computes the views of u's sample types, then drops the profile.
func (u *upload) build() {
	if u.Src == nil && u.Prof != nil {
		u.Src = flame.NewSource(u.Prof)
	}
	src := u.Src
	if src == nil {
		return
	}
	rules := u.rules
	if rules == nil {
		rules = rulesFor(u.Scenario)
	}
	types := src.SampleTypes()
	// typeLinks and the views take the sample types in a profile.
	shape := &profile.Profile{}
	for i := range types {
		shape.SampleType = append(shape.SampleType, &types[i])
	}
	u.Default = len(types) - 1
	if i, err := src.SampleIndex(""); err == nil {
		u.Default = i
	}
	for i, st := range types {
		u.Types = append(u.Types, st.Type+" ("+st.Unit+")")
		u.names = append(u.names, st.Type)
		if i >= maxUploadTypes && i != u.Default {
			u.Views = append(u.Views, nil)
			continue
		}
		q := "?type=" + url.QueryEscape(st.Type)
		tv := &uploadTypeView{}
		t, err := flame.BuildSource(src, flame.Options{Title: u.Name, SampleType: st.Type, Rules: rules})
		if err == nil {
			tv.View = treeView(t, src.Samples(), "/upload/"+u.Token+"/flame.json"+q)
			tv.Budget = treeBudget(t)
			var buf bytes.Buffer
			err = t.WriteJSON(&buf)
			tv.Flame = safePage(buf.Bytes())
		} else {
			tv.View = &profileView{SampleType: u.Types[i], FlameURL: "/upload/" + u.Token + "/flame.json" + q}
		}
		tv.FlameErr = err
		tv.View.Types = typeLinks(shape, i, "/upload/"+u.Token+"?")
		u.Views = append(u.Views, tv)
	}
	// Stored profiles are gzipped, as Go writes them.
	u.Data = lab.Gzipped(u.Data)
	u.Src, u.Prof, u.rules = nil, nil, nil
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

// uploadPost reads a multipart form with a "profile" file, optional
// "work" fields and an optional "save" field. It streams the parts instead
// of calling ParseMultipartForm, so nothing is spilled to temporary files,
// and charges what it keeps to the server's memory budget as it reads it
// (issue 26): the file's bytes a buffer at a time, the work patterns'
// compiled size before they are compiled, then the parse. A request the
// budget cannot serve gets 503; the lease goes back on every path.
func (s *Server) uploadPost(w http.ResponseWriter, r *http.Request) {
	// The form's own fields and boundaries add a little to the file.
	r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxUpload+maxFormExtra)
	mr, err := r.MultipartReader()
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "Send the profile as a multipart form with a file field named \"profile\" (%v).", err)
		return
	}
	ctx := r.Context()
	l, err := s.mem.acquire(ctx, 0)
	if err != nil {
		s.fail(w, r, http.StatusServiceUnavailable, "%v.", err)
		return
	}
	kept := false
	defer func() {
		if !kept {
			l.release()
		}
	}()
	var (
		data      []byte
		name      string
		save      bool
		work      []string
		workBytes int
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
			if data != nil {
				err = errTwoFiles
				break
			}
			name = path.Base(strings.ReplaceAll(part.FileName(), "\\", "/"))
			data, err = s.readBody(ctx, part, l)
		case "save":
			var v []byte
			v, err = readLimited(part, 16)
			save = len(v) > 0 && string(v) != "0"
		case "work":
			// Work patterns, one a line or comma-separated, as --work,
			// within the limits of a stored classification (issue 26:
			// any number of 4 KiB fields, none counted, took 4.8 GB).
			var v []byte
			v, err = readLimited(part, model.MaxPatternBytes)
			workBytes += len(v)
			work = append(work, splitPatterns(string(v))...)
			if errors.Is(err, errTooLarge) || err == nil && (workBytes > model.MaxClassificationBytes || len(work) > model.MaxClassificationRules) {
				err = errTooManyPatterns
			}
		default:
			_, err = io.Copy(io.Discard, io.LimitReader(part, 1<<10))
		}
		if err != nil {
			// Not part.Close: it reads the rest of the part, which a
			// stalled client never sends.
			s.uploadError(w, r, err)
			return
		}
		part.Close()
	}
	if data == nil {
		s.fail(w, r, http.StatusBadRequest, "The form had no file named \"profile\". Choose a pprof file (.pb.gz) to upload.")
		return
	}
	var rules *profiles.Rules
	if len(work) > 0 {
		// Charged before the compile, which is where the memory goes.
		cost := profiles.CompiledBytes(work...)
		if cost > maxRulesBytes {
			s.fail(w, r, http.StatusBadRequest, "The work patterns are refused: compiled, they would take about %d MiB (at most %d MiB); use fewer or simpler patterns.", cost>>20, maxRulesBytes>>20)
			return
		}
		if err := l.grow(ctx, cost); err != nil {
			s.fail(w, r, http.StatusServiceUnavailable, "%v.", err)
			return
		}
		if rules, err = profiles.DefaultRules().WithWork(work...); err != nil {
			s.fail(w, r, http.StatusBadRequest, "The work patterns are refused: %v.", err)
			return
		}
	}
	src, pl, err := s.parseData(ctx, data)
	if err != nil {
		status := http.StatusUnprocessableEntity
		if errors.Is(err, errBusy) {
			status = http.StatusServiceUnavailable
		}
		s.fail(w, r, status, "%s could not be read: %v.", orUnnamed(name), err)
		return
	}
	if save {
		// Read, to refuse what is not a profile; kept on disk, not in
		// memory (the deferred release gives the lease back).
		pl.release()
		s.saveUpload(w, r, &upload{Name: orUnnamed(name), Size: len(data), Data: data})
		return
	}
	l.take(pl)
	u := &upload{Token: newToken(), Name: orUnnamed(name), Size: len(data), Added: time.Now(), Data: data, Src: src, Work: work, rules: rules, lease: l}
	kept = true // add keeps the lease, or gives it back
	if err := s.uploads.add(u); err != nil {
		s.fail(w, r, http.StatusInternalServerError, "%s could not be drawn: %v.", u.Name, err)
		return
	}
	http.Redirect(w, r, "/upload/"+u.Token, http.StatusSeeOther)
}

// maxFormExtra is what an upload's form may add to its file: boundaries,
// headers, and the work patterns (model.MaxClassificationBytes).
const maxFormExtra = 64<<10 + model.MaxClassificationBytes

// maxRulesBytes bounds the compiled size of one set of patterns
// (profiles.CompiledBytes): real work patterns take a few KB; one of the
// stored classification's limits' worst cases, about 800 MB (issue 26).
// The same bound as a stored run's.
const maxRulesBytes = model.MaxCompiledBytes

var (
	errTwoFiles        = errors.New("the form has two files named \"profile\"; send one")
	errCutShort        = errors.New("the upload was cut short: the connection ended inside the file")
	errTooManyPatterns = fmt.Errorf("the work patterns are refused: at most %d patterns, %d KiB a field and %d KiB in all", model.MaxClassificationRules, model.MaxPatternBytes>>10, model.MaxClassificationBytes>>10)
)

// readBody reads an upload's file, at most MaxUpload bytes (errTooLarge
// past them), into chunks that are never copied while it arrives, each
// charged to l before it is allocated and before it is read into (issue
// 26: bodies were held, 32 MiB each, before any budget: 24 stalled uploads
// took 1.04 GB; then, charged but grown by doubling, each step left the
// buffer before it as garbage no budget saw, and 24 stalled uploads took
// 812 MB). When the file is whole, it is joined into one buffer of its
// size, charged first; l ends holding that buffer. The bodies being read
// hold at most a quarter of the budget together: a client that stalls
// keeps what it sent until the server's read timeout, and stalled uploads
// must not starve the parses.
func (s *Server) readBody(ctx context.Context, r io.Reader, l *lease) ([]byte, error) {
	limit := s.opts.MaxUpload
	var chunks [][]byte
	var total, chunked int64 // bytes read; the chunks' capacity, charged to l
	var held int64           // of s.bodies
	defer func() { s.bodies.Add(-held) }()
	er := &endReader{r: r}
	for size := int64(64 << 10); ; size = min(2*size, maxBodyChunk) {
		n := min(size, limit+1-total) // one byte past the limit tells it is over
		if s.bodies.Add(n) > s.mem.limit/4 {
			s.bodies.Add(-n)
			return nil, fmt.Errorf("%w (uploads being received hold a quarter of its %d MiB memory budget)", errBusy, s.mem.limit>>20)
		}
		held += n
		if err := l.grow(ctx, n); err != nil {
			return nil, err
		}
		chunked += n
		c := make([]byte, n)
		m, err := io.ReadFull(er, c)
		chunks = append(chunks, c[:m])
		if total += int64(m); total > limit {
			return nil, errTooLarge
		}
		if (err == io.EOF || err == io.ErrUnexpectedEOF) && er.ended {
			break
		}
		if err == io.ErrUnexpectedEOF {
			// The connection ended inside the file: a client that left
			// (ReadFull says the same of a file's last short chunk, so
			// the part's own end is what tells them apart). Parsing what
			// came would hold the budget for a profile nobody waits for.
			return nil, errCutShort
		}
		if err != nil {
			return nil, err
		}
	}
	if len(chunks) == 1 {
		return chunks[0], nil // l holds its capacity
	}
	if err := l.grow(ctx, total); err != nil {
		return nil, err
	}
	buf := make([]byte, 0, total)
	for _, c := range chunks {
		buf = append(buf, c...)
	}
	l.shrink(l.size() - chunked)
	return buf, nil
}

// endReader notes whether its reader ended cleanly (io.EOF: a multipart
// part at its boundary).
type endReader struct {
	r     io.Reader
	ended bool
}

func (e *endReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		e.ended = true
	}
	return n, err
}

// maxBodyChunk is the largest step in which an upload's body is charged
// and read: small steps for small files, few for large ones.
const maxBodyChunk = 4 << 20

func (s *Server) uploadError(w http.ResponseWriter, r *http.Request, err error) {
	var mbe *http.MaxBytesError
	switch {
	case errors.Is(err, errBusy):
		s.fail(w, r, http.StatusServiceUnavailable, "%v.", err)
		return
	case errors.Is(err, errTwoFiles), errors.Is(err, errTooManyPatterns):
		s.fail(w, r, http.StatusBadRequest, "The upload is refused: %v.", err)
		return
	}
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

// orUnnamed names an upload by its file name, made valid UTF-8 (a name of
// invalid bytes went through to the page raw), or "unnamed profile".
func orUnnamed(name string) string {
	name = strings.ToValidUTF8(name, "\uFFFD")
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
// "upload" with one case (lab.ImportProfile), and redirects to that case.
func (s *Server) saveUpload(w http.ResponseWriter, r *http.Request, u *upload) {
	run, err := lab.ImportProfile(s.store, lab.ProfileImport{Name: u.Name, Data: u.Data, Size: u.Size, Via: "the web UI"})
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, "Cannot save the upload: %v", err)
		return
	}
	http.Redirect(w, r, "/runs/"+run.ID+"/cases/"+model.Slug(run.Cases[0].Name), http.StatusSeeOther)
}

// splitPatterns splits a work field into patterns: one a line, or
// separated by commas where no line breaks are used.
func splitPatterns(s string) []string {
	sep := "\n"
	if !strings.Contains(s, "\n") {
		sep = ","
	}
	var out []string
	for _, p := range strings.Split(s, sep) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// treeView is what the upload page shows of one sample type, from its
// flame tree: totals and the top functions by self and total value.
func treeView(t *flame.Tree, samples int, flameURL string) *profileView {
	typ, unit := t.SampleType()
	fs := t.Functions()
	total := t.Total()
	row := func(f flame.Function) fnRow {
		r := fnRow{Name: f.Name, Self: f.Self, Total: f.Total, Category: string(f.Category)}
		if r.Category != "" {
			r.Color = categoryColor(r.Category)
		}
		if total > 0 {
			r.SelfShare = float64(r.Self) / float64(total)
			r.TotalShare = float64(r.Total) / float64(total)
		}
		r.SelfText = fmtSample(r.Self, unit)
		r.TotalText = fmtSample(r.Total, unit)
		return r
	}
	top := func(key func(flame.Function) int64) []fnRow {
		sorted := slices.Clone(fs)
		slices.SortFunc(sorted, func(a, b flame.Function) int {
			if c := cmp.Compare(key(b), key(a)); c != 0 {
				return c
			}
			return strings.Compare(a.Name, b.Name)
		})
		var rows []fnRow
		for _, f := range sorted {
			if key(f) <= 0 || len(rows) == 20 {
				break
			}
			rows = append(rows, row(f))
		}
		return rows
	}
	return &profileView{
		SampleType: typ + " (" + unit + ")",
		Total:      fmtSample(total, unit),
		Samples:    samples,
		TopSelf:    top(func(f flame.Function) int64 { return f.Self }),
		TopTotal:   top(func(f flame.Function) int64 { return f.Total }),
		FlameURL:   flameURL,
	}
}

// treeBudget splits a flame tree's total by category.
func treeBudget(t *flame.Tree) []budgetPart {
	if t.Total() == 0 {
		return nil
	}
	b := map[string]float64{}
	for c, v := range t.ByCategory() {
		if v != 0 {
			b[string(c)] = float64(v)
		}
	}
	return budgetParts(b)
}
