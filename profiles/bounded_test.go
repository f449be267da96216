package profiles

import (
	"bytes"
	"compress/gzip"
	"runtime"
	"strings"
	"testing"
)

// allocated returns the bytes fn allocates (runtime.MemStats.TotalAlloc):
// an upper bound on its peak.
func allocated(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

func gzipFast(data []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	zw.Write(data)
	zw.Close()
	return buf.Bytes()
}

// TestGunzipPeak: decompression allocates about the limit for a bomb and
// about the output for a real file (issue 14: a growing bytes.Buffer took
// 4.2 GB for a 1 GiB limit, and push of a 4 MB bomb 1.07 GB).
func TestGunzipPeak(t *testing.T) {
	const limit = 32 << 20
	bomb := gzipFast(make([]byte, 8*limit))
	var err error
	alloc := allocated(func() { _, err = gunzip(bomb, limit) })
	if err == nil || !strings.Contains(err.Error(), "gzip bomb") {
		t.Fatalf("bomb: %v", err)
	}
	if alloc > limit+limit/8 {
		t.Errorf("bomb of %d MiB at a limit of %d MiB: %d MiB allocated, want about the limit", 8*limit>>20, limit>>20, alloc>>20)
	}
	// The trailer sizes the buffer of an honest file: one allocation.
	data := bytes.Repeat([]byte("perflab "), (limit/2)/8)
	file := gzipFast(data)
	var out []byte
	alloc = allocated(func() { out, err = gunzip(file, limit) })
	if err != nil || !bytes.Equal(out, data) {
		t.Fatalf("honest file: %v", err)
	}
	if alloc > uint64(len(data)+len(data)/8) {
		t.Errorf("%d MiB file: %d MiB allocated, want about its size", len(data)>>20, alloc>>20)
	}
	// A lying trailer (here: cut off, then the last bytes replaced) still
	// decompresses, in chunks.
	lie := append([]byte(nil), file...)
	copy(lie[len(lie)-4:], []byte{1, 0, 0, 0})
	if _, err := gunzip(lie, limit); err == nil || !strings.Contains(err.Error(), "decompressing") {
		t.Errorf("lying trailer: %v, want the checksum error", err)
	}
}

// TestReadBombPeak: the whole of Read on a bomb stays near the limit.
func TestReadBombPeak(t *testing.T) {
	const limit = 32 << 20
	bomb := gzipFast(make([]byte, 8*limit))
	var err error
	alloc := allocated(func() { _, err = ReadLimited(bytes.NewReader(bomb), Limits{Uncompressed: limit}) })
	if err == nil {
		t.Fatal("bomb accepted")
	}
	if alloc > limit+limit/8+uint64(len(bomb)) {
		t.Errorf("Read of a bomb at a limit of %d MiB: %d MiB allocated", limit>>20, alloc>>20)
	}
}
