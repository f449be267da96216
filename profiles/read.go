package profiles

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"github.com/google/pprof/profile"
)

// Limits on what Read accepts. A real profile of 100,000 unique stacks is
// about 10 MB compressed and 60 MB uncompressed; the limits leave room for
// ten times that while keeping a hostile file (a gzip bomb expands 1000:1)
// from taking the machine's memory.
const (
	// MaxCompressed is the most bytes Read takes from its reader.
	MaxCompressed = 256 << 20
	// MaxUncompressed is the most bytes a gzip-compressed profile may
	// expand to.
	MaxUncompressed = 1 << 30
	// MaxMemory is the most memory a profile may take once parsed, as
	// estimated from its encoding before parsing (estimate.go): a million
	// tiny samples fit in 11 KB of gzip and take 174 MB parsed, so the
	// decompressed size alone does not bound memory. The yardstick profile
	// of 100,000 unique stacks is estimated at 130 MB (75 MB measured).
	MaxMemory = 4 << 30
)

// Limits bound what ReadLimited accepts. A zero field means Read's limit.
type Limits struct {
	Compressed   int64 // bytes taken from the reader (MaxCompressed)
	Uncompressed int64 // bytes gzip data may expand to (MaxUncompressed)
	Memory       int64 // estimated bytes of the parsed profile (MaxMemory)
}

func (l Limits) orDefaults() Limits {
	if l.Compressed <= 0 {
		l.Compressed = MaxCompressed
	}
	if l.Uncompressed <= 0 {
		l.Uncompressed = MaxUncompressed
	}
	if l.Memory <= 0 {
		l.Memory = MaxMemory
	}
	return l
}

// ErrNotProfile is returned (wrapped) by Read for input that is not a pprof
// profile.
var ErrNotProfile = errors.New("not a pprof profile")

// Read parses a pprof profile, gzip-compressed (.pb.gz, as Go writes them)
// or not, with bounded memory: it refuses input over MaxCompressed bytes,
// decompressed data over MaxUncompressed, and profiles that would take more
// than MaxMemory once parsed. Empty, truncated, corrupt or non-pprof input
// gives an error that says which, never a panic.
func Read(r io.Reader) (*profile.Profile, error) {
	return ReadLimited(r, Limits{})
}

// ReadLimited is Read with other limits: a server that holds several
// profiles at once, or parses what strangers upload, wants lower ones.
func ReadLimited(r io.Reader, l Limits) (*profile.Profile, error) {
	l = l.orDefaults()
	return read(r, l.Compressed, l.Uncompressed, l.Memory)
}

func read(r io.Reader, maxIn, maxOut, maxMem int64) (p *profile.Profile, err error) {
	data, err := io.ReadAll(io.LimitReader(r, maxIn+1))
	if err != nil {
		return nil, fmt.Errorf("reading profile: %w", err)
	}
	if int64(len(data)) > maxIn {
		return nil, fmt.Errorf("profile is larger than %d MiB", maxIn>>20)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("%w: the input is empty", ErrNotProfile)
	}
	if isGzip(data) {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("decompressing profile: %w", err)
		}
		var buf bytes.Buffer
		n, err := io.Copy(&buf, io.LimitReader(zr, maxOut+1))
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, fmt.Errorf("decompressing profile: truncated gzip data")
			}
			return nil, fmt.Errorf("decompressing profile: %w", err)
		}
		if n > maxOut {
			return nil, fmt.Errorf("profile is larger than %d MiB once decompressed (a gzip bomb?)", maxOut>>20)
		}
		data = buf.Bytes()
		if isGzip(data) {
			return nil, fmt.Errorf("%w: gzip inside gzip", ErrNotProfile)
		}
		if len(data) == 0 {
			return nil, fmt.Errorf("%w: the gzip data is empty", ErrNotProfile)
		}
	}
	est, ok := estimateMemory(data)
	if !ok {
		// Not protobuf: ParseData tries the legacy text formats, whose
		// lines become samples too (a 30-byte line, a 300-byte sample).
		est = 16 * int64(len(data))
	}
	if est > maxMem {
		return nil, fmt.Errorf("profile would take about %d MiB of memory once parsed, more than the limit of %d MiB (too many samples for its size: a crafted file?)", est>>20, maxMem>>20)
	}
	// The pprof decoder trusts lengths and indexes it reads; a hostile file
	// must be an error, not a crash of the whole run.
	defer func() {
		if e := recover(); e != nil {
			p, err = nil, fmt.Errorf("%w: corrupt data (%v)", ErrNotProfile, e)
		}
	}()
	// ParseData also accepts the legacy text formats (old heap and
	// contention profiles); the data is already decompressed, so it does not
	// expand anything unbounded.
	p, err = profile.ParseData(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotProfile, err)
	}
	if len(p.SampleType) == 0 {
		return nil, fmt.Errorf("%w: no sample types", ErrNotProfile)
	}
	return p, nil
}

func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// SampleIndex returns the index of the sample type named name in p
// ("cpu", "samples", "time", "delay", "contentions", "alloc_space", ...).
// An empty name picks p's default sample type, or else the last one (pprof's
// choice: for CPU and fgprof profiles it is the time in nanoseconds).
func SampleIndex(p *profile.Profile, name string) (int, error) {
	if len(p.SampleType) == 0 {
		return 0, fmt.Errorf("profile has no sample types")
	}
	if name == "" {
		name = p.DefaultSampleType
	}
	if name == "" {
		return len(p.SampleType) - 1, nil
	}
	var names []string
	for i, st := range p.SampleType {
		if st.Type == name {
			return i, nil
		}
		names = append(names, st.Type)
	}
	return 0, fmt.Errorf("no sample type %q in profile (have %v)", name, names)
}
