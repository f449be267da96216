package lab

import (
	"context"
	"slices"
	"time"
)

// cpu/op for a go test benchmark (issue 23).
//
// A test binary reports no CPU time, only its process's, which holds far
// more than the timed loop: the process's start and exit, the b.N=1 run
// (run1), every runN's setup before b.ResetTimer and the runtime.GC the
// testing package calls before it, and, at a duration -benchtime, the
// ramp-up runs before the last. The process's CPU over the last b.N
// overstated cpu/op by 1.5-2x on the calibrating repetition (Mutex reps
// 14379, 13101, 11761 ns) and, for a benchmark with CPU-heavy setup,
// on every one (Hash/size=64/loop at -cpu 1: time/op 553 ns, cpu/op 833).
//
// So cpu/op is a difference of two processes that differ only in ops:
// every repetition runs a fixed b.N (-benchtime=Nx, the N a calibrating
// process at the duration -benchtime chose), and a baseline process of the
// same benchmark runs -benchtime=2x. With a b.N loop, testing runs runN(1)
// and runN(N) (N+1 ops, two setups) against runN(1) and runN(2) (3 ops,
// two setups); with B.Loop, one call of N ops against one of 2 ops, one
// setup each. Either way the difference is N-2 ops and nothing else the
// harness does:
//
//	cpu/op = (CPU(Nx) - CPU(2x)) / (N - 2)
//
// The calibration is not a repetition: its ramp-up runs are not in its
// b.N, so it could have no cpu/op, and counted, it left cpu/op one value
// short of time/op. A case whose N is 2 or less (an op of half the
// -benchtime or more) has no cpu/op, where the difference has no ops.
// What the difference cannot remove is CPU spent between b.StopTimer and
// b.StartTimer, which grows with N as the ops do: it is in cpu/op (the
// manual says so). The baseline is the median of baselineRuns processes:
// a process's start is only ever slowed, and the median stays near what
// the repetitions' own starts cost.

// baselineRuns is the number of 2x processes whose median CPU is a case's
// baseline.
const baselineRuns = 3

// cpuBaseline measures the CPU time of the case's process at
// -benchtime=2x: the median of baselineRuns, or false if any failed.
func (lb *liveBench) cpuBaseline(ctx context.Context) (time.Duration, bool) {
	c := lb.c
	var cpus []time.Duration
	for range baselineRuns {
		res := runBinary(ctx, c.pkg, exactPattern(c.full), "2x", c.cpu, lb.timeout(lb.wall))
		if findResult(res, c) == nil || res.cpu <= 0 {
			return 0, false
		}
		cpus = append(cpus, res.cpu)
	}
	slices.Sort(cpus)
	return cpus[len(cpus)/2], true
}

// cpuPerOp is the CPU time per op of a repetition at n ops whose process
// took cpu, against the baseline's 2 ops (see above); false where there
// is no difference to take.
func cpuPerOp(cpu, baseline time.Duration, n int) (float64, bool) {
	if n <= 2 || cpu <= 0 || baseline <= 0 {
		return 0, false
	}
	return float64(max(0, cpu-baseline).Nanoseconds()) / float64(n-2), true
}
