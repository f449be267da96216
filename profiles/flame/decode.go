package flame

// A streaming pprof decoder (issue 13). It reads the protobuf encoding of
// profile.proto field by field from the gzip stream, holding one message at
// a time, and appends straight into a Source's flat arrays: no
// profile.Profile, no per-sample objects, no maps per frame. The wire
// format is decoded by hand: pprof needs varints and length-delimited
// fields only, and the ten lines it takes keep the module free of a
// protobuf dependency.
//
// It accepts what profile.Parse accepts and checks what profile.CheckValid
// checks that matters for drawing (sample values against sample types,
// locations and functions named by samples and lines exist, ids are not 0
// or repeated, string indexes are in the table); FuzzReadSource holds it
// to the same stacks and totals as profile.Parse. The legacy text formats
// (old heap and contention profiles) go through profiles.ReadLimited.

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/profiles"
)

// Costs of the streaming path per item, in bytes, for the memory budget:
// what the Source holds and what drawing it adds (the stack buffer and the
// tree's nodes, at most one per frame of a sample).
const (
	costFrameRef  = 4 + 4 + 18 // location index; its name in the stack buffer; a node
	costSampleRow = 4 + 4 + 8 + 1 + 16
	costValue     = 8
	costLocEntry  = 24
	costFuncEntry = 16
	// costLabel is a string label kept until the string table is read
	// (issue 26: 100,000 samples of 64 labels were not counted, and 32
	// uploads of a 172 KB profile took 10.2 GB against a 2 GiB budget).
	costLabel = 24
	// costInline is each frame a location adds past its first, in every
	// sample that refers to it: its name in the stack buffer and a node
	// (issue 26: one location with a million inlined frames).
	costInline = 4 + 18
	// costLine is a location's line: its function id, and its name index
	// in the Source.
	costLine = 8 + 4
)

// ReadSource reads a pprof profile (gzip-compressed or not) for drawing,
// with the limits of profiles.ReadLimited: at most l.Compressed bytes from
// r, gzip data expanding to at most l.Uncompressed bytes, and at most
// l.Memory bytes for the decoded profile and the graphs drawn from it,
// counted as they are allocated, so a crafted file of millions of tiny
// samples is refused before it takes the memory (the budget counts what
// this path allocates, a fraction of profile.Parse's; profiles' estimate
// bounds the other path).
func ReadSource(r io.Reader, l profiles.Limits) (*Source, error) {
	l = limitsOrDefaults(l)
	in := &countingReader{r: r, max: l.Compressed}
	br := bufio.NewReaderSize(in, 256<<10)
	head, err := br.Peek(2)
	if len(head) == 0 {
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("reading profile: %w", err)
		}
		return nil, fmt.Errorf("%w: the input is empty", profiles.ErrNotProfile)
	}
	var body *bufio.Reader
	var out *countingReader
	if len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("decompressing profile: %w", err)
		}
		out = &countingReader{r: zr, max: l.Uncompressed, gz: true}
		body = bufio.NewReaderSize(out, 256<<10)
		h, err := body.Peek(2)
		switch {
		case len(h) == 0 && (err == nil || err == io.EOF):
			return nil, fmt.Errorf("%w: the gzip data is empty", profiles.ErrNotProfile)
		case len(h) == 2 && h[0] == 0x1f && h[1] == 0x8b:
			return nil, fmt.Errorf("%w: gzip inside gzip", profiles.ErrNotProfile)
		case err != nil && err != io.EOF:
			return nil, decompressErr(in, out, err)
		}
	} else {
		body = br
	}
	if first, _ := body.Peek(1); len(first) == 1 && !protoStart(first[0]) {
		return legacy(body, in, out, l)
	}
	d := &decoder{r: body, budget: l.Memory}
	if err := d.profile(); err != nil {
		if e := decompressErr(in, out, err); e != nil {
			return nil, e
		}
		var be *budgetError
		if errors.As(err, &be) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %v", profiles.ErrNotProfile, err)
	}
	return d.finish()
}

func limitsOrDefaults(l profiles.Limits) profiles.Limits {
	if l.Compressed <= 0 {
		l.Compressed = profiles.MaxCompressed
	}
	if l.Uncompressed <= 0 {
		l.Uncompressed = profiles.MaxUncompressed
	}
	if l.Memory <= 0 {
		l.Memory = profiles.MaxMemory
	}
	return l
}

// protoStart reports whether b can begin a Profile message: a tag of one of
// its fields 1–15 with the right wire type.
func protoStart(b byte) bool {
	field, wire := b>>3, b&7
	switch field {
	case 1, 2, 3, 4, 5, 6, 11:
		return wire == 2
	case 7, 8, 9, 10, 12, 14, 15:
		return wire == 0
	case 13:
		return wire == 0 || wire == 2
	}
	return false
}

// legacy reads the rest of the input and parses it with profiles.ReadLimited,
// which knows the legacy text formats.
func legacy(body *bufio.Reader, in, out *countingReader, l profiles.Limits) (*Source, error) {
	data, err := io.ReadAll(body)
	if err != nil {
		if e := decompressErr(in, out, err); e != nil {
			return nil, e
		}
		return nil, fmt.Errorf("reading profile: %w", err)
	}
	p, err := profiles.ReadLimited(bytes.NewReader(data), profiles.Limits{Compressed: int64(len(data)) + 1, Uncompressed: l.Uncompressed, Memory: l.Memory})
	if err != nil {
		return nil, err
	}
	return sourceOf(p), nil
}

// decompressErr turns an error met while reading into what
// profiles.ReadLimited would say, or returns nil if it is not a reading
// error.
func decompressErr(in, out *countingReader, err error) error {
	switch {
	case in.over:
		return fmt.Errorf("profile is larger than %d MiB", in.max>>20)
	case out != nil && out.over:
		return fmt.Errorf("profile is larger than %d MiB once decompressed (a gzip bomb?)", out.max>>20)
	case out != nil && (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(out.err, io.ErrUnexpectedEOF)):
		return fmt.Errorf("decompressing profile: truncated gzip data")
	case out != nil && out.err != nil:
		return fmt.Errorf("decompressing profile: %w", out.err)
	case in.err != nil:
		return fmt.Errorf("reading profile: %w", in.err)
	}
	return nil
}

// countingReader fails once more than max bytes were read, and remembers
// the error of the reader under it.
type countingReader struct {
	r    io.Reader
	n    int64
	max  int64
	over bool
	gz   bool
	err  error
}

var errOverLimit = errors.New("over the limit")

func (c *countingReader) Read(p []byte) (int, error) {
	if c.n > c.max {
		c.over = true
		return 0, errOverLimit
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.max {
		c.over = true
		return n, errOverLimit
	}
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}

// idTable maps pprof ids to dense indexes: a slice for the small ids
// every profile writer uses, a map for the rest.
type idTable struct {
	dense []int32 // index+1; 0 absent
	far   map[uint64]int32
}

// put records id at idx, false if id is taken. Ids up to twice the
// entries so far (plus some) are dense: writers number from 1, and a
// crafted file's huge ids cost a map entry, not a huge slice.
func (t *idTable) put(id uint64, idx int32) (dup bool) {
	if _, ok := t.get(id); ok {
		return true
	}
	if id < uint64(2*int64(idx)+65536) {
		if id >= uint64(len(t.dense)) {
			t.dense = append(t.dense, make([]int32, int(id)+1-len(t.dense)+len(t.dense)/2)...)
		}
		t.dense[id] = idx + 1
		return false
	}
	if t.far == nil {
		t.far = map[uint64]int32{}
	}
	t.far[id] = idx
	return false
}

func (t *idTable) get(id uint64) (int32, bool) {
	if id < uint64(len(t.dense)) && t.dense[id] != 0 {
		return t.dense[id] - 1, true
	}
	i, ok := t.far[id]
	return i, ok
}

// decoder holds the undecoded references (ids, string indexes) until the
// whole profile is read: the string table usually comes last.
type decoder struct {
	r      *bufio.Reader
	msg    []byte
	budget int64
	used   int64

	strs   []byte  // string arena
	strEnd []int32 // string i is strs[strEnd[i-1]:strEnd[i]]
	maxStr int64   // largest string index referred to
	// single holds the last value of the profile's singular string
	// fields (drop_frames 7, keep_frames 8, default_sample_type 14,
	// doc_url 15), by field number.
	single [16]int64
	first  bool // a string was read

	sampleTypes [][2]int64
	defaultType int64
	periodType  [2]int64
	period      int64
	timeNanos   int64

	// Per sample, in chunks so that growing them never copies: a million
	// stacks hold 35M location ids, and doubling a slice of them was most
	// of the decoder's time.
	locIDs  chunks[uint32] // location ids, leaf first; see bigID
	bigIDs  []uint64
	start   chunks[int32]
	vals    chunks[int64]
	nvals   []int32          // values per sample
	labels  chunks[[3]int64] // sample, key, str of string labels
	mapping idTable
	nmaps   int32

	funcs    idTable
	funcName []int64

	locs     idTable
	locAddr  []uint64
	lineFn   []uint64 // per location its lines' function ids, leaf first
	lineFrom []int32
}

var (
	errVarint = errors.New("bad varint")
	errType   = errors.New("type mismatch")
	errShort  = errors.New("not enough data")
)

// budgetError refuses a profile that would take more memory than allowed.
type budgetError struct{ used, limit int64 }

func (e *budgetError) Unwrap() error { return profiles.ErrMemoryLimit }

func (e *budgetError) Error() string {
	return fmt.Sprintf("profile would take about %d MiB of memory to draw, more than the limit of %d MiB (too many samples for its size: a crafted file?)", e.used>>20, e.limit>>20)
}

func (d *decoder) spend(n int64) error {
	d.used += n
	if d.used > d.budget {
		return &budgetError{d.used, d.budget}
	}
	return nil
}

// profile reads the top-level message from the stream.
func (d *decoder) profile() error {
	for {
		key, err := readUvarint(d.r)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		field, wire := key>>3, key&7
		var u uint64
		var body []byte
		switch wire {
		case 0:
			if u, err = readUvarint(d.r); err != nil {
				return eof(err)
			}
		case 1, 5:
			n := 8
			if wire == 5 {
				n = 4
			}
			if _, err := d.r.Discard(n); err != nil {
				return eof(err)
			}
		case 2:
			n, err := readUvarint(d.r)
			if err != nil {
				return eof(err)
			}
			if n > math.MaxInt32 {
				return errors.New("too much data")
			}
			if int(n) > cap(d.msg) {
				d.msg = make([]byte, n, max(int(n), 2*cap(d.msg)))
			}
			body = d.msg[:n]
			if _, err := io.ReadFull(d.r, body); err != nil {
				if err == io.ErrUnexpectedEOF || err == io.EOF {
					return errors.New("too much data")
				}
				return err
			}
		default:
			return fmt.Errorf("unknown wire type: %d", wire)
		}
		if err := d.field(field, wire, u, body); err != nil {
			return err
		}
	}
}

func eof(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errVarint
	}
	return err
}

func (d *decoder) field(field, wire, u uint64, body []byte) error {
	need := func(w uint64) error {
		if wire != w {
			return errType
		}
		return nil
	}
	switch field {
	case 1: // sample_type
		if err := need(2); err != nil {
			return err
		}
		vt, err := d.valueType(body)
		d.sampleTypes = append(d.sampleTypes, vt)
		return err
	case 2:
		if err := need(2); err != nil {
			return err
		}
		return d.sample(body)
	case 3:
		if err := need(2); err != nil {
			return err
		}
		return d.mappingMsg(body)
	case 4:
		if err := need(2); err != nil {
			return err
		}
		return d.location(body)
	case 5:
		if err := need(2); err != nil {
			return err
		}
		return d.function(body)
	case 6:
		if err := need(2); err != nil {
			return err
		}
		if !d.first && len(body) != 0 {
			return errors.New("string_table[0] must be ''")
		}
		d.first = true
		// The arena's growth is what it takes: appending doubles it
		// (a table of long label values held twice its bytes).
		was := cap(d.strs) + 4*cap(d.strEnd)
		d.strs = append(d.strs, body...)
		d.strEnd = append(d.strEnd, int32(len(d.strs)))
		if err := d.spend(int64(cap(d.strs) + 4*cap(d.strEnd) - was)); err != nil {
			return err
		}
		return nil
	case 7, 8, 14, 15: // drop_frames, keep_frames, default_sample_type, doc_url
		if err := need(0); err != nil {
			return err
		}
		// The last of each counts (see valueType): checked in finish.
		d.single[field] = int64(u)
		if field == 14 {
			d.defaultType = int64(u)
		}
	case 9:
		if err := need(0); err != nil {
			return err
		}
		if d.timeNanos != 0 {
			return errors.New("concatenated profiles detected")
		}
		d.timeNanos = int64(u)
	case 10, 12:
		if err := need(0); err != nil {
			return err
		}
		if field == 12 {
			d.period = int64(u)
		}
	case 11:
		if err := need(2); err != nil {
			return err
		}
		vt, err := d.valueType(body)
		d.periodType = vt
		return err
	case 13: // comments
		if wire == 0 {
			d.ref(int64(u))
			return nil
		}
		if err := need(2); err != nil {
			return err
		}
		for len(body) > 0 {
			v, n := uvarint(body)
			if n <= 0 {
				return errVarint
			}
			d.ref(int64(v))
			body = body[n:]
		}
	}
	return nil
}

func (d *decoder) ref(i int64) {
	if i < 0 {
		d.maxStr = math.MaxInt64
	} else if i > d.maxStr {
		d.maxStr = i
	}
}

// fields calls fn for each field of a message.
func fields(b []byte, fn func(field, wire, u uint64, body []byte) error) error {
	for len(b) > 0 {
		key, n := uvarint(b)
		if n <= 0 {
			return errVarint
		}
		b = b[n:]
		field, wire := key>>3, key&7
		var u uint64
		var body []byte
		switch wire {
		case 0:
			if u, n = uvarint(b); n <= 0 {
				return errVarint
			}
			b = b[n:]
		case 1:
			if len(b) < 8 {
				return errShort
			}
			b = b[8:]
		case 5:
			if len(b) < 4 {
				return errShort
			}
			b = b[4:]
		case 2:
			l, n := uvarint(b)
			if n <= 0 {
				return errVarint
			}
			b = b[n:]
			if l > uint64(len(b)) {
				return errors.New("too much data")
			}
			body, b = b[:l], b[l:]
		default:
			return fmt.Errorf("unknown wire type: %d", wire)
		}
		if err := fn(field, wire, u, body); err != nil {
			return err
		}
	}
	return nil
}

// varints calls fn for a repeated varint field, packed or not.
func varints(wire, u uint64, body []byte, fn func(uint64)) error {
	switch wire {
	case 0:
		fn(u)
		return nil
	case 2:
		for len(body) > 0 {
			v, n := uvarint(body)
			if n <= 0 {
				return errVarint
			}
			fn(v)
			body = body[n:]
		}
		return nil
	}
	return errType
}

func (d *decoder) valueType(b []byte) ([2]int64, error) {
	var vt [2]int64
	err := fields(b, func(field, wire, u uint64, _ []byte) error {
		if field == 1 || field == 2 {
			if wire != 0 {
				return errType
			}
			vt[field-1] = int64(u)
		}
		return nil
	})
	// A field given twice keeps its last value, as pprof's decoder does,
	// so only the last is a reference to check.
	d.ref(vt[0])
	d.ref(vt[1])
	return vt, err
}

// bigID marks a location id stored in bigIDs: ids are small in every
// writer we know, but the format allows 64 bits.
const bigID = 1 << 31

func (d *decoder) addLocID(v uint64) {
	if v >= bigID {
		d.locIDs.add(uint32(bigID | len(d.bigIDs)))
		d.bigIDs = append(d.bigIDs, v)
		return
	}
	d.locIDs.add(uint32(v))
}

// addLocIDs is addLocID for a packed field, the usual encoding, with the
// loop in one place: through varints' callback it was a tenth of drawing a
// million stacks.
func (d *decoder) addLocIDs(body []byte) error {
	c := &d.locIDs
	for len(body) > 0 {
		v, n := uvarint(body)
		if n <= 0 {
			return errVarint
		}
		body = body[n:]
		if v >= bigID || len(c.c) == 0 || len(c.c[len(c.c)-1]) == cap(c.c[len(c.c)-1]) {
			d.addLocID(v)
			continue
		}
		last := &c.c[len(c.c)-1]
		*last = append(*last, uint32(v))
		c.n++
	}
	return nil
}

func (d *decoder) sample(b []byte) error {
	k := int32(d.start.n)
	if d.locIDs.n >= math.MaxInt32 || len(d.bigIDs) >= bigID-1 {
		return errors.New("too many frames")
	}
	d.start.add(int32(d.locIDs.n))
	from, nv := d.locIDs.n, d.vals.n
	err := fields(b, func(field, wire, u uint64, body []byte) error {
		switch field {
		case 1:
			if wire == 2 {
				return d.addLocIDs(body)
			}
			return varints(wire, u, body, d.addLocID)
		case 2:
			return varints(wire, u, body, func(v uint64) { d.vals.add(int64(v)) })
		case 3:
			if wire != 2 {
				return errType
			}
			var key, str, num, unit int64
			err := fields(body, func(field, wire, u uint64, _ []byte) error {
				if field >= 1 && field <= 4 {
					if wire != 0 {
						return errType
					}
					switch field {
					case 1:
						key = int64(u)
					case 2:
						str = int64(u)
					case 3:
						num = int64(u)
					case 4:
						unit = int64(u)
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			// postDecode resolves the key always, the string or the unit
			// when they are set.
			d.ref(key)
			if str != 0 {
				d.ref(str)
				d.labels.add([3]int64{int64(k), key, str})
				if err := d.spend(costLabel); err != nil {
					return err
				}
			} else if num != 0 || unit != 0 {
				d.ref(unit)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	d.nvals = append(d.nvals, int32(d.vals.n-nv))
	if d.vals.n > math.MaxInt32 {
		return errors.New("too many values")
	}
	return d.spend(costSampleRow + costFrameRef*int64(d.locIDs.n-from) + costValue*int64(d.vals.n-nv))
}

func (d *decoder) mappingMsg(b []byte) error {
	var id uint64
	var strs [2]int64 // filename, build_id: the last of each counts
	err := fields(b, func(field, wire, u uint64, _ []byte) error {
		if field >= 1 && field <= 10 {
			if wire != 0 {
				return errType
			}
			switch field {
			case 1:
				id = u
			case 5, 6:
				strs[field-5] = int64(u)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	d.ref(strs[0])
	d.ref(strs[1])
	if id == 0 {
		return errors.New("found mapping with reserved ID=0")
	}
	if d.mapping.put(id, d.nmaps) {
		return fmt.Errorf("multiple mappings with same id: %d", id)
	}
	d.nmaps++
	return d.spend(costFuncEntry)
}

func (d *decoder) function(b []byte) error {
	var id uint64
	var name int64
	var other [2]int64 // system_name, filename
	err := fields(b, func(field, wire, u uint64, _ []byte) error {
		if field >= 1 && field <= 5 {
			if wire != 0 {
				return errType
			}
			switch field {
			case 1:
				id = u
			case 2:
				name = int64(u)
			case 3, 4:
				other[field-3] = int64(u)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// The last of each field counts (see valueType).
	d.ref(name)
	d.ref(other[0])
	d.ref(other[1])
	if id == 0 {
		return errors.New("found function with reserved ID=0")
	}
	if d.funcs.put(id, int32(len(d.funcName))) {
		return fmt.Errorf("multiple functions with same id: %d", id)
	}
	d.funcName = append(d.funcName, name)
	return d.spend(costFuncEntry)
}

func (d *decoder) location(b []byte) error {
	var id, addr uint64
	from := len(d.lineFn)
	err := fields(b, func(field, wire, u uint64, body []byte) error {
		switch field {
		case 1, 2, 3, 5:
			if wire != 0 {
				return errType
			}
			switch field {
			case 1:
				id = u
			case 3:
				addr = u
			}
		case 4:
			if wire != 2 {
				return errType
			}
			var fn uint64
			err := fields(body, func(field, wire, u uint64, _ []byte) error {
				if field >= 1 && field <= 3 {
					if wire != 0 {
						return errType
					}
					if field == 1 {
						fn = u
					}
				}
				return nil
			})
			d.lineFn = append(d.lineFn, fn)
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	if id == 0 {
		return errors.New("found location with reserved id=0")
	}
	if d.locs.put(id, int32(len(d.locAddr))) {
		return fmt.Errorf("multiple locations with same id: %d", id)
	}
	d.locAddr = append(d.locAddr, addr)
	d.lineFrom = append(d.lineFrom, int32(from))
	return d.spend(costLocEntry + costLine*int64(len(d.lineFn)-from))
}

func (d *decoder) str(i int64) string {
	from := int32(0)
	if i > 0 {
		from = d.strEnd[i-1]
	}
	return string(d.strs[from:d.strEnd[i]])
}

// finish resolves ids and string indexes into a Source.
func (d *decoder) finish() (*Source, error) {
	for _, i := range d.single {
		d.ref(i)
	}
	if !d.first || d.maxStr >= int64(len(d.strEnd)) {
		return nil, fmt.Errorf("%w: malformed profile format", profiles.ErrNotProfile)
	}
	s := &Source{period: d.period, defaultType: d.str(d.defaultType)}
	for _, vt := range d.sampleTypes {
		s.sampleTypes = append(s.sampleTypes, profile.ValueType{Type: d.str(vt[0]), Unit: d.str(vt[1])})
	}
	s.periodType = profile.ValueType{Type: d.str(d.periodType[0]), Unit: d.str(d.periodType[1])}
	nt := len(s.sampleTypes)
	if nt == 0 {
		if d.start.n > 0 {
			return nil, fmt.Errorf("%w: malformed profile: missing sample type information", profiles.ErrNotProfile)
		}
		return nil, fmt.Errorf("%w: no sample types", profiles.ErrNotProfile)
	}
	for _, n := range d.nvals {
		if int(n) != nt {
			return nil, fmt.Errorf("%w: malformed profile: mismatch: sample has %d values vs. %d types", profiles.ErrNotProfile, n, nt)
		}
	}
	// Names: one per function, interned, then one list per location.
	ids := map[string]int32{}
	intern := func(name string) int32 {
		if id, ok := ids[name]; ok {
			return id
		}
		id := int32(len(s.names))
		s.names = append(s.names, name)
		ids[name] = id
		return id
	}
	fnName := make([]int32, len(d.funcName))
	for i, x := range d.funcName {
		fnName[i] = -1
		if x != 0 { // an empty name: the location is named by its address
			fnName[i] = intern(d.str(x))
		}
	}
	d.lineFrom = append(d.lineFrom, int32(len(d.lineFn)))
	s.locStart = make([]int32, 0, len(d.locAddr)+1)
	s.locNames = make([]int32, 0, len(d.lineFn))
	for l := range d.locAddr {
		s.locStart = append(s.locStart, int32(len(s.locNames)))
		lines := d.lineFn[d.lineFrom[l]:d.lineFrom[l+1]]
		if len(lines) == 0 {
			s.locNames = append(s.locNames, intern(addrName(d.locAddr[l])))
			continue
		}
		for j := len(lines) - 1; j >= 0; j-- { // caller first
			f, ok := d.funcs.get(lines[j])
			if !ok {
				return nil, fmt.Errorf("%w: malformed profile: location has a line with an unknown function %d", profiles.ErrNotProfile, lines[j])
			}
			name := fnName[f]
			if name < 0 {
				name = intern(addrName(d.locAddr[l]))
			}
			s.locNames = append(s.locNames, name)
		}
	}
	s.locStart = append(s.locStart, int32(len(s.locNames)))
	// Samples: location ids to indexes, a chunk at a time, each dropped
	// once done.
	s.locs = make([]int32, 0, d.locIDs.n)
	var inlined int64 // frames past each location's first, over all samples
	for c, chunk := range d.locIDs.c {
		for _, x := range chunk {
			id := uint64(x)
			if x&bigID != 0 {
				id = d.bigIDs[x&^bigID]
			}
			l, ok := d.locs.get(id)
			if !ok {
				return nil, fmt.Errorf("%w: malformed profile: sample has an unknown location %d", profiles.ErrNotProfile, id)
			}
			s.locs = append(s.locs, l)
			inlined += int64(s.locStart[l+1]-s.locStart[l]) - 1
		}
		d.locIDs.c[c] = nil
		// Checked a chunk at a time: a stack's frames are not known until
		// its locations are, and those come after the samples.
		if err := d.spend(costInline * max(inlined, 0)); err != nil {
			return nil, err
		}
		inlined = 0
	}
	n := d.start.n
	s.start = d.start.flat(1)
	s.start = append(s.start, int32(len(s.locs)))
	s.vals = d.vals.flat(0)
	s.state = make([]uint8, n)
	s.allState = n > 0
	if d.labels.n > 0 {
		none := profiles.StateFrame(profiles.Other, "running, no CPU samples")
		noneID, hasNone := ids[none]
		seen := make([]bool, n)
		// Keys are compared by index, each looked up once: a label's key
		// string read per label was millions of small allocations.
		isState := map[int64]bool{}
		for _, chunk := range d.labels.c {
			for _, lb := range chunk {
				k := lb[0]
				st, ok := isState[lb[1]]
				if !ok {
					st = d.str(lb[1]) == "state"
					isState[lb[1]] = st
				}
				if seen[k] || !st {
					continue
				}
				seen[k] = true
				s.state[k] = stateOther
				if d.str(lb[2]) == "running" {
					s.state[k] = stateRunning
					if from, to := s.start[k], s.start[k+1]; hasNone && to > from {
						if l := s.locs[from]; s.locStart[l+1] > s.locStart[l] && s.locNames[s.locStart[l+1]-1] == noneID {
							s.state[k] = stateRunningNoCPU
						}
					}
				}
			}
		}
		for _, ok := range seen {
			s.allState = s.allState && ok
		}
	} else {
		s.allState = false
	}
	return s, nil
}

// readUvarint reads a protobuf varint of at most 10 bytes.
func readUvarint(r *bufio.Reader) (uint64, error) {
	var v uint64
	for i := 0; i < 10; i++ {
		b, err := r.ReadByte()
		if err != nil {
			if i > 0 && err == io.EOF {
				return 0, errVarint
			}
			return 0, err
		}
		v |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			return v, nil
		}
	}
	return 0, errVarint
}

// uvarint decodes a protobuf varint; n <= 0 means the data ends inside it
// or it is longer than 10 bytes.
func uvarint(b []byte) (v uint64, n int) {
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

// chunks is an append-only sequence stored in blocks, so that growing it
// never copies what it holds.
type chunks[T any] struct {
	c [][]T
	n int
}

const chunkLen = 1 << 16

func (c *chunks[T]) add(x T) {
	if len(c.c) == 0 || len(c.c[len(c.c)-1]) == cap(c.c[len(c.c)-1]) {
		// Small first blocks keep small profiles small.
		size := min(chunkLen, max(256, c.n))
		c.c = append(c.c, make([]T, 0, size))
	}
	last := &c.c[len(c.c)-1]
	*last = append(*last, x)
	c.n++
}

// flat returns the elements as one slice with room for extra more.
func (c *chunks[T]) flat(extra int) []T {
	out := make([]T, 0, c.n+extra)
	for _, b := range c.c {
		out = append(out, b...)
	}
	c.c = nil
	return out
}
