package flame

import (
	"bufio"
	"encoding/json"
	"io"
	"math"
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
//	 "gaps":[frame, value, …],                     // room left by pruned elder siblings
//	 "diff":false}
//
// A frame's parent is the nearest earlier frame one level less deep;
// children follow their parent in name order, so a frame's offset is its
// parent's plus its elder siblings' widths, plus its gap if it has one (the
// pruned frames before it: without it the frames after a pruned one
// shifted left).
//
// Version 1 has grown only by fields a viewer may ignore: "gaps", and the
// union's fields of a diff (an older viewer draws the new profile's shape,
// the frames only in the base at zero width).
//
// A diff (the union of two profiles) adds, per frame, "base" (the base
// value scaled to the new total), "width" (the drawn width, which is value
// except in a diff), "sig" (+1/-1 for a significant larger/smaller share,
// 0 otherwise), "bsq" and "nsq" (the frame's fraction of the squared
// weights of each side in parts per billion, from which flame.js computes
// intervals and tests merged frames: see stats.go); and "layout",
// "baseTotal", "baseCatTotals" and "stats" (effective numbers of
// observations, the false-discovery threshold, the key and the legend's
// texts).
//
// All strings are JSON-escaped with <, > and & as \u003c, \u003e and
// \u0026, so the text can sit inside a <script> element as is.
func (t *Tree) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriterSize(&budgetWriter{w: w, limit: t.maxOutput(), what: "flame graph JSON"}, 64<<10)
	// Keep frames of at least the threshold, in pre-order, remapping names
	// to the ones used.
	keep := t.jsonKeep()
	nameMap := make(map[int32]int, 1024)
	var names []string
	var nodes, base, width, sig, bsq, nsq, gaps []int64
	drawn := t.drawn()
	next := make([]int64, t.maxDepth+2) // where the viewer puts the next frame at each depth
	kept := int64(0)
	pruned := t.walkKeep(keep, func(i int32, d int, x int64) {
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
		if x != next[d] {
			gaps = append(gaps, kept, x-next[d])
		}
		next[d] = x + drawn[i]
		next[d+1] = x
		kept++
		nodes = append(nodes, nameIdx, t.value[i], int64(t.category(i).Index()), int64(d))
		if t.diff {
			base = append(base, t.scaledBase(i))
			width = append(width, drawn[i])
			sig = append(sig, int64(t.stat.sig[i]))
			bsq = append(bsq, ppb(t.baseSq[i], t.baseSq[0]))
			nsq = append(nsq, ppb(t.sq[i], t.sq[0]))
		}
	})

	// Names are sent whole, for the detail pane, unless together they
	// are too long to send.
	names = fitNames(names, maxJSONNames)
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
	bw.WriteString(`,"gaps":`)
	writeInts(bw, gaps)
	if t.diff {
		bw.WriteString(`,"diff":true,"layout":`)
		writeJSONString(bw, t.opts.Layout.String())
		bw.WriteString(`,"baseTotal":`)
		bw.WriteString(strconv.FormatInt(t.BaseTotal(), 10))
		bw.WriteString(`,"baseCatTotals":`)
		writeInts(bw, t.baseByCat[:])
		for _, a := range []struct {
			key string
			xs  []int64
		}{{"base", base}, {"width", width}, {"sig", sig}, {"bsq", bsq}, {"nsq", nsq}} {
			bw.WriteString(`,"` + a.key + `":`)
			writeInts(bw, a.xs)
		}
		bw.WriteString(`,"stats":`)
		t.writeStatsJSON(bw)
	} else {
		bw.WriteString(`,"diff":false`)
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

// ppb returns x/of in parts per billion.
func ppb(x, of float64) int64 {
	if of <= 0 {
		return 0
	}
	return int64(math.Round(1e9 * x / of))
}

// writeStatsJSON writes what the viewer needs to explain a diff's colours
// and to test the merged frames of its focus view.
func (t *Tree) writeStatsJSON(bw *bufio.Writer) {
	st := t.stat
	bw.WriteString(`{"ok":`)
	bw.WriteString(strconv.FormatBool(st.ok))
	for _, f := range []struct {
		key string
		v   float64
	}{{"n", st.n}, {"nBase", st.nBase}, {"pcut", st.pcut}} {
		bw.WriteString(`,"` + f.key + `":`)
		bw.WriteString(strconv.FormatFloat(f.v, 'g', 8, 64))
	}
	bw.WriteString(`,"tested":`)
	bw.WriteString(strconv.Itoa(st.tested))
	bw.WriteString(`,"key":`)
	writeJSONString(bw, t.diffKey())
	bw.WriteString(`,"model":`)
	writeJSONString(bw, st.model)
	bw.WriteString(`,"baseModel":`)
	writeJSONString(bw, st.baseMode)
	for _, part := range []string{"catText", "catTip"} {
		bw.WriteString(`,"` + part + `":[`)
		for c := range profiles.Categories {
			if c > 0 {
				bw.WriteByte(',')
			}
			text, tip := t.catText(c)
			if part == "catTip" {
				text = tip
			}
			writeJSONString(bw, text)
		}
		bw.WriteByte(']')
	}
	bw.WriteByte('}')
}

// jsonBuckets returns the lower bound of the values the JSON keeps whole
// and of the bucket below it, where the count passes MaxNodes (0 if every
// frame fits), from the histogram of every frame's value (valueHist).
// Children are never larger than their parents, so the kept frames always
// form a tree.
func (t *Tree) jsonBuckets() (threshold, below int64) {
	if t.Len() <= t.opts.MaxNodes {
		return 1, 0
	}
	h := t.hist
	if h == nil {
		h = new(valueHist)
		for _, v := range t.drawn()[1:] {
			h[bucketOf(v)]++
		}
	}
	return h.thresholds(t.opts.MaxNodes)
}

// bucketsPerPow is the number of histogram buckets per power of two.
const bucketsPerPow = 8

// valueHist counts frames by their value's top four bits: the JSON's
// pruning threshold from one pass instead of sorting millions of values.
type valueHist [64 * bucketsPerPow]int

func bucketOf(v int64) int {
	if v <= 0 {
		return 0
	}
	e := 63 - bits.LeadingZeros64(uint64(v))
	m := 0
	if e >= 3 {
		m = int(uint64(v)>>(e-3)) & (bucketsPerPow - 1)
	}
	return e*bucketsPerPow + m
}

// bucketLow is the smallest value of bucket b, or of the first bucket
// after it for the numbers that no value falls in (m > 0 below 8).
func bucketLow(b int) int64 {
	e, m := b/bucketsPerPow, b%bucketsPerPow
	if e < 3 {
		if m > 0 {
			e++
		}
		return int64(1) << e
	}
	return int64(bucketsPerPow+m) << (e - 3)
}

// thresholds returns the lower bounds of the bucket kept whole last and
// of the one where the count passes maxNodes (1, 0 if it never does).
func (h *valueHist) thresholds(maxNodes int) (threshold, below int64) {
	kept := 0
	// Bucket 0 holds the frames of value 1, in a profile of unit samples
	// (count, or one sample per event) usually most of them: it must be
	// able to overflow too, or such a profile is sent whole.
	for b := len(h) - 1; b >= 0; b-- {
		if kept+h[b] > maxNodes {
			return bucketLow(b + 1), bucketLow(b)
		}
		kept += h[b]
	}
	return 1, 0
}

// jsonKeep returns which frames the JSON keeps: those at or above the
// threshold, and of the bucket below it (where the count overflows) those
// up to the depth at which the frames kept reach MaxNodes. Without the
// second part, a stack 100,000 frames deep, all of one value, fell in one
// bucket, and every frame was left out: an empty graph (issue 14). A
// frame's parent is at least as large and one level less deep, so the
// kept frames still form a tree.
func (t *Tree) jsonKeep() func(i int32, depth int) bool {
	value := t.drawn()
	threshold, below := t.jsonBuckets()
	if below == 0 {
		return func(i int32, _ int) bool { return value[i] >= threshold && value[i] > 0 }
	}
	kept := 0
	perDepth := make([]int, t.maxDepth+2)
	t.walk(below-1, func(i int32, d int, _ int64) {
		if i == 0 {
			return
		}
		if value[i] >= threshold {
			kept++
		} else {
			perDepth[d]++
		}
	})
	maxDepth := 0
	for d := 1; d < len(perDepth); d++ {
		if kept+perDepth[d] > t.opts.MaxNodes {
			break
		}
		kept += perDepth[d]
		maxDepth = d
	}
	return func(i int32, d int) bool {
		v := value[i]
		return v > 0 && (v >= threshold || v >= below && d <= maxDepth)
	}
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
