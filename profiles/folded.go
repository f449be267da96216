package profiles

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// WriteFolded writes p's samples as folded stacks, the format of Brendan
// Gregg's stackcollapse scripts that flamegraph.pl and speedscope read: one
// line per sample, "root;caller;leaf value", inlined functions expanded.
// Samples with a zero value are left out. Semicolons and line breaks in
// names, which would break the format, become underscores.
func WriteFolded(w io.Writer, p *profile.Profile, sampleIndex int) error {
	var order []string
	sums := map[string]int64{}
	var line []byte
	for _, s := range p.Sample {
		if sampleIndex < 0 || sampleIndex >= len(s.Value) || s.Value[sampleIndex] == 0 {
			continue
		}
		line = line[:0]
		for i := len(s.Location) - 1; i >= 0; i-- {
			names := FrameNames(s.Location[i])
			for j := len(names) - 1; j >= 0; j-- {
				if len(line) > 0 {
					line = append(line, ';')
				}
				line = appendFoldedName(line, names[j])
			}
		}
		key := string(line)
		if _, ok := sums[key]; !ok {
			order = append(order, key)
		}
		sums[key] += s.Value[sampleIndex]
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	for _, key := range order {
		line = append(line[:0], key...)
		line = append(line, ' ')
		line = strconv.AppendInt(line, sums[key], 10)
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// appendFoldedName appends name with the folded format's separators (';',
// and the space before the count matters only at the end, but flamegraph.pl
// splits on the last space, so spaces are kept) and line breaks replaced.
func appendFoldedName(b []byte, name string) []byte {
	if !strings.ContainsAny(name, ";\n\r") {
		return append(b, name...)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch c {
		case ';', '\n', '\r':
			c = '_'
		}
		b = append(b, c)
	}
	return b
}
