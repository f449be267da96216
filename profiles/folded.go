package profiles

import (
	"bufio"
	"errors"
	"fmt"
	"github.com/perflab/perflab/internal/textsafe"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/pprof/profile"
)

// MaxFolded is the most bytes WriteFolded writes: the folded stacks of a
// real profile of a million unique stacks are about 3 GB, but a profile of
// 1.2 KB whose one function has a 1 MiB name, 2,000 levels deep, would
// make one line of 2 GB (issue 14). Over the limit, nothing is written.
const MaxFolded = 1 << 30

// ErrFoldedTooLarge is returned (wrapped) when folded stacks would take
// more than their limit.
var ErrFoldedTooLarge = errors.New("folded stacks too large")

// WriteFolded writes p's samples as folded stacks, the format of Brendan
// Gregg's stackcollapse scripts that flamegraph.pl and speedscope read: one
// line per distinct stack in the order first seen, "root;caller;leaf
// value", inlined functions expanded. Samples with a zero value are left
// out. Semicolons and line breaks in names, which would break the format,
// become underscores. It refuses, before writing anything, output of more
// than MaxFolded bytes.
func WriteFolded(w io.Writer, p *profile.Profile, sampleIndex int) error {
	ids := map[string]int32{}
	var names []string
	locIDs := map[*profile.Location][]int32{}
	f := &Folded{}
	var stack []int32
	for _, s := range p.Sample {
		if sampleIndex < 0 || sampleIndex >= len(s.Value) || s.Value[sampleIndex] == 0 {
			continue
		}
		stack = stack[:0]
		for i := len(s.Location) - 1; i >= 0; i-- {
			loc := s.Location[i]
			lids, ok := locIDs[loc]
			if !ok {
				fn := FrameNames(loc)
				for j := len(fn) - 1; j >= 0; j-- {
					id, ok := ids[fn[j]]
					if !ok {
						id = int32(len(names))
						names = append(names, fn[j])
						ids[fn[j]] = id
					}
					lids = append(lids, id)
				}
				locIDs[loc] = lids
			}
			stack = append(stack, lids...)
		}
		f.Add(stack, s.Value[sampleIndex])
	}
	return f.Write(w, names, MaxFolded)
}

// Folded gathers distinct stacks and their sums for folded output, each
// stack a sequence of name ids, root first: its memory is one id per
// frame of a distinct stack, whatever the names' lengths, where a map of
// lines held every line whole.
type Folded struct {
	buf   []int32 // the stacks' ids, one after another
	start []int32 // stack k is buf[start[k]:start[k]+n[k]]
	n     []int32
	sums  []int64
	next  []int32 // the next stack of the same hash, -1 for none
	first map[uint64]int32
}

// Add adds v to stack's sum (stack is copied); a zero v is left out.
func (f *Folded) Add(stack []int32, v int64) {
	if v == 0 {
		return
	}
	if f.first == nil {
		f.first = map[uint64]int32{}
	}
	h := uint64(14695981039346656037)
	for _, id := range stack {
		h ^= uint64(uint32(id))
		h *= 1099511628211
		h ^= h >> 29
	}
	k, ok := f.first[h]
	if !ok {
		f.first[h] = f.add(stack, v, -1)
		return
	}
	for ; k >= 0; k = f.next[k] {
		if f.equal(k, stack) {
			f.sums[k] += v
			return
		}
	}
	f.first[h] = f.add(stack, v, f.first[h])
}

func (f *Folded) add(stack []int32, v int64, next int32) int32 {
	k := int32(len(f.sums))
	f.start = append(f.start, int32(len(f.buf)))
	f.n = append(f.n, int32(len(stack)))
	f.buf = append(f.buf, stack...)
	f.sums = append(f.sums, v)
	f.next = append(f.next, next)
	return k
}

func (f *Folded) equal(k int32, stack []int32) bool {
	if int(f.n[k]) != len(stack) {
		return false
	}
	for i, id := range f.buf[f.start[k] : f.start[k]+f.n[k]] {
		if stack[i] != id {
			return false
		}
	}
	return true
}

// Write writes the stacks in the order first added, naming id i names[i].
// It computes the output's size first and writes nothing if it is over
// limit bytes.
func (f *Folded) Write(w io.Writer, names []string, limit int64) error {
	clean := make([]string, len(names))
	for i, n := range names {
		clean[i] = FoldedName(n)
	}
	size := int64(0)
	for k, v := range f.sums {
		ids := f.buf[f.start[k] : f.start[k]+f.n[k]]
		size += int64(len(ids)) + int64(len(strconv.FormatInt(v, 10))) + 1
		for _, id := range ids {
			size += int64(len(clean[id]))
		}
		if size > limit {
			return fmt.Errorf("%w: they would be more than %d MiB (a profile with huge names or stacks: a crafted file?)", ErrFoldedTooLarge, limit>>20)
		}
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	var num [24]byte
	for k, v := range f.sums {
		for i, id := range f.buf[f.start[k] : f.start[k]+f.n[k]] {
			if i > 0 {
				bw.WriteByte(';')
			}
			bw.WriteString(clean[id])
		}
		bw.WriteByte(' ')
		bw.Write(strconv.AppendInt(num[:0], v, 10))
		if err := bw.WriteByte('\n'); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// FoldedName returns name with the folded format's separators (';', and
// the space before the count matters only at the end, but flamegraph.pl
// splits on the last space, so spaces are kept), line breaks and every
// other control character replaced by '_': C0 and DEL, C1 (as UTF-8 and as
// the stray bytes 0x80–0x9f an 8-bit terminal reads as controls) and the
// bidirectional overrides. Folded stacks go to terminals (flame --format
// folded with no -o), and a name from a hostile profile must not retitle
// one or move its cursor. Other invalid UTF-8 stays as it is.
func FoldedName(name string) string {
	clean := true
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c == ';' || c >= 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return name
	}
	var b strings.Builder
	b.Grow(len(name))
	for i := 0; i < len(name); {
		r, n := utf8.DecodeRuneInString(name[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			if c := name[i]; c >= 0x80 && c <= 0x9f {
				b.WriteByte('_')
			} else {
				b.WriteByte(c)
			}
		case r == ';' || textsafe.Control(r):
			b.WriteByte('_')
		default:
			b.WriteString(name[i : i+n])
		}
		i += n
	}
	return b.String()
}

// SampleStack returns a sample's function names, leaf first, inlined
// frames included: the stack the classifier and the runner's filters read.
func SampleStack(s *profile.Sample) []string {
	var out []string
	for _, loc := range s.Location {
		for _, ln := range loc.Line {
			if ln.Function != nil {
				out = append(out, ln.Function.Name)
			}
		}
	}
	return out
}
