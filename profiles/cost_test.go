package profiles

import (
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestCompiledBytes holds CompiledBytes to what compiling and matching
// takes: never under the heap measured, and not wildly over it, for the
// hostile shapes (repetitions that expand to hundreds of thousands of
// instructions) and for a real pattern.
func TestCompiledBytes(t *testing.T) {
	mem := func() runtime.MemStats {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms
	}
	for _, tc := range []struct {
		name, pattern string
	}{
		{"literal repeats", strings.Repeat("x{1000}", 585)},
		{"class repeats", strings.Repeat("[a-z]{1000}", 8)},
		{"alternation repeats", strings.Repeat("(?:ab|cd){500}", 4)},
		{"real", `^crypto/internal/fips140/sha256\.`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			est := CompiledBytes(tc.pattern)
			before := mem()
			re := regexp.MustCompile(tc.pattern)
			compiled := mem()
			// A name as long as the pattern's shortest match makes the
			// matcher allocate its machine (its time is linear in the
			// name and the program, so the name is kept to that length).
			// The machine is counted by what the match allocated, not by
			// the heap after it: regexp keeps it in a sync.Pool, which
			// under -race drops a put at random (CI measured the program
			// alone, 28 MB of 51, that way).
			re.MatchString(strings.Repeat("a", minLen(tc.pattern)))
			matched := mem()
			runtime.KeepAlive(re)
			got := int64(compiled.HeapAlloc) - int64(before.HeapAlloc) +
				int64(matched.TotalAlloc-compiled.TotalAlloc)
			t.Logf("estimate %d KB, measured %d KB", est>>10, got>>10)
			// Below a megabyte the heap's other traffic (tests running
			// beside this one) is as large as the pattern.
			if got > 1<<20 && est < got {
				t.Errorf("estimate %d KB under the %d KB measured", est>>10, got>>10)
			}
			if got > 1<<20 && est > 4*got {
				t.Errorf("estimate %d KB more than 4× the %d KB measured", est>>10, got>>10)
			}
			if got <= 1<<20 && est > max(8*got, 64<<10) {
				t.Errorf("estimate %d KB for a pattern of %d KB", est>>10, got>>10)
			}
		})
	}
}

// minLen is the length of the shortest name pattern can match, from its
// literal repeats: enough for these tests' patterns.
func minLen(pattern string) int {
	n := 0
	for _, m := range regexp.MustCompile(`\{(\d+)\}`).FindAllStringSubmatch(pattern, -1) {
		var k int
		fmt.Sscan(m[1], &k)
		n += k
	}
	return max(n, 16)
}
