package cipherstream

import (
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"io"
)

// ctrReader is the original design: an io.Reader that reads its source in
// chunks of len(in) bytes, encrypts each chunk into a second buffer of the
// same size and serves reads from there. With a stream cipher (CTR) the
// same reader decrypts.
type ctrReader struct {
	src     io.Reader
	stream  cipher.Stream
	in, out []byte
	off, n  int // unread bytes are out[off:n]
	err     error
	chunks  int64
}

func newCTRReader(src io.Reader, stream cipher.Stream, bufSize int) *ctrReader {
	return &ctrReader{src: src, stream: stream, in: make([]byte, bufSize), out: make([]byte, bufSize)}
}

func (r *ctrReader) Read(p []byte) (int, error) {
	if r.off == r.n {
		if r.err != nil {
			return 0, r.err
		}
		n, err := io.ReadFull(r.src, r.in)
		if err == io.ErrUnexpectedEOF {
			err = io.EOF
		}
		r.err = err
		if n == 0 {
			return 0, err
		}
		r.stream.XORKeyStream(r.out[:n], r.in[:n])
		r.off, r.n = 0, n
		r.chunks++
	}
	n := copy(p, r.out[r.off:r.n])
	r.off += n
	return n, nil
}

// GCM in chunks: each chunk of up to bufSize plaintext bytes is sealed on
// its own, with the chunk number in the nonce (so chunks cannot be
// reordered) and a one-byte additional data that marks the last chunk (so
// the stream cannot be truncated at a chunk boundary). The last chunk is the
// first one shorter than bufSize, possibly empty.

var (
	lastChunk = []byte{1}
	midChunk  = []byte{0}
)

// errTruncated reports a ciphertext that ends without its last chunk.
var errTruncated = errors.New("cipherstream: ciphertext truncated")

// chunkNonce returns the nonce of chunk i: the case's 4-byte prefix and i.
func chunkNonce(nonce *[12]byte, prefix [4]byte, i uint64) []byte {
	copy(nonce[:4], prefix[:])
	binary.BigEndian.PutUint64(nonce[4:], i)
	return nonce[:]
}

// gcmReader seals (or opens) its source chunk by chunk, with an input and
// an output buffer like ctrReader. When sealing, in holds bufSize bytes and
// out bufSize+Overhead; when opening, the other way round.
type gcmReader struct {
	src     io.Reader
	aead    cipher.AEAD
	prefix  [4]byte
	open    bool
	in, out []byte
	off, n  int
	chunk   uint64
	done    bool // the last chunk has been processed
	err     error
	nonce   [12]byte
}

func newGCMReader(src io.Reader, aead cipher.AEAD, prefix [4]byte, bufSize int, open bool) *gcmReader {
	r := &gcmReader{src: src, aead: aead, prefix: prefix, open: open}
	if open {
		r.in, r.out = make([]byte, bufSize+aead.Overhead()), make([]byte, bufSize)
	} else {
		r.in, r.out = make([]byte, bufSize), make([]byte, bufSize+aead.Overhead())
	}
	return r
}

func (r *gcmReader) Read(p []byte) (int, error) {
	for r.off == r.n {
		if r.err != nil {
			return 0, r.err
		}
		if r.done {
			r.err = io.EOF
			continue
		}
		r.err = r.fill()
	}
	n := copy(p, r.out[r.off:r.n])
	r.off += n
	return n, nil
}

// fill processes the next chunk into out.
func (r *gcmReader) fill() error {
	n, err := io.ReadFull(r.src, r.in)
	switch {
	case err == io.ErrUnexpectedEOF || err == io.EOF:
		r.done = true
	case err != nil:
		return err
	}
	ad := midChunk
	if r.done {
		ad = lastChunk
	}
	nonce := chunkNonce(&r.nonce, r.prefix, r.chunk)
	r.chunk++
	var out []byte
	if r.open {
		if err == io.EOF && n == 0 {
			// The previous chunk was full-sized, so not the last.
			return errTruncated
		}
		out, err = r.aead.Open(r.out[:0], nonce, r.in[:n], ad)
		if err != nil {
			return err
		}
	} else {
		out = r.aead.Seal(r.out[:0], nonce, r.in[:n], ad)
	}
	r.off, r.n = 0, len(out)
	return nil
}
