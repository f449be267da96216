package profiles

import (
	"math"
	"strconv"

	"github.com/google/pprof/profile"
)

// FrameNames returns the function names of one location, leaf first: an
// inlined call contributes one name per inlined function. A location with
// no symbol information is named by its address, "0x4f2a10".
func FrameNames(loc *profile.Location) []string {
	if len(loc.Line) == 0 {
		return []string{addrName(loc)}
	}
	names := make([]string, len(loc.Line))
	for i, ln := range loc.Line {
		if ln.Function != nil && ln.Function.Name != "" {
			names[i] = ln.Function.Name
		} else {
			names[i] = addrName(loc)
		}
	}
	return names
}

func addrName(loc *profile.Location) string {
	return "0x" + strconv.FormatUint(loc.Address, 16)
}

// ProfileClassifier classifies the samples of one profile, caching the class
// of every location, so that a sample costs one map lookup per frame until
// the first deciding frame. Not safe for concurrent use.
type ProfileClassifier struct {
	r    *Rules
	locs map[*profile.Location]Class
}

// ForProfile returns a classifier for p's samples.
func (r *Rules) ForProfile(p *profile.Profile) *ProfileClassifier {
	return &ProfileClassifier{r: r, locs: make(map[*profile.Location]Class, len(p.Location))}
}

// Location returns the class of one location (all its inlined frames).
func (c *ProfileClassifier) Location(loc *profile.Location) Class {
	if cl, ok := c.locs[loc]; ok {
		return cl
	}
	var cl Class
	if len(loc.Line) == 0 {
		cl = c.r.Frame(addrName(loc))
	} else {
		// Line[0] is the leaf-most inlined function; fold towards the caller.
		for i := len(loc.Line) - 1; i >= 0; i-- {
			name := addrName(loc)
			if f := loc.Line[i].Function; f != nil && f.Name != "" {
				name = f.Name
			}
			cl = c.r.Frame(name).Under(cl)
		}
	}
	c.locs[loc] = cl
	return cl
}

// Sample returns the category of one sample.
func (c *ProfileClassifier) Sample(s *profile.Sample) Category {
	var cl Class
	for _, loc := range s.Location {
		if cl = cl.Under(c.Location(loc)); cl.Decided() {
			break
		}
	}
	return cl.Category()
}

// Breakdown adds up p's samples by category: value[sampleIndex] of every
// sample goes to its category. It returns the value per category (every
// category is present, zero or not) and the total. An out-of-range
// sampleIndex gives zeros; use SampleIndex to find one by name.
//
// For the wall-clock profile of a case's worker goroutines (made from the
// execution trace by internal/wallclock), the shares of the total are the
// case's time budget: ns/op × share is the time
// per operation spent in each category.
//
// A profile is untrusted input: negative values (which only a diff of two
// profiles has, and a budget cannot use) are left out, and sums saturate
// at math.MaxInt64 instead of wrapping to a negative total (issue 14).
func Breakdown(p *profile.Profile, sampleIndex int, r *Rules) (map[Category]int64, int64) {
	out := make(map[Category]int64, len(Categories))
	for _, c := range Categories {
		out[c] = 0
	}
	if sampleIndex < 0 || sampleIndex >= len(p.SampleType) {
		return out, 0
	}
	pc := r.ForProfile(p)
	var total int64
	for _, s := range p.Sample {
		if sampleIndex >= len(s.Value) {
			continue
		}
		v := s.Value[sampleIndex]
		if v <= 0 {
			continue
		}
		c := pc.Sample(s)
		out[c] = AddSaturating(out[c], v)
		total = AddSaturating(total, v)
	}
	return out, total
}

// AddSaturating returns a+b for non-negative a and b, or math.MaxInt64
// when the sum would overflow: sums of an untrusted profile's values use it,
// so that a total never wraps to a negative number.
func AddSaturating(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
