package remote

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// The WebSocket reader against a model of what it passes on: each text
// message's payload, its line breaks made spaces, leading blank dropped,
// then a newline (nothing for a blank message); binary messages and
// control frames nothing. Random streams mix what Read takes whole from
// the buffer (wholeFrames: single-frame text messages) with what only the
// frame reader takes (fragments with pings between them, binary
// messages, 64-bit lengths, messages over max), arriving in random
// pieces and read into random sizes, so that the whole-frame path starts
// and stops at every kind of boundary.
func TestWSReadMatchesModel(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 35))
		const max = 300
		wire, want := modelStream(rng, 150, max)
		c := &wsConn{rwc: modelConn{&pieceReader{wire, rng}}, max: max, done: make(chan struct{})}
		c.br = bufio.NewReaderSize(c.rwc, wsReadBuf)
		in := c.rwc.(modelConn).Reader.(*pieceReader)
		var got bytes.Buffer
		for {
			p := make([]byte, 1+rng.IntN(2000))
			n, err := c.readLocked(p)
			got.Write(p[:n])
			if err != nil {
				// The end of the input, at a frame's end: reported as
				// the connection ending without a close frame.
				if len(in.b) > 0 || errors.Is(err, errProtocol) || errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("seed %d: %v with %d bytes unread", seed, err, len(in.b))
				}
				break
			}
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("seed %d: passed on\n%q\nwant\n%q", seed, got.Bytes(), want)
		}
	}
}

// modelStream is n random messages as a server sends them, and the lines
// the model says the client passes on.
func modelStream(rng *rand.Rand, n, max int) (wire, want []byte) {
	const alphabet = `ab{"}: ` + "\t\n\r"
	frame := func(b0 byte, p []byte, long bool) {
		wire = append(wire, b0)
		switch {
		case long:
			wire = binary.BigEndian.AppendUint64(append(wire, 127), uint64(len(p)))
		case len(p) < 126:
			wire = append(wire, byte(len(p)))
		default:
			wire = binary.BigEndian.AppendUint16(append(wire, 126), uint16(len(p)))
		}
		wire = append(wire, p...)
	}
	for range n {
		size := rng.IntN(200)
		if rng.IntN(10) == 0 {
			size = max + rng.IntN(max) // over max: streamed
		}
		m := make([]byte, size)
		for i := range m {
			m[i] = alphabet[rng.IntN(len(alphabet))]
		}
		if rng.IntN(4) == 0 {
			copy(m, "  \r\n\t") // leading blank
		}
		kind := rng.IntN(10)
		switch {
		case kind == 0: // binary: read past
			frame(0x82, m, false)
			continue
		case kind <= 2 && len(m) > 2: // fragmented, a ping between
			cut := 1 + rng.IntN(len(m)-1)
			frame(0x01, m[:cut], false)
			frame(0x89, []byte("hi"), false)
			frame(0x80, m[cut:], false)
		default:
			frame(0x81, m, kind == 3)
		}
		line := bytes.Clone(m)
		flatten(line)
		line = bytes.TrimLeft(line, " \t")
		if len(line) > 0 {
			want = append(append(want, line...), '\n')
		}
	}
	return wire, want
}

// pieceReader reads b in random pieces, then io.EOF.
type pieceReader struct {
	b   []byte
	rng *rand.Rand
}

func (r *pieceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 1+r.rng.IntN(700))], r.b)
	r.b = r.b[n:]
	return n, nil
}

// modelConn is a connection whose writes (pongs, a close frame) go nowhere.
type modelConn struct{ io.Reader }

func (modelConn) Write(p []byte) (int, error) { return len(p), nil }
func (modelConn) Close() error                { return nil }

// A frame a server must not send, whole in the buffer behind a good one,
// is not taken by the whole-frame path: the good message before it is
// passed on, then the frame reader refuses the bad one, and nothing after
// it is read.
func TestWSWholeFramesRefuse(t *testing.T) {
	good := []byte{0x81, 2, '{', '}'}
	for name, bad := range map[string][]byte{
		"masked":        {0x81, 0x80 | 2, 0, 0, 0, 0, '{', '}'},
		"reserved bits": {0xc1, 2, '{', '}'},
	} {
		// A good frame after the bad one, long enough that a bad header
		// misread as a long length would find its bytes buffered.
		wire := append(append(bytes.Clone(good), bad...), textFrames(strings.Repeat("x", 300))...)
		c := &wsConn{rwc: modelConn{bytes.NewReader(wire)}, max: 1 << 10, done: make(chan struct{})}
		c.br = bufio.NewReaderSize(c.rwc, wsReadBuf)
		c.br.Peek(len(wire)) // all of it in the buffer
		var got []byte
		var err error
		for err == nil {
			p := make([]byte, 1000)
			var n int
			n, err = c.readLocked(p)
			got = append(got, p[:n]...)
		}
		if string(got) != "{}\n" || !errors.Is(err, errProtocol) {
			t.Errorf("%s: passed on %q and ended with %v, want the good message and a protocol error", name, got, err)
		}
	}
}
