package flame

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/profiles"
)

// Source is a profile reduced to what flame graphs and folded stacks need:
// sample types, each sample's stack and values, and one name per frame,
// as flat arrays. ReadSource fills it straight from the pprof encoding,
// without building a profile.Profile and its maps, which is most of the
// time and memory of drawing a large profile (issue 13: 1M stacks took
// 13 s and 1.8 GB, most of it in profile.Parse's objects).
type Source struct {
	sampleTypes []profile.ValueType
	defaultType string
	periodType  profile.ValueType
	period      int64

	names    []string // function names, unique
	locNames []int32  // per location, its names caller first (inlined calls expanded)
	locStart []int32  // location l is locNames[locStart[l]:locStart[l+1]]

	locs  []int32 // per sample its locations, leaf first, as indexes
	start []int32 // sample k is locs[start[k]:start[k+1]]
	vals  []int64 // len(sampleTypes) per sample
	// state is each sample's "state" label for trace-made wall profiles:
	// 0 none, 1 running, 2 another state, 3 running with no CPU samples
	// (its only frame is the synthetic one).
	state    []uint8
	allState bool // every sample has a state label
}

const (
	stateNone = iota
	stateRunning
	stateOther
	stateRunningNoCPU
)

// SampleTypes returns the profile's sample types.
func (s *Source) SampleTypes() []profile.ValueType { return s.sampleTypes }

// Samples returns the number of samples.
func (s *Source) Samples() int { return len(s.start) - 1 }

// SampleIndex is profiles.SampleIndex for a Source: the index of the
// sample type named name, or for "" the default one.
func (s *Source) SampleIndex(name string) (int, error) { return s.sampleIndex(name) }

func (s *Source) sampleIndex(name string) (int, error) {
	if len(s.sampleTypes) == 0 {
		return 0, fmt.Errorf("profile has no sample types")
	}
	if name == "" {
		name = s.defaultType
	}
	if name == "" {
		return len(s.sampleTypes) - 1, nil
	}
	var names []string
	for i, st := range s.sampleTypes {
		if st.Type == name {
			return i, nil
		}
		names = append(names, st.Type)
	}
	return 0, fmt.Errorf("no sample type %q in profile (it has %s)", name, strings.Join(names, ", "))
}

// value returns sample k's value of type idx.
func (s *Source) value(k, idx int) int64 { return s.vals[k*len(s.sampleTypes)+idx] }

// sourceOf reduces a parsed profile to a Source.
func sourceOf(p *profile.Profile) *Source {
	s := &Source{defaultType: p.DefaultSampleType, period: p.Period}
	for _, st := range p.SampleType {
		s.sampleTypes = append(s.sampleTypes, *st)
	}
	if p.PeriodType != nil {
		s.periodType = *p.PeriodType
	}
	ids := make(map[string]int32)
	intern := func(name string) int32 {
		if id, ok := ids[name]; ok {
			return id
		}
		id := int32(len(s.names))
		s.names = append(s.names, name)
		ids[name] = id
		return id
	}
	locIdx := make(map[*profile.Location]int32, len(p.Location))
	addLoc := func(loc *profile.Location) int32 {
		if i, ok := locIdx[loc]; ok {
			return i
		}
		i := int32(len(s.locStart))
		s.locStart = append(s.locStart, int32(len(s.locNames)))
		fn := profiles.FrameNames(loc) // leaf first
		for j := len(fn) - 1; j >= 0; j-- {
			s.locNames = append(s.locNames, intern(fn[j]))
		}
		locIdx[loc] = i
		return i
	}
	nt := len(p.SampleType)
	n := 0
	for _, smp := range p.Sample {
		n += len(smp.Location)
	}
	s.locs = make([]int32, 0, n)
	s.start = make([]int32, 0, len(p.Sample)+1)
	s.vals = make([]int64, 0, len(p.Sample)*nt)
	s.allState = len(p.Sample) > 0
	none := profiles.StateFrame(profiles.Other, "running, no CPU samples")
	for _, smp := range p.Sample {
		s.start = append(s.start, int32(len(s.locs)))
		for _, loc := range smp.Location {
			s.locs = append(s.locs, addLoc(loc))
		}
		v := smp.Value
		if len(v) != nt { // CheckValid refuses these; a hand-built profile may not
			v = make([]int64, nt)
			copy(v, smp.Value)
		}
		s.vals = append(s.vals, v...)
		st := uint8(stateNone)
		if l := smp.Label["state"]; len(l) > 0 {
			st = stateOther
			if l[0] == "running" {
				st = stateRunning
				if len(smp.Location) > 0 && len(profiles.FrameNames(smp.Location[0])) > 0 && profiles.FrameNames(smp.Location[0])[0] == none {
					st = stateRunningNoCPU
				}
			}
		} else {
			s.allState = false
		}
		s.state = append(s.state, st)
	}
	s.start = append(s.start, int32(len(s.locs)))
	s.locStart = append(s.locStart, int32(len(s.locNames)))
	return s
}

// addrName names a location with no symbols by its address, as
// profiles.FrameNames does.
func addrName(addr uint64) string { return "0x" + strconv.FormatUint(addr, 16) }

// WriteFolded writes the samples of sample type idx as folded stacks, as
// profiles.WriteFolded does for a parsed profile: one line per distinct
// stack in the order first seen, "root;caller;leaf value", samples with a
// zero value left out, ';' and line breaks in names replaced by '_'. It
// writes nothing, and returns an error, if the output would be over
// profiles.MaxFolded bytes.
func (s *Source) WriteFolded(w io.Writer, idx int) error {
	if idx < 0 || idx >= len(s.sampleTypes) {
		return fmt.Errorf("no sample type %d", idx)
	}
	f := &profiles.Folded{}
	var stack []int32
	for k := range s.Samples() {
		v := s.value(k, idx)
		if v <= 0 {
			continue // as the tree: a negative value is nothing to draw
		}
		stack = stack[:0]
		locs := s.locs[s.start[k]:s.start[k+1]]
		for i := len(locs) - 1; i >= 0; i-- {
			stack = append(stack, s.locNames[s.locStart[locs[i]]:s.locStart[locs[i]+1]]...)
		}
		f.Add(stack, v)
	}
	return f.Write(w, s.names, profiles.MaxFolded)
}
