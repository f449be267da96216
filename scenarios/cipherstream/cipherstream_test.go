package cipherstream

import (
	"bytes"
	"crypto/cipher"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/perflabtest"
)

// reference encrypts c.plaintext the straightforward way, with the standard
// library alone: one XORKeyStream over everything for CTR; for GCM a loop
// sealing bufSize-byte chunks, the last one short (possibly empty).
func reference(c *streamCase) []byte {
	if c.mode != gcmMode {
		out := make([]byte, len(c.plaintext))
		cipher.NewCTR(c.block, c.iv).XORKeyStream(out, c.plaintext)
		return out
	}
	var out []byte
	var nonce [12]byte
	p := c.plaintext
	for i := uint64(0); ; i++ {
		n := min(len(p), c.bufSize)
		ad := []byte{0}
		if n < c.bufSize {
			ad[0] = 1
		}
		out = c.aead.Seal(out, chunkNonce(&nonce, c.prefix, i), p[:n], ad)
		p = p[n:]
		if ad[0] == 1 {
			return out
		}
	}
}

func newTestCase(t *testing.T, variant, size, dir string) *streamCase {
	t.Helper()
	v, err := Scenario.Variant(variant)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := v.New(perflab.Params{"size": size, "dir": dir})
	if err != nil {
		t.Fatal(err)
	}
	return cs.(*streamCase)
}

// TestRoundTrip checks every variant in both directions against the
// reference, at sizes around the chunk boundaries.
func TestRoundTrip(t *testing.T) {
	for _, v := range Scenario.Variants {
		for _, size := range []string{"0", "1", "511", "512", "1000", "8192", "16k", "70000"} {
			t.Run(fmt.Sprintf("%s/%s", v.Name, size), func(t *testing.T) {
				enc := newTestCase(t, v.Name, size, "encrypt")
				want := reference(enc)
				if len(want) != enc.outputSize() {
					t.Fatalf("reference is %d bytes, outputSize %d", len(want), enc.outputSize())
				}
				w := enc.NewWorker(0).(*worker)
				for round := 0; round < 2; round++ {
					w.Run(1)
					if !bytes.Equal(w.dst.b, want) {
						t.Fatalf("encrypt round %d: %d bytes, equal %v", round, len(w.dst.b), bytes.Equal(w.dst.b, want))
					}
				}
				dec := newTestCase(t, v.Name, size, "decrypt")
				if !bytes.Equal(dec.input, want) {
					t.Fatal("decrypt input is not the encryption of the plaintext")
				}
				w = dec.NewWorker(0).(*worker)
				w.Run(2)
				if !bytes.Equal(w.dst.b, dec.plaintext) {
					t.Fatalf("decrypt: plaintext equal %v", bytes.Equal(w.dst.b, dec.plaintext))
				}
			})
		}
	}
}

// TestFailingStreamFailsTheCase: a stream error in the timed loop panics,
// which the runner reports as a failed case; it used to be kept in a field
// nothing read, so a failing decryption would have been timed as a result.
func TestFailingStreamFailsTheCase(t *testing.T) {
	c := newTestCase(t, "gcm-512", "2048", "decrypt")
	bad := *c
	bad.input = bytes.Clone(c.input)
	bad.input[10] ^= 1
	w := bad.NewWorker(0).(*worker)
	defer func() {
		err, _ := recover().(error)
		if err == nil || !strings.Contains(err.Error(), "cipher-stream gcm-512 decrypt: cipher: message authentication failed") {
			t.Errorf("recovered %v, want the authentication failure", err)
		}
	}()
	w.Run(1)
}

func TestGCMRejectsTamperingAndTruncation(t *testing.T) {
	c := newTestCase(t, "gcm-512", "2048", "decrypt") // 4 full chunks and an empty last one
	open := func(ct []byte) error {
		_, err := io.Copy(io.Discard, newGCMReader(bytes.NewReader(ct), c.aead, c.prefix, c.bufSize, true))
		return err
	}
	if err := open(c.input); err != nil {
		t.Fatalf("intact ciphertext: %v", err)
	}
	tampered := bytes.Clone(c.input)
	tampered[700] ^= 1
	if err := open(tampered); err == nil {
		t.Error("tampered ciphertext opened")
	}
	if err := open(c.input[:2*(512+16)]); !errors.Is(err, errTruncated) {
		t.Errorf("truncated at a chunk boundary: %v, want errTruncated", err)
	}
	if err := open(c.input[:2*(512+16)+100]); err == nil {
		t.Error("ciphertext cut inside a chunk opened")
	}
	swapped := bytes.Clone(c.input)
	copy(swapped[:528], c.input[528:1056])
	copy(swapped[528:1056], c.input[:528])
	if err := open(swapped); err == nil {
		t.Error("reordered chunks opened")
	}
}

// bytesPerOp measures heap bytes allocated by one operation, averaged.
func bytesPerOp(w *worker, n int) float64 {
	w.Run(1)
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	w.Run(n)
	runtime.ReadMemStats(&b)
	return float64(b.TotalAlloc-a.TotalAlloc) / float64(n)
}

// TestAllocatedPerOp checks the package doc's list of what one operation
// allocates: the design's three buffers plus under 1 KiB of state (the
// reader; for CTR a 512-byte stream that embeds a copy of the AES key
// schedule), io.Copy's 32 KiB for stdlib, and only state otherwise.
func TestAllocatedPerOp(t *testing.T) {
	tests := []struct {
		variant string
		buffers int // bytes of buffers expected per op
	}{
		{"ctr-512", 3 * 512},
		{"ctr-8192", 3 * 8192},
		{"ctr-65536", 3 * 65536},
		{"gcm-512", 576 + 2*512}, // 528 bytes round up to the 576-byte size class
		{"gcm-8192", 9472 + 2*8192},
		{"gcm-65536", 73728 + 2*65536},
		{"stdlib", 32 << 10},
		{"stdlib-reuse", 0},
	}
	for _, tt := range tests {
		for _, dir := range []string{"encrypt", "decrypt"} {
			w := newTestCase(t, tt.variant, "16k", dir).NewWorker(0).(*worker)
			got := bytesPerOp(w, 50)
			if got < float64(tt.buffers) || got > float64(tt.buffers)+1024 {
				t.Errorf("%s/%s: %.0f B/op, want %d plus under 1 KiB of state", tt.variant, dir, got, tt.buffers)
			}
		}
	}
}

func TestChunksCounted(t *testing.T) {
	for _, tt := range []struct {
		variant string
		want    int64
	}{
		{"ctr-512", 32}, {"ctr-8192", 2}, {"ctr-65536", 1}, {"gcm-512", 33}, {"gcm-65536", 1},
	} {
		w := newTestCase(t, tt.variant, "16k", "encrypt").NewWorker(0).(*worker)
		w.Run(3)
		if got := w.Counts()["chunks"]; got != 3*tt.want {
			t.Errorf("%s: %d chunks in 3 ops, want %d", tt.variant, got, 3*tt.want)
		}
	}
}

// BenchmarkCipherStream runs every default case through the testing.B
// adapter, under the same names as `perflab run cipher-stream`.
func BenchmarkCipherStream(b *testing.B) { perflabtest.BenchmarkScenario(b, Scenario) }
