package flame

import (
	"bufio"
	"encoding/json"
	"io"
	"math/bits"
	"strconv"

	"github.com/perflab/perflab/profiles"
)

// WriteJSON writes the tree in the compact form the interactive view draws
// (flame.js), pruned to at most Options.MaxNodes frames, narrowest first.
// The web UI embeds it in its own pages together with Script and Style.
//
// The form is one object:
//
//	{"v":1, "title":…, "type":"cpu", "unit":"nanoseconds", "total":N,
//	 "cats":["work",…], "colors":["#2e9e6a",…], "catTotals":[…],
//	 "names":["main.main",…],
//	 "nodes":[name, value, category, depth, …],  // 4 numbers a frame, pre-order, root first
//	 "pruned":K,                                   // frames left out
//	 "diff":false, "baseTotal":N, "baseCatTotals":[…], "base":[…]} // base value per frame (diffs)
//
// A frame's parent is the nearest earlier frame one level less deep;
// children follow their parent in name order, so a frame's offset is its
// parent's plus its elder siblings' values. All strings are JSON-escaped
// with <, > and & as \u003c, \u003e and \u0026, so the text can sit inside
// a <script> element as is.
func (t *Tree) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	// Keep frames of at least the threshold, in pre-order, remapping names
	// to the ones used.
	minValue := t.jsonThreshold()
	nameMap := make(map[int32]int, 1024)
	var names []string
	var nodes, base []int64
	pruned := t.walk(minValue-1, func(i int32, d int, x int64) {
		nameIdx := int64(-1)
		if i != 0 {
			id, ok := nameMap[t.name[i]]
			if !ok {
				id = len(names)
				names = append(names, t.names[t.name[i]])
				nameMap[t.name[i]] = id
			}
			nameIdx = int64(id)
		}
		nodes = append(nodes, nameIdx, t.value[i], int64(t.category(i).Index()), int64(d))
		if t.diff {
			base = append(base, t.base[i])
		}
	})

	bw.WriteString(`{"v":1,"title":`)
	writeJSONString(bw, t.opts.Title)
	bw.WriteString(`,"type":`)
	writeJSONString(bw, t.sampleType)
	bw.WriteString(`,"unit":`)
	writeJSONString(bw, t.unit)
	bw.WriteString(`,"total":`)
	bw.WriteString(strconv.FormatInt(t.Total(), 10))
	bw.WriteString(`,"cats":[`)
	for i, c := range profiles.Categories {
		if i > 0 {
			bw.WriteByte(',')
		}
		writeJSONString(bw, string(c))
	}
	bw.WriteString(`],"colors":[`)
	for i, c := range profiles.Categories {
		if i > 0 {
			bw.WriteByte(',')
		}
		writeJSONString(bw, c.Color())
	}
	bw.WriteString(`],"catTotals":`)
	writeInts(bw, t.byCat[:])
	bw.WriteString(`,"names":[`)
	for i, s := range names {
		if i > 0 {
			bw.WriteByte(',')
		}
		writeJSONString(bw, s)
	}
	bw.WriteString(`],"nodes":`)
	writeInts(bw, nodes)
	bw.WriteString(`,"pruned":`)
	bw.WriteString(strconv.Itoa(pruned))
	if t.diff {
		bw.WriteString(`,"diff":true,"baseTotal":`)
		bw.WriteString(strconv.FormatInt(t.baseTotal, 10))
		bw.WriteString(`,"baseCatTotals":`)
		writeInts(bw, t.baseByCat[:])
		bw.WriteString(`,"base":`)
		writeInts(bw, base)
	} else {
		bw.WriteString(`,"diff":false`)
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

// jsonThreshold returns the smallest value a frame needs to be kept so that
// at most MaxNodes frames are. It buckets values by their top four bits in
// one pass instead of sorting millions of them; children are never larger
// than their parents, so the kept frames always form a tree.
func (t *Tree) jsonThreshold() int64 {
	if len(t.name)-1 <= t.opts.MaxNodes {
		return 1
	}
	const sub = 8 // buckets per power of two
	var hist [64 * sub]int
	bucket := func(v int64) int {
		if v <= 0 {
			return 0
		}
		e := 63 - bits.LeadingZeros64(uint64(v))
		m := 0
		if e >= 3 {
			m = int(uint64(v)>>(e-3)) & (sub - 1)
		}
		return e*sub + m
	}
	for _, v := range t.value[1:] {
		hist[bucket(v)]++
	}
	kept := 0
	// Bucket 0 holds the frames of value 1, in a profile of unit samples
	// (count, or one sample per event) usually most of them: it must be
	// able to overflow too, or such a profile is sent whole.
	for b := len(hist) - 1; b >= 0; b-- {
		if kept+hist[b] > t.opts.MaxNodes {
			// Keep buckets above b: the lower bound of bucket b+1.
			e, m := (b+1)/sub, (b+1)%sub
			if e < 3 {
				if m > 0 {
					e++
				}
				return int64(1) << e
			}
			return int64(sub+m) << (e - 3)
		}
		kept += hist[b]
	}
	return 1
}

func writeInts(bw *bufio.Writer, xs []int64) {
	bw.WriteByte('[')
	var tmp [24]byte
	for i, x := range xs {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.Write(strconv.AppendInt(tmp[:0], x, 10))
	}
	bw.WriteByte(']')
}

// writeJSONString writes s as a JSON string. encoding/json escapes <, > and
// & (so "</script>" cannot end a script element), U+2028 and U+2029, and
// replaces invalid UTF-8 with U+FFFD.
func writeJSONString(bw *bufio.Writer, s string) {
	b, _ := json.Marshal(s)
	bw.Write(b)
}
