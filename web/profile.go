package web

import (
	"bytes"
	"fmt"
	"io"
	neturl "net/url"
	"sort"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/profiles"
)

// maxProfileBytes bounds a profile after decompression. A gzip bomb stops
// here instead of filling memory. (A variable so tests can lower it.)
var maxProfileBytes int64 = 256 << 20

// maxProfileMemory bounds the memory one parsed profile may take, as
// profiles.ReadLimited estimates it before parsing: a crafted upload of a
// few hundred KB can otherwise expand to gigabytes of samples. The
// yardstick profile of 100,000 stacks is estimated at 130 MB.
var maxProfileMemory int64 = 1 << 30

// parsing admits two parses at a time: each may take up to
// maxProfileMemory, and a page of concurrent uploads must not multiply it.
var parsing = make(chan struct{}, 2)

// parseProfile parses pprof data (gzipped or not) with bounded memory: a
// server holds several profiles at once, so its limits are lower than
// profiles.Read's.
func parseProfile(data []byte) (*profile.Profile, error) {
	parsing <- struct{}{}
	defer func() { <-parsing }()
	return profiles.ReadLimited(bytes.NewReader(data), profiles.Limits{
		Compressed:   int64(len(data)),
		Uncompressed: maxProfileBytes,
		Memory:       maxProfileMemory,
	})
}

// loadProfile returns the profile in file rel of run id, from s.profiles if
// it was parsed before, and a key that identifies the file's content (path,
// size and modification time) for the caches of what is derived from it.
// Stored runs do not change once committed; a rewritten file changes key.
// The file is opened through the store's door (store.OpenFile), which
// refuses links, FIFOs, devices and paths out of the run.
func (s *Server) loadProfile(id, rel string) (*profile.Profile, string, error) {
	f, fi, err := s.store.OpenFile(id, rel)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	path := f.Name()
	key := fmt.Sprintf("%s\x00%d\x00%d", path, fi.Size(), fi.ModTime().UnixNano())
	p, err := s.profiles.get(key, func() (*profile.Profile, error) {
		if fi.Size() > maxProfileBytes {
			return nil, fmt.Errorf("%s is larger than %d MiB; refused", path, maxProfileBytes>>20)
		}
		data, err := io.ReadAll(io.LimitReader(f, maxProfileBytes+1))
		if err != nil {
			return nil, err
		}
		if int64(len(data)) > maxProfileBytes {
			return nil, fmt.Errorf("%s is larger than %d MiB; refused", path, maxProfileBytes>>20)
		}
		return parseProfile(data)
	})
	return p, key, err
}

// sampleIndex picks the sample type to show: typ if it is not empty
// (?type=, e.g. contentions or inuse_space), else the profile's default if
// it names one, else the last (pprof's own choice: time over counts).
func sampleIndex(p *profile.Profile, typ string) (int, error) {
	i, err := profiles.SampleIndex(p, typ)
	if err != nil && typ == "" {
		return len(p.SampleType) - 1, nil
	}
	return i, err
}

// typeLink is one entry of a profile's sample-type switch.
type typeLink struct {
	Label, URL string
	Current    bool
}

// typeLinks offers p's sample types, idx being shown, at url + "type=T";
// nil when there is only one.
func typeLinks(p *profile.Profile, idx int, url string) []typeLink {
	if len(p.SampleType) < 2 {
		return nil
	}
	out := make([]typeLink, len(p.SampleType))
	for i, st := range p.SampleType {
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

// topFunctions returns the n functions with the most self and the most
// total (self plus callees) value, and the profile's total.
func topFunctions(p *profile.Profile, idx, n int, rules *profiles.Rules) (bySelf, byTotal []fnRow, total int64) {
	pc := rules.ForProfile(p)
	self := map[string]int64{}
	cum := map[string]int64{}
	cat := map[string]string{}
	var names []string
	for _, s := range p.Sample {
		v := s.Value[idx]
		if v == 0 {
			continue
		}
		total += v
		names = names[:0]
		for _, loc := range s.Location {
			names = append(names, profiles.FrameNames(loc)...)
		}
		if len(names) == 0 {
			continue
		}
		self[names[0]] += v
		if _, ok := cat[names[0]]; !ok {
			// A function's category is that of the first sample it is the
			// leaf of: its callers can change it (runtime.lock2 under the
			// GC is gc), so this is a hint, not a rule.
			cat[names[0]] = string(pc.Sample(s))
		}
		seen := make(map[string]bool, len(names))
		for _, name := range names {
			if !seen[name] {
				seen[name] = true
				cum[name] += v
			}
		}
	}
	unit := p.SampleType[idx].Unit
	row := func(name string) fnRow {
		r := fnRow{Name: name, Self: self[name], Total: cum[name], Category: cat[name]}
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
	top := func(m map[string]int64) []fnRow {
		keys := make([]string, 0, len(m))
		for k, v := range m {
			if v > 0 {
				keys = append(keys, k)
			}
		}
		sort.Slice(keys, func(i, j int) bool {
			if m[keys[i]] != m[keys[j]] {
				return m[keys[i]] > m[keys[j]]
			}
			return keys[i] < keys[j]
		})
		if len(keys) > n {
			keys = keys[:n]
		}
		rows := make([]fnRow, len(keys))
		for i, k := range keys {
			rows[i] = row(k)
		}
		return rows
	}
	return top(self), top(cum), total
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
