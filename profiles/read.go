package profiles

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/google/pprof/profile"
)

// Limits on what Read accepts: the same on every path that parses a
// profile (perflab flame, push, a Pyroscope answer, an upload to serve, a
// stored run's profile in serve), so that no path accepts what another
// refuses (issue 14: /pyroscope parsed with four times the upload's
// limits). A real profile of 100,000 unique stacks is about 6 MB
// compressed and 8 MB uncompressed; one of a million, 58 MB and 76 MB,
// decoded for drawing in 1 GB. The limits leave room for that while
// keeping a hostile file (a gzip bomb expands 1000:1) from taking the
// machine's memory.
const (
	// MaxCompressed is the most bytes Read takes from its reader.
	MaxCompressed = 256 << 20
	// MaxUncompressed is the most bytes a gzip-compressed profile may
	// expand to.
	MaxUncompressed = 256 << 20
	// MaxMemory is the most memory a profile may take once parsed, as
	// estimated from its encoding before parsing (estimate.go): a million
	// tiny samples fit in 11 KB of gzip and take 174 MB parsed, so the
	// decompressed size alone does not bound memory. The yardstick profile
	// of 100,000 unique stacks is estimated at 130 MB (75 MB measured).
	// The streaming decoder of package flame counts against the same
	// limit what it allocates.
	MaxMemory = 1 << 30
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

// ErrMemoryLimit is returned (wrapped) for a profile that would take more
// memory than Limits.Memory: a server that reserved less than the limit
// for it can try again with more.
var ErrMemoryLimit = errors.New("over the memory limit")

// memoryError says why a profile is refused; it is an ErrMemoryLimit.
type memoryError string

func (e memoryError) Error() string { return string(e) }
func (e memoryError) Unwrap() error { return ErrMemoryLimit }

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
	data, err := readAll(r, maxIn)
	if err == errTooLarge {
		return nil, fmt.Errorf("profile is larger than %d MiB", maxIn>>20)
	}
	if err != nil {
		return nil, fmt.Errorf("reading profile: %w", err)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("%w: the input is empty", ErrNotProfile)
	}
	if isGzip(data) {
		data, err = gunzip(data, maxOut)
		if err != nil {
			return nil, err
		}
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
		return nil, memoryError(fmt.Sprintf("profile would take about %d MiB of memory once parsed, more than the limit of %d MiB (too many samples for its size: a crafted file?)", est>>20, maxMem>>20))
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

// readAll reads r up to max+1 bytes into a buffer sized from the file's
// or the reader's length when it has one: io.ReadAll grows by doubling.
func readAll(r io.Reader, max int64) ([]byte, error) {
	size := int64(512)
	switch v := r.(type) {
	case interface{ Len() int }: // bytes.Reader, bytes.Buffer, strings.Reader
		size = int64(v.Len())
	case interface{ Stat() (os.FileInfo, error) }:
		if fi, err := v.Stat(); err == nil && fi.Mode().IsRegular() {
			size = fi.Size()
		}
	}
	data, over, err := readChunked(r, min(size, max)+1, max)
	if over {
		return nil, errTooLarge
	}
	return data, err
}

var errTooLarge = errors.New("too large")

// gunzip decompresses data, refusing more than max bytes of output. Its
// peak memory stays near max for a bomb and near the output for a real
// profile (issue 14: io.Copy into a bytes.Buffer peaked at 4.2 GB for a
// 1 GiB limit, by doubling): the gzip trailer's size of the input
// (ISIZE, modulo 4 GiB) sizes the buffer when it is within the limit, and
// a trailer that lies (a bomb's, a truncated file's) costs chunks, joined
// once at the end.
func gunzip(data []byte, max int64) ([]byte, error) {
	hint := int64(0)
	if len(data) >= 18 { // a header and a trailer
		hint = int64(binary.LittleEndian.Uint32(data[len(data)-4:]))
	}
	if hint > max {
		// Past the limit, or a truncated file's last bytes: the reading
		// will tell.
		hint = 64 << 10
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decompressing profile: %w", err)
	}
	out, over, err := readChunked(zr, hint+1, max)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("decompressing profile: truncated gzip data")
		}
		return nil, fmt.Errorf("decompressing profile: %w", err)
	}
	if over {
		return nil, fmt.Errorf("profile is larger than %d MiB once decompressed (a gzip bomb?)", max>>20)
	}
	return out, nil
}

// readChunked reads r to its end, or to more than limit bytes, into a first
// buffer of size bytes, then into chunks of up to 16 MiB sized not to pass
// limit+1, and returns it all as one slice: the first buffer itself when
// it held everything. Past limit bytes it stops, joins nothing and says so.
func readChunked(r io.Reader, size, limit int64) (_ []byte, over bool, _ error) {
	const chunk = 16 << 20
	bufs := [][]byte{make([]byte, 0, min(max(size, 512), limit+1))}
	total := int64(0)
	for total <= limit {
		b := &bufs[len(bufs)-1]
		if len(*b) == cap(*b) {
			bufs = append(bufs, make([]byte, 0, min(chunk, max(total, 64<<10), limit+1-total)))
			b = &bufs[len(bufs)-1]
		}
		n, err := r.Read((*b)[len(*b):cap(*b)])
		*b = (*b)[:len(*b)+n]
		total += int64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, false, err
		}
	}
	if total > limit {
		return nil, true, nil
	}
	if len(bufs) == 1 {
		return bufs[0], false, nil
	}
	out := make([]byte, 0, total)
	for i, b := range bufs {
		out = append(out, b...)
		bufs[i] = nil
	}
	return out, false, nil
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
	return 0, fmt.Errorf("no sample type %q in profile (it has %s)", name, strings.Join(names, ", "))
}
