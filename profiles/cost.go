package profiles

import "regexp/syntax"

// CompiledBytes estimates the memory patterns (RE2, as rules and work
// patterns take them) hold once compiled, and while one goroutine matches
// them, without compiling them: a server charges it to its memory budget
// before the compile (issue 26: a 4 KiB pattern such as x{1000}x{1000}…
// compiles to 585,000 instructions, 28 MB; 64 KiB of them, within the
// stored classification's limits, to about 800 MB). A pattern that does
// not parse costs its text: compiling it fails at once.
//
// The figure per instruction was measured on Go 1.26 (go test ./profiles
// -run TestCompiledBytes -v): about 50 bytes compiled, and with what a
// match allocates (its machine's queues and threads) 90 to 230, a class
// instruction (which holds its ranges) the dearest, and up to 10% more
// under the race detector.
func CompiledBytes(patterns ...string) int64 {
	const perPattern, perInst = 1 << 10, 280
	var n int64
	for _, p := range patterns {
		n += perPattern + int64(len(p))
		re, err := syntax.Parse(p, syntax.Perl)
		if err != nil {
			continue
		}
		// Not re.Simplify(): it expands the repetitions, which is the
		// memory being estimated.
		n += perInst * (progSize(re) + 2) // and the start and match
	}
	return n
}

// progSize is the number of instructions syntax.Compile makes of re (the
// count regexp/syntax's own size check computes, without compiling).
func progSize(re *syntax.Regexp) int64 {
	var n int64
	switch re.Op {
	case syntax.OpLiteral:
		n = int64(len(re.Rune))
	case syntax.OpCapture, syntax.OpStar:
		n = 2 + progSize(re.Sub[0])
	case syntax.OpPlus, syntax.OpQuest:
		n = 1 + progSize(re.Sub[0])
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			n += progSize(sub)
		}
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			n += progSize(sub)
		}
		n += int64(max(len(re.Sub)-1, 0))
	case syntax.OpRepeat:
		sub := progSize(re.Sub[0])
		if re.Max == -1 {
			n = 2 + sub
			if re.Min > 0 {
				n = 1 + int64(re.Min)*sub
			}
			break
		}
		n = int64(re.Max)*sub + int64(re.Max-re.Min)
	}
	return max(n, 1)
}
