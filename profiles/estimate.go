package profiles

// Parsed profiles take much more memory than their encoding: a sample is a
// few bytes on the wire and about 170 bytes once parsed, a location id one
// byte and 16. A hostile file of a million tiny samples is 7 MB raw, 11 KB
// gzipped, and 174 MB parsed (measured with pprof's parser on Go 1.26), so
// a limit on the decompressed size alone lets a small upload take
// gigabytes. estimateMemory scans the protobuf's framing, without decoding
// it, and returns an upper estimate of what profile.ParseData will
// allocate, so that Read can refuse before parsing.

// Costs per item, rounded up from what pprof's parser allocates on Go 1.26
// (structs, slice growth, the maps of labelled samples).
const (
	costSample   = 256 // Sample struct, its slices, the []*Sample entry
	costVarint   = 24  // per number inside a sample: location ids (id + pointer), values, label fields
	costLabel    = 256 // per label: the label maps' entries and buckets (measured 690 MB for 1M samples of 2 labels)
	costLocation = 160 // Location struct and its []*Location entry
	costLine     = 48  // per number inside a location (its lines)
	costMessage  = 192 // Function, Mapping, ValueType structs
	costString   = 32  // string header and slice entry, plus the bytes
)

// estimateMemory returns the estimated bytes that parsing data takes, and
// false if data is not framed as a protobuf (pprof then tries the legacy
// text formats, which are estimated by the caller).
func estimateMemory(data []byte) (int64, bool) {
	est := int64(len(data)) // the parser keeps the input while it decodes
	for i := 0; i < len(data); {
		key, n := uvarint(data[i:])
		if n <= 0 {
			return 0, false
		}
		i += n
		field, wire := key>>3, key&7
		switch wire {
		case 0: // varint
			_, n := uvarint(data[i:])
			if n <= 0 {
				return 0, false
			}
			i += n
			est += 8
		case 1: // 64-bit
			i += 8
			est += 8
		case 5: // 32-bit
			i += 4
			est += 8
		case 2: // length-delimited
			l, n := uvarint(data[i:])
			if n <= 0 || l > uint64(len(data)-i-n) {
				return 0, false
			}
			i += n
			body := data[i : i+int(l)]
			i += int(l)
			switch field {
			case 2: // sample
				est += costSample + costVarint*varintEnds(body) + costLabel*labels(body)
			case 4: // location
				est += costLocation + costLine*varintEnds(body)
			case 6: // string_table
				est += costString + int64(len(body))
			default: // sample_type, mapping, function, period_type
				est += costMessage + 8*int64(len(body))
			}
		default:
			return 0, false
		}
		if i > len(data) {
			return 0, false
		}
	}
	return est, true
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

// labels counts the label fields (3) of a sample message; framing it
// cannot read counts as none (the parser will reject it anyway).
func labels(b []byte) int64 {
	var n int64
	for i := 0; i < len(b); {
		key, k := uvarint(b[i:])
		if k <= 0 {
			return n
		}
		i += k
		switch key & 7 {
		case 0:
			_, k := uvarint(b[i:])
			if k <= 0 {
				return n
			}
			i += k
		case 2:
			l, k := uvarint(b[i:])
			if k <= 0 || l > uint64(len(b)-i-k) {
				return n
			}
			i += k + int(l)
			if key>>3 == 3 {
				n++
			}
		default:
			return n
		}
	}
	return n
}

// varintEnds counts the bytes of b that can end a varint: an upper bound
// on the numbers (ids, values, keys, lengths) a message holds.
func varintEnds(b []byte) int64 {
	var n int64
	for _, c := range b {
		if c < 0x80 {
			n++
		}
	}
	return n
}
