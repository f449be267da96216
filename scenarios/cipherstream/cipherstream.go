// Package cipherstream is the cipher-stream scenario: what buffer size
// should an encrypting stream use, and what do allocation figures mean?
//
// A stream cipher wrapper read its input in 512-byte chunks; a change raised
// the chunk to 8192 bytes. The reviewers asked for memory figures: the
// allocation rate (MB/s) rose sharply, but that was the higher throughput
// talking; bytes per operation rose only by the three bigger buffers
// (16 KiB payload: 35,584 → 58,624 B/op; 1 MiB: 1,067,786 → 1,090,816 B/op).
//
// Variants ctr-N and gcm-N build the original design for one payload per
// operation: an io.Reader with an input and an output buffer of N bytes,
// drained by io.CopyBuffer through a third N-byte buffer (AES-CTR, and
// AES-GCM sealed chunk by chunk). Variant stdlib is the standard library's
// way, io.Copy over cipher.StreamReader, and stdlib-reuse the same with a
// copy buffer the goroutine keeps.
//
// What is allocated per operation, exactly:
//
//   - ctr-N: the reader (128 bytes) and its two N-byte buffers, the N-byte
//     copy buffer, and the CTR state from cipher.NewCTR (512 bytes: it holds
//     the counter, so every message needs its own, and a copy of the AES key
//     schedule).
//   - gcm-N: the reader, buffers of N and N+16 bytes (N+16 rounds up to the
//     next size class: 576, 9472, 73728), the N-byte copy buffer. The AEAD
//     is stateless and built once per case.
//   - stdlib: the CTR state, the cipher.StreamReader boxed into an
//     io.Reader (32 bytes), and the 32 KiB buffer io.Copy allocates on
//     every call.
//   - stdlib-reuse: the CTR state and the boxed StreamReader (544 bytes).
//
// TestAllocatedPerOp checks this list.
//
// Not per operation: the key schedule (aes.NewCipher) and the GCM AEAD, the
// payload itself (each worker reads from its own bytes.Reader, Reset per
// operation) and the destination (each worker appends into its own slice,
// preallocated to the output size), so B/op is the stream's own cost. The
// key, IV and nonce prefix are fixed per case, which real code must never
// do: that keeps the inputs, and so the work, identical across operations.
package cipherstream

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/perflab/perflab"
)

func init() {
	perflab.Register(Scenario)
}

// Scenario is the cipher-stream scenario, registered as "cipher-stream".
var Scenario = &perflab.Scenario{
	Name: "cipher-stream",
	Doc:  "encrypting io.Reader: buffer size 512/8192/65536 (AES-CTR, chunked AES-GCM) vs cipher.StreamReader",
	Long: "A stream cipher wrapper read its input in 512-byte chunks; a change raised it to 8192. " +
		"The allocation rate (MB/s) rose sharply, yet bytes per op grew only by the three bigger " +
		"buffers: the rate follows throughput. Compare MB/s, B/op and the allocation rate " +
		"(B/op × ops/s) side by side.",
	Params: []perflab.Param{
		{Name: "size", Doc: "payload bytes per operation", Kind: perflab.IntParam, Default: []string{"16k", "1M"}, Min: 0, Max: 1 << 30},
		{Name: "dir", Doc: "encrypt plaintext or decrypt ciphertext (same code for CTR; GCM checks tags)", Default: []string{"encrypt", "decrypt"}, Values: []string{"encrypt", "decrypt"}},
	},
	Threads: []int{1},
	// AES and GCM (AES-NI and CLMUL assembly on amd64, e.g.
	// aes.ctrBlocks8Asm, gcm.gcmAesEnc, gcm.gcmAesDec) and the generic XOR
	// used on other platforms. The copies between the design's buffers
	// (memmove under the readers) are not work: they are its overhead.
	Work: []string{
		`^crypto/internal/fips140/aes\.`,
		`^crypto/internal/fips140/aes/gcm\.`,
		`^crypto/internal/fips140/subtle\.`,
	},
	Variants: []perflab.Variant{
		{Name: "ctr-512", Doc: "AES-CTR reader, 512-byte buffers (the original)", New: newCase(ctrMode, 512)},
		{Name: "ctr-8192", Doc: "AES-CTR reader, 8192-byte buffers (the change)", New: newCase(ctrMode, 8192)},
		{Name: "ctr-65536", Doc: "AES-CTR reader, 64 KiB buffers", New: newCase(ctrMode, 65536)},
		{Name: "gcm-512", Doc: "AES-GCM sealed in 512-byte chunks", New: newCase(gcmMode, 512)},
		{Name: "gcm-8192", Doc: "AES-GCM sealed in 8192-byte chunks", New: newCase(gcmMode, 8192)},
		{Name: "gcm-65536", Doc: "AES-GCM sealed in 64 KiB chunks", New: newCase(gcmMode, 65536)},
		{Name: "stdlib", Doc: "io.Copy over cipher.StreamReader (AES-CTR, XOR in place, io.Copy's 32 KiB buffer)", New: newCase(stdlibMode, 32<<10)},
		{Name: "stdlib-reuse", Doc: "io.CopyBuffer over cipher.StreamReader with a 32 KiB buffer kept per goroutine", New: newCase(stdlibReuseMode, 32<<10)},
	},
}

type mode int

const (
	ctrMode mode = iota
	gcmMode
	stdlibMode
	stdlibReuseMode
)

// streamCase is the shared, read-only state of a case.
type streamCase struct {
	mode    mode
	bufSize int
	size    int
	decrypt bool
	block   cipher.Block
	aead    cipher.AEAD
	iv      []byte
	prefix  [4]byte
	// input is what every operation reads: the plaintext, or for decrypt
	// the ciphertext in this variant's format.
	input []byte
	// plaintext is kept for tests.
	plaintext []byte
}

var _ perflab.Byteser = (*streamCase)(nil)

func newCase(m mode, bufSize int) func(perflab.Params) (perflab.Case, error) {
	return func(p perflab.Params) (perflab.Case, error) {
		size := p.Int("size")
		if size < 0 || size > 1<<30 {
			return nil, fmt.Errorf("size=%d: want 0 to 1GiB", size)
		}
		rng := rand.New(rand.NewPCG(7, uint64(size)))
		key := make([]byte, 16)
		c := &streamCase{mode: m, bufSize: bufSize, size: size, decrypt: p.String("dir") == "decrypt", iv: make([]byte, aes.BlockSize)}
		for _, b := range [][]byte{key, c.iv, c.prefix[:]} {
			fill(rng, b)
		}
		var err error
		if c.block, err = aes.NewCipher(key); err != nil {
			return nil, err
		}
		if c.aead, err = cipher.NewGCM(c.block); err != nil {
			return nil, err
		}
		c.plaintext = make([]byte, size)
		fill(rng, c.plaintext)
		c.input = c.plaintext
		if c.decrypt {
			// Encrypt once with the encrypting form of this variant.
			enc := *c
			enc.decrypt = false
			w := enc.NewWorker(0).(*worker)
			w.Run(1)
			c.input = w.dst.b
		}
		return c, nil
	}
}

func fill(rng *rand.Rand, b []byte) {
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
}

// Bytes reports the payload per operation, so the harness shows MB/s of
// plaintext whatever the direction.
func (c *streamCase) Bytes() int64 { return int64(c.size) }

// outputSize is the length of what one operation writes.
func (c *streamCase) outputSize() int {
	if c.mode == gcmMode && !c.decrypt {
		return c.size + (c.size/c.bufSize+1)*c.aead.Overhead()
	}
	return c.size
}

func (c *streamCase) NewWorker(id int) perflab.Worker {
	w := &worker{c: c, dst: &sliceWriter{b: make([]byte, 0, c.outputSize())}}
	if c.mode == stdlibReuseMode {
		w.buf = make([]byte, c.bufSize)
	}
	return w
}

// sliceWriter appends to a slice preallocated to the output size. It has
// no ReadFrom method, so io.Copy and io.CopyBuffer use their buffer.
type sliceWriter struct{ b []byte }

func (w *sliceWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

type worker struct {
	c      *streamCase
	src    bytes.Reader
	dst    *sliceWriter
	buf    []byte // stdlib-reuse only
	chunks int64
	sink   byte
}

// Run encrypts (or decrypts) the whole input n times, building the stream
// afresh each time as the original did per message.
func (w *worker) Run(n int) {
	c := w.c
	var sink byte
	for i := 0; i < n; i++ {
		w.src.Reset(c.input)
		w.dst.b = w.dst.b[:0]
		var err error
		switch c.mode {
		case ctrMode:
			r := newCTRReader(&w.src, cipher.NewCTR(c.block, c.iv), c.bufSize)
			_, err = io.CopyBuffer(w.dst, r, make([]byte, c.bufSize))
			w.chunks += r.chunks
		case gcmMode:
			r := newGCMReader(&w.src, c.aead, c.prefix, c.bufSize, c.decrypt)
			_, err = io.CopyBuffer(w.dst, r, make([]byte, c.bufSize))
			w.chunks += int64(r.chunk)
		case stdlibMode:
			_, err = io.Copy(w.dst, cipher.StreamReader{S: cipher.NewCTR(c.block, c.iv), R: &w.src})
		case stdlibReuseMode:
			_, err = io.CopyBuffer(w.dst, cipher.StreamReader{S: cipher.NewCTR(c.block, c.iv), R: &w.src}, w.buf)
		}
		if err != nil {
			// The runner marks the case failed: a stream that fails
			// (a GCM tag that does not verify) must not be timed as
			// if it worked. Only the error path pays for this check.
			panic(fmt.Errorf("cipher-stream %s: %w", c.variantName(), err))
		}
		if len(w.dst.b) > 0 {
			sink ^= w.dst.b[len(w.dst.b)-1]
		}
	}
	w.sink ^= sink
}

// variantName names the case's variant in errors.
func (c *streamCase) variantName() string {
	dir := "encrypt"
	if c.decrypt {
		dir = "decrypt"
	}
	switch c.mode {
	case ctrMode:
		return fmt.Sprintf("ctr-%d %s", c.bufSize, dir)
	case gcmMode:
		return fmt.Sprintf("gcm-%d %s", c.bufSize, dir)
	case stdlibMode:
		return "stdlib " + dir
	}
	return "stdlib-reuse " + dir
}

// Counts reports the chunks the design's reader processed; per operation
// that is size/buffer, rounded up (plus one empty last chunk for GCM when
// the size is a multiple of the buffer).
func (w *worker) Counts() map[string]int64 {
	if w.c.mode == ctrMode || w.c.mode == gcmMode {
		return map[string]int64{"chunks": w.chunks}
	}
	return nil
}
