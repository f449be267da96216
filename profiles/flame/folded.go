package flame

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/perflab/perflab/profiles"
)

// WriteFolded writes the tree as folded stacks, "root;caller;leaf value",
// one line per frame with self value, in the tree's order (callers before
// callees, children by name); ';' and line breaks in names become '_'.
// The lines are those of profiles.WriteFolded, in another order. It is for
// servers that keep built trees (package web): the profile itself is not
// needed again. A diff's tree writes its new profile. Nothing is written,
// and an error is returned, if the output would be over Options.MaxOutput.
func (t *Tree) WriteFolded(w io.Writer) error {
	t.mustBeWhole("WriteFolded")
	clean := make([]string, len(t.names))
	for i, n := range t.names {
		clean[i] = profiles.FoldedName(n)
	}
	self := func(i int32) int64 {
		v := t.value[i]
		for c := i + 1; c < t.end[i]; c = t.end[c] {
			v -= t.value[c]
		}
		return v
	}
	// Pass 1, the size; pass 2, the lines. Each keeps the path to the
	// current frame, not its line.
	lineLen := make([]int64, t.maxDepth+2) // bytes of the stack to depth d
	path := make([]int32, 0, t.maxDepth+1)
	limit := t.maxOutput()
	var size int64
	var num [24]byte
	visit := func(fn func(i int32, d int, v int64)) {
		ends := make([]int32, 0, t.maxDepth+1)
		for i := int32(0); i < int32(len(t.name)); i++ {
			for len(ends) > 0 && ends[len(ends)-1] <= i {
				ends = ends[:len(ends)-1]
			}
			d := len(ends) // the root is depth 0, its children 1
			if i != 0 {
				lineLen[d] = lineLen[d-1] + int64(len(clean[t.name[i]]))
				if d > 1 {
					lineLen[d]++
				}
			}
			path = append(path[:d], i)
			if v := self(i); v != 0 {
				fn(i, d, v)
			}
			ends = append(ends, t.end[i])
		}
	}
	visit(func(_ int32, d int, v int64) {
		size += lineLen[d] + int64(len(strconv.AppendInt(num[:0], v, 10))) + 2
	})
	if size > limit {
		return fmt.Errorf("%w: they would be %d MiB, over the limit of %d MiB (a profile with huge names or stacks: a crafted file?)", profiles.ErrFoldedTooLarge, size>>20, limit>>20)
	}
	bw := bufio.NewWriterSize(&budgetWriter{w: w, limit: limit, what: "folded stacks"}, 64<<10)
	visit(func(_ int32, d int, v int64) {
		for k, node := range path[1 : d+1] {
			if k > 0 {
				bw.WriteByte(';')
			}
			bw.WriteString(clean[t.name[node]])
		}
		bw.WriteByte(' ')
		bw.Write(strconv.AppendInt(num[:0], v, 10))
		bw.WriteByte('\n')
	})
	return bw.Flush()
}
