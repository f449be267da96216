package pyroscope

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// bgIngest is a stand-in /ingest that records what it was sent and
// answers with status.
type bgIngest struct {
	mu     sync.Mutex
	names  []string
	types  []string
	status int
}

func (f *bgIngest) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.URL.Path != "/ingest" {
		http.NotFound(w, r)
		return
	}
	f.names = append(f.names, r.URL.Query().Get("name"))
	if file, _, err := r.FormFile("profile"); err == nil {
		data, _ := io.ReadAll(file)
		if p, err := profile.ParseData(data); err == nil {
			f.types = append(f.types, p.SampleType[0].Type+"/"+p.PeriodType.Type)
		}
	}
	if f.status != 0 {
		http.Error(w, `{"code":"invalid_argument","message":"no thanks"}`, f.status)
	}
}

func wallProfile(n int) *profile.Profile {
	p := bigProfile(n, 10)
	p.SampleType = []*profile.ValueType{{Type: "wall", Unit: "nanoseconds"}}
	for i, s := range p.Sample {
		s.Value = []int64{int64(i + 1)}
	}
	return p
}

func TestBackground(t *testing.T) {
	f := &bgIngest{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	b, err := NewBackground(srv.URL, Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop()
	now := time.Now()
	if err := b.Upload(KindWall, "svc", map[string]string{"scenario": "a,b"}, wallProfile(3), now.Add(-time.Second), now); err != nil {
		t.Fatal(err)
	}
	if !b.Flush(5 * time.Second) {
		t.Fatal("flush timed out")
	}
	st := b.Stats()
	if st.Sent["wall"] != 1 || st.Failed != 0 || st.Bytes <= 0 {
		t.Errorf("stats %+v, want one wall upload", st)
	}
	f.mu.Lock()
	if len(f.names) != 1 || f.names[0] != "svc{scenario=a_b}" || f.types[0] != "wall/wall" {
		t.Errorf("server got names %q types %q", f.names, f.types)
	}
	f.status = http.StatusBadRequest
	f.mu.Unlock()

	// A refusal by the server is counted with its reason, not fatal.
	if err := b.Upload(KindWall, "svc", nil, wallProfile(3), now.Add(-time.Second), now); err != nil {
		t.Fatal(err)
	}
	b.Flush(5 * time.Second)
	st = b.Stats()
	if st.Failed != 1 || !strings.Contains(st.LastError, "400") || !strings.Contains(st.LastError, "no thanks") {
		t.Errorf("stats %+v, want one failure with the server's reason", st)
	}
	// Over a limit: refused before queueing, naming the label.
	err = b.Upload(KindWall, "svc", map[string]string{"commit": strings.Repeat("c", 3000)}, wallProfile(3), now, now)
	if err == nil || !strings.Contains(err.Error(), `label "commit"`) || b.Stats().Refused != 1 {
		t.Errorf("over the limit: err %v, stats %+v", err, b.Stats())
	}
	if s := b.Stats().String(); !strings.Contains(s, "sent 1 (wall 1), 1 failed, 0 dropped, 1 refused") {
		t.Errorf("String() = %q", s)
	}
}

func TestBackgroundUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	b, err := NewBackground(url, Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop()
	b.Upload(KindWall, "svc", nil, wallProfile(2), time.Now(), time.Now())
	b.Flush(5 * time.Second)
	if st := b.Stats(); st.Failed != 1 || !strings.Contains(st.LastError, "refused") {
		t.Errorf("stats %+v, want a connection failure", st)
	}
}

func TestTrimSamples(t *testing.T) {
	p := wallProfile(20) // values 1..20, total 210
	trimSamples(p, 5)
	if len(p.Sample) != 5 {
		t.Fatalf("%d samples, want 5", len(p.Sample))
	}
	var total int64
	for _, s := range p.Sample {
		total += s.Value[0]
	}
	if total != 210 {
		t.Errorf("total %d after trimming, want 210", total)
	}
	last := p.Sample[4]
	if last.Location[0].Line[0].Function.Name != trimFrame || last.Value[0] != 210-20-19-18-17 {
		t.Errorf("merged sample %v = %d", last.Location[0].Line[0].Function.Name, last.Value[0])
	}
	if err := p.CheckValid(); err != nil {
		t.Error(err)
	}
}
