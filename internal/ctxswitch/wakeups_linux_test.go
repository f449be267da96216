package ctxswitch

import (
	"crypto/aes"
	"crypto/cipher"
	"io"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"testing"
	"time"
)

// ctrLoop encrypts 16 KiB an operation through a fresh AES-CTR stream and
// 512-byte buffers, as cipher-stream's ctr-512 does (about 2 KB of garbage
// an operation: a GC cycle every few milliseconds), until d has passed,
// and returns the operations per second.
func ctrLoop(block cipher.Block, in, out []byte, d time.Duration) float64 {
	iv := make([]byte, aes.BlockSize)
	ops := 0
	start := time.Now()
	for time.Since(start) < d {
		for range 16 {
			s := cipher.NewCTR(block, iv)
			buf := make([]byte, 512)
			for off := 0; off < len(in); off += len(buf) {
				s.XORKeyStream(buf, in[off:off+len(buf)])
				copy(out[off:], buf)
			}
			ops++
		}
	}
	return float64(ops) / time.Since(start).Seconds()
}

// BenchmarkRecorderWakeups measures what the recorder's wake-ups cost a
// quiet, allocating loop: windows with no recorder, with the recorder's
// timer following its rings (nextDrain), and with the fixed 5 ms timer it
// replaced, in rounds in one process, each round in a rotated order. It
// reports each recorder's throughput against none (median of the rounds'
// ratios) and the adaptive against the fixed. It states no target: the
// tracer's cost on the scenarios (BenchmarkTracerOverhead in
// internal/runner) is the gated figure.
func BenchmarkRecorderWakeups(b *testing.B) {
	block, err := aes.NewCipher(make([]byte, 16))
	if err != nil {
		b.Fatal(err)
	}
	in, out := make([]byte, 16<<10), make([]byte, 16<<10)
	const rounds = 24
	const window = 300 * time.Millisecond
	defer func(d time.Duration) { fixedDrain = d }(fixedDrain)
	for i := 0; i < b.N; i++ {
		ctrLoop(block, in, out, window) // warm
		var none, adaptive, fixed []float64
		for round := range rounds {
			for k := range 3 {
				side := (round + k) % 3
				fixedDrain = 0
				if side == 2 {
					fixedDrain = 5 * time.Millisecond
				}
				if err := pprof.StartCPUProfile(io.Discard); err != nil {
					b.Fatal(err)
				}
				if err := trace.Start(io.Discard); err != nil {
					b.Fatal(err)
				}
				var rec *Recorder
				if side > 0 {
					if rec, err = Start(); err != nil {
						b.Skip("no context-switch records here:", err)
					}
				}
				ops := ctrLoop(block, in, out, window)
				if rec != nil {
					if _, err := rec.Stop(); err != nil {
						b.Fatal(err)
					}
				}
				trace.Stop()
				pprof.StopCPUProfile()
				switch side {
				case 0:
					none = append(none, ops)
				case 1:
					adaptive = append(adaptive, ops)
				case 2:
					fixed = append(fixed, ops)
				}
			}
		}
		b.ReportMetric(medianRatio(adaptive, none), "adaptive/none")
		b.ReportMetric(medianRatio(fixed, none), "fixed-5ms/none")
		b.ReportMetric(medianRatio(adaptive, fixed), "adaptive/fixed-5ms")
	}
}

// medianRatio is the median of a[i]/b[i].
func medianRatio(a, b []float64) float64 {
	r := make([]float64, len(a))
	for i := range a {
		r[i] = a[i] / b[i]
	}
	slices.Sort(r)
	if n := len(r); n%2 == 0 {
		return (r[n/2-1] + r[n/2]) / 2
	}
	return r[len(r)/2]
}
