package web

import (
	"fmt"
	neturl "net/url"
	"os"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/profiles"
)

// maxProfileBytes bounds a profile after decompression, and
// maxProfileMemory the memory one profile may take decoded and drawn: the
// limits of every path that parses a profile (profiles' defaults), as
// variables so that tests can lower them.
var (
	maxProfileBytes  int64 = profiles.MaxUncompressed
	maxProfileMemory int64 = profiles.MaxMemory
)

// openProfile opens file rel of run id through the store's door
// (store.OpenFile refuses links, FIFOs, devices and paths out of the run)
// and returns a key that identifies the file's content (path, size and
// modification time) for the cache of what is built from it: stored runs
// do not change once committed, and a rewritten file changes key.
func (s *Server) openProfile(id, rel string) (*os.File, int64, string, error) {
	f, fi, err := s.store.OpenFile(id, rel)
	if err != nil {
		return nil, 0, "", err
	}
	if fi.Size() > profiles.MaxCompressed {
		f.Close()
		return nil, 0, "", fmt.Errorf("%s is larger than %d MiB; refused", rel, profiles.MaxCompressed>>20)
	}
	key := fmt.Sprintf("%s\x00%d\x00%d", f.Name(), fi.Size(), fi.ModTime().UnixNano())
	return f, fi.Size(), key, nil
}

// typeLink is one entry of a profile's sample-type switch.
type typeLink struct {
	Label, URL string
	Current    bool
}

// typeLinks offers p's sample types, idx being shown, at url + "type=T";
// nil when there is only one.
func typeLinks(p *profile.Profile, idx int, url string) []typeLink {
	types := make([]profile.ValueType, len(p.SampleType))
	for i, st := range p.SampleType {
		types[i] = *st
	}
	return typeLinksOf(types, idx, url)
}

// typeLinksOf is typeLinks of a list of sample types.
func typeLinksOf(types []profile.ValueType, idx int, url string) []typeLink {
	if len(types) < 2 {
		return nil
	}
	out := make([]typeLink, len(types))
	for i, st := range types {
		out[i] = typeLink{Label: st.Type, URL: url + "type=" + neturl.QueryEscape(st.Type), Current: i == idx}
	}
	return out
}

// fnRow is one function in a top-functions table.
type fnRow struct {
	Name, Category, Color string
	Self, Total           int64
	SelfShare, TotalShare float64
	SelfText, TotalText   string
}

// fmtSample formats a sample value in its pprof unit.
func fmtSample(v int64, unit string) string {
	if v == 0 {
		return "0" // not "0.000s"
	}
	switch unit {
	case "nanoseconds":
		return fmtValue(float64(v)*1e-9, "sec/op")
	case "microseconds":
		return fmtValue(float64(v)*1e-6, "sec/op")
	case "milliseconds":
		return fmtValue(float64(v)*1e-3, "sec/op")
	case "seconds":
		return fmtValue(float64(v), "sec/op")
	case "bytes":
		return fmtValue(float64(v), "B/op")
	}
	return fmt.Sprint(v)
}
