package flame

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"unicode/utf8"
)

// Work bounded by the output, not the input (issue 14). A profile of 1.2 KB
// can name one function with 1 MiB of text and call it 2,000 levels deep:
// every frame's tooltip repeated the name, and one GET of its SVG made
// 2 GB and took 6.4 GB of memory. So every writer streams to its io.Writer,
// names are cut in tooltips and labels, and what one writer emits has a
// budget, checked before the first byte where it can be computed (a web
// handler can still answer with an error) and enforced by a counting
// writer where it cannot.

// DefaultMaxOutput is the most bytes one SVG, HTML page, JSON or folded
// output may take, unless Options.MaxOutput says otherwise. The folded
// stacks of a real profile of a million unique stacks are about 3 GB; its
// SVG and HTML are a few MB, since frames under a pixel are pruned.
const DefaultMaxOutput = 1 << 30

// MaxNameRunes is the length past which a name is cut, with "…", in SVG
// tooltips and labels and in the interactive view's tooltip; the view's
// detail pane shows the full name. Real Go names (generic instantiations
// with long package paths included) stay well under it.
const MaxNameRunes = 256

// maxJSONNames bounds the bytes of names the interactive JSON carries.
// Each name is sent once, whole, for the detail pane; when all of them
// together exceed this, the longest are cut to a common length until they
// fit (fitNames).
const maxJSONNames = 16 << 20

// ErrOutputBudget is returned (wrapped) by a writer whose output would
// exceed Options.MaxOutput.
var ErrOutputBudget = errors.New("output budget exceeded")

func (t *Tree) maxOutput() int64 {
	if t.opts.MaxOutput > 0 {
		return t.opts.MaxOutput
	}
	return DefaultMaxOutput
}

// overBudget is the error for an output estimated or counted at n bytes.
func overBudget(what string, n, limit int64) error {
	return fmt.Errorf("%w: the %s would be %d MiB or more, over the limit of %d MiB (a profile with huge names or stacks: a crafted file?)",
		ErrOutputBudget, what, max(n>>20, 1), limit>>20)
}

// budgetWriter passes writes on until limit bytes were written, then fails
// every write. It is the net under the estimates.
type budgetWriter struct {
	w     io.Writer
	n     int64
	limit int64
	what  string
}

func (b *budgetWriter) Write(p []byte) (int, error) {
	if b.n+int64(len(p)) > b.limit {
		return 0, overBudget(b.what, b.n+int64(len(p)), b.limit)
	}
	n, err := b.w.Write(p)
	b.n += int64(n)
	return n, err
}

// cutName returns name cut to at most n runes, the last of them "…". It
// looks at no more than the first n runes of name, so a 1 MiB name costs
// what a short one does.
func cutName(name string, n int) string {
	if len(name) <= n { // bytes ≥ runes
		return name
	}
	i, runes := 0, 0
	for i < len(name) && runes < n-1 {
		_, size := utf8.DecodeRuneInString(name[i:])
		i += size
		runes++
	}
	if i == len(name) {
		return name
	}
	// Exactly n runes left? Then the name fits as it is.
	rest := name[i:]
	if _, size := utf8.DecodeRuneInString(rest); size == len(rest) {
		return name
	}
	return name[:i] + "…"
}

// fitNames returns names with the longest cut to a common length, in
// bytes at a rune boundary, so that together they take at most budget
// bytes; names within the budget are returned as they are.
func fitNames(names []string, budget int) []string {
	total := 0
	for _, n := range names {
		total += len(n)
	}
	if total <= budget {
		return names
	}
	lens := make([]int, len(names))
	for i, n := range names {
		lens[i] = len(n)
	}
	slices.Sort(lens)
	// The largest cap c with sum(min(len, c)) <= budget.
	capLen, sum := 0, 0
	for i, l := range lens {
		rest := len(lens) - i
		if sum+l*rest > budget {
			capLen = (budget - sum) / rest
			break
		}
		sum += l
	}
	capLen = max(capLen-len("…"), 16)
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n
		if len(n) > capLen {
			j := capLen
			for j > 0 && !utf8.RuneStart(n[j]) {
				j--
			}
			out[i] = n[:j] + "…"
		}
	}
	return out
}

// Bytes estimates the memory s holds: what a server charges to its memory
// budget while it keeps s.
func (s *Source) Bytes() int64 {
	n := int64(len(s.locNames)+len(s.locStart)+len(s.locs)+len(s.start))*4 + int64(len(s.vals))*8 + int64(len(s.state))
	for _, name := range s.names {
		n += int64(len(name)) + 16
	}
	return n + 256
}

// Bytes estimates the memory t holds: what a server charges to its memory
// budget while it keeps t (package web's cache of built trees).
func (t *Tree) Bytes() int64 {
	perNode := int64(4 + 4 + 8 + 2) // name, end, value, class
	if t.diff {
		perNode += 8 + 8 + 8 + 8 // base, sq, baseSq, width
	}
	n := int64(len(t.name))*perNode + 512
	for _, name := range t.names {
		n += int64(len(name)) + 16
	}
	if t.stat != nil {
		n += int64(len(t.name)) * 16 // the significance per node, and room
	}
	return n
}
