// wsframe.go holds the client's side of the WebSocket protocol (RFC 6455):
// the opening handshake over net/http and the frames, read straight from
// a buffered reader and written masked in batches. The transport speaks
// only what ACP uses: no extensions, no subprotocol.
//
// It is ours rather than a library's because of what a message costs: a
// 100 000-chunk turn is 100 000 small frames, and a general library pays a
// handful of channel operations, an error wrap and a lock per frame (three
// quarters of the transport's time on that turn, measured); here a frame
// costs a header parse and a copy.
//
// Measured against libraries (remote's BenchmarkTurn100kChunks, ws
// profile; test binaries built with go test -c and run in alternation,
// -test.run X -test.bench 'BenchmarkTurn100kChunks/^(stdio|ws)$'
// -test.benchtime 6x, ws/stdio throughput, median of the rounds; and the
// process's CPU per turn, from -test.benchtime 40x less 1x):
//
//	coder/websocket v1.8.15 (the whole client as it was before this file): 0.30x, 101 ms
//	gorilla/websocket v1.5.3 (NextReader, this file's batching on top): 0.69x, 39 ms
//	this file: 0.79x, 36 ms
//
// gorilla comes near (88 % of the throughput, on a noisy machine, 28
// rounds) but not near enough to outweigh what it does differently: it
// reads a one-byte close frame as 1005 where RFC 6455 §5.5.1 makes it a
// violation, ends a frame length past 2^63 with "read limit exceeded" and
// no 1002, dials by itself (a caller's Options.HTTPClient goes unused, and
// no redirect is followed), and allocates a reader per message. The
// tests that pin this file's answers are in ws_frames_hostile_test.go.
package remote

import (
	"bufio"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Opcodes (RFC 6455 §5.2).
const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xa
)

// Close codes the client sends or reports.
const (
	closeNormal     = 1000
	closeProtocol   = 1002
	closeNoStatus   = 1005
	closeAbnormal   = 1006
	closeGoingAway  = 1001
	maxControlBytes = 125
)

// errProtocol: the server broke the framing rules. The client closes with
// 1002 and reports the connection broken (1006: no close frame came).
var errProtocol = errors.New("acp/remote: WebSocket protocol violation")

func protocolErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errProtocol, fmt.Sprintf(format, args...))
}

// wsAccept is the Sec-WebSocket-Accept a server answers key with.
func wsAccept(key string) string {
	h := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return base64.StdEncoding.EncodeToString(h[:])
}

// errNotUpgraded: the handshake was answered, with another status than
// 101 (the caller reports it as a *StatusError).
var errNotUpgraded = errors.New("not upgraded")

// wsHandshake sends the opening handshake for u (ws or wss) with header
// and returns the upgraded stream and the 101 response. A response of
// another status is returned with errNotUpgraded, its body unread.
func wsHandshake(req *http.Request, client *http.Client, u *url.URL, header http.Header) (io.ReadWriteCloser, *http.Response, error) {
	hu := *u
	switch hu.Scheme {
	case "ws":
		hu.Scheme = "http"
	case "wss":
		hu.Scheme = "https"
	}
	req.URL = &hu
	req.Host = hu.Host
	var nonce [16]byte
	_, _ = rand.Read(nonce[:]) // never fails (crypto/rand)
	key := base64.StdEncoding.EncodeToString(nonce[:])
	req.Header = header
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", key)
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return nil, resp, errNotUpgraded
	}
	fail := func(format string, args ...any) (io.ReadWriteCloser, *http.Response, error) {
		resp.Body.Close()
		return nil, nil, protocolErr(format, args...)
	}
	switch {
	case !headerHasToken(resp.Header, "Connection", "upgrade"):
		return fail("the 101's Connection header is %q", resp.Header.Get("Connection"))
	case !headerHasToken(resp.Header, "Upgrade", "websocket"):
		return fail("the 101's Upgrade header is %q", resp.Header.Get("Upgrade"))
	case resp.Header.Get("Sec-WebSocket-Accept") != wsAccept(key):
		return fail("the 101's Sec-WebSocket-Accept does not answer the key")
	case resp.Header.Get("Sec-WebSocket-Extensions") != "":
		return fail("the server chose extensions the client did not offer: %q", resp.Header.Get("Sec-WebSocket-Extensions"))
	case resp.Header.Get("Sec-WebSocket-Protocol") != "":
		return fail("the server chose a subprotocol the client did not offer: %q", resp.Header.Get("Sec-WebSocket-Protocol"))
	}
	rwc, ok := resp.Body.(io.ReadWriteCloser)
	if !ok {
		return fail("the 101's body is not writable (%T)", resp.Body)
	}
	return rwc, resp, nil
}

// headerHasToken reports whether a comma-separated header holds token
// (case-insensitively).
func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// frameHeader is what readHeader reads of one frame.
type frameHeader struct {
	fin    bool
	op     byte
	length int64
}

// readHeader reads the next frame's header, refusing what a server must
// not send: reserved bits (no extension was agreed), a masked frame, an
// unknown opcode, a fragmented or long control frame, a 64-bit length with
// its top bit set.
func readHeader(br *bufio.Reader) (frameHeader, error) {
	b, err := br.Peek(2)
	if err != nil {
		return frameHeader{}, eofErr(err, len(b) > 0)
	}
	h := frameHeader{fin: b[0]&0x80 != 0, op: b[0] & 0x0f, length: int64(b[1] & 0x7f)}
	switch {
	case b[0]&0x70 != 0:
		return h, protocolErr("a frame with reserved bits set")
	case b[1]&0x80 != 0:
		return h, protocolErr("a masked frame from the server")
	}
	n := 2
	switch h.length {
	case 126:
		n = 4
	case 127:
		n = 10
	}
	if n > 2 {
		if b, err = br.Peek(n); err != nil {
			return h, eofErr(err, true)
		}
		if n == 4 {
			h.length = int64(binary.BigEndian.Uint16(b[2:]))
		} else {
			l := binary.BigEndian.Uint64(b[2:])
			if l>>63 != 0 {
				return h, protocolErr("a frame length over 2^63")
			}
			h.length = int64(l)
		}
	}
	_, _ = br.Discard(n)
	switch h.op {
	case opContinuation, opText, opBinary:
	case opClose, opPing, opPong:
		if !h.fin || h.length > maxControlBytes {
			return h, protocolErr("a fragmented or long control frame (opcode %d, %d bytes)", h.op, h.length)
		}
	default:
		return h, protocolErr("opcode %d", h.op)
	}
	return h, nil
}

// eofErr turns an EOF in the middle of a frame into io.ErrUnexpectedEOF.
func eofErr(err error, begun bool) error {
	if begun && errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// parseClose reads a close frame's payload.
func parseClose(p []byte) (code int, reason string, err error) {
	switch {
	case len(p) == 0:
		return closeNoStatus, "", nil
	case len(p) == 1:
		return 0, "", protocolErr("a close frame of one byte")
	}
	code = int(binary.BigEndian.Uint16(p))
	if !validCloseCode(code) {
		return 0, "", protocolErr("close code %d", code)
	}
	if !utf8.Valid(p[2:]) {
		return 0, "", protocolErr("a close reason that is not UTF-8")
	}
	return code, string(p[2:]), nil
}

// validCloseCode: the codes a close frame may carry (RFC 6455 §7.4).
func validCloseCode(code int) bool {
	switch {
	case code >= 3000 && code <= 4999:
		return true
	case code < 1000 || code > 1014:
		return false
	}
	return code != 1004 && code != 1005 && code != 1006
}

// maxFrameBatch is how much the writer gathers before it writes: frames
// of one Write go out together up to it, and a longer message goes out
// in parts of it.
const maxFrameBatch = 64 << 10

// appendFrameHeader appends the header of a masked client frame (fin set)
// of n payload bytes to b, and returns it with the mask key.
func appendFrameHeader(b []byte, op byte, n int) ([]byte, uint32) {
	b = append(b, 0x80|op)
	switch {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n < 1<<16:
		b = append(b, 0x80|126)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b = append(b, 0x80|127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	key := mrand.Uint32()
	return binary.LittleEndian.AppendUint32(b, key), key
}

// appendMasked appends p masked with key (RFC 6455 §5.3; key rotated so
// that its low byte masks p's first byte) and returns the key rotated for
// the byte after p.
func appendMasked(b, p []byte, key uint32) ([]byte, uint32) {
	start := len(b)
	b = append(b, p...)
	m := b[start:]
	key64 := uint64(key)<<32 | uint64(key)
	for len(m) >= 8 {
		binary.LittleEndian.PutUint64(m, binary.LittleEndian.Uint64(m)^key64)
		m = m[8:]
	}
	for i := range m {
		m[i] ^= byte(key)
		key = bits.RotateLeft32(key, -8)
	}
	return b, key
}
