// ws_frames_hostile_test.go tests the client's own WebSocket framing
// against a raw server that writes frames no library would: fragments with
// a ping between them, reserved bits, masked frames, bad lengths, stray
// continuations, close frames with codes and reasons.
package remote_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/acpclient/acp/remote"
)

// rawFrame is one server frame: b0 (FIN, RSV, opcode), the payload, and
// whether to (wrongly) mask it.
func rawFrame(b0 byte, payload string, masked bool) []byte {
	b := []byte{b0}
	mbit := byte(0)
	if masked {
		mbit = 0x80
	}
	switch n := len(payload); {
	case n < 126:
		b = append(b, mbit|byte(n))
	default:
		b = append(b, mbit|126)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	}
	if masked {
		b = append(b, 0, 0, 0, 0) // a zero key: the payload reads the same
	}
	return append(b, payload...)
}

// clientFrame is what the raw server read back from the client.
type clientFrame struct {
	op      byte
	payload []byte
}

// rawWSServer upgrades, writes wire (then, with hangup, ends its side of
// the TCP connection), then reports the client's frames (unmasked) on the
// channel until the connection ends.
func rawWSServer(t *testing.T, wire []byte, hangup bool) (*httptest.Server, <-chan clientFrame) {
	t.Helper()
	got := make(chan clientFrame, 16)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, rw := remote.AcceptWS(w, r, "")
		if conn == nil {
			return
		}
		defer conn.Close()
		rw.Write(wire)
		rw.Flush()
		if hangup {
			conn.(*net.TCPConn).CloseWrite()
		}
		defer close(got)
		br := bufio.NewReader(rw)
		for {
			op, masked, p, err := remote.ReadClientFrame(br)
			if err != nil {
				return
			}
			if !masked {
				t.Errorf("the client sent an unmasked frame (opcode %d)", op)
			}
			got <- clientFrame{op, p}
		}
	}))
	t.Cleanup(ts.Close)
	return ts, got
}

func TestHostileWSFraming(t *testing.T) {
	closeFrame := func(code uint16, reason string) []byte {
		return rawFrame(0x88, string(binary.BigEndian.AppendUint16(nil, code))+reason, false)
	}
	cat := func(parts ...[]byte) (b []byte) {
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	for _, tc := range []struct {
		name  string
		wire  []byte
		lines string // what the client reads before the end
		code  int    // the CloseError's
		proto bool   // a protocol violation: the client closes with 1002
		reply []byte // the client's frames back, as opcodes (pongs, close)
		hang  bool   // the server ends its side after wire
	}{
		{
			name: "fragments around a ping",
			wire: cat(rawFrame(0x01, `{"a":`, false), rawFrame(0x89, "hi", false), rawFrame(0x80, `1}`, false),
				rawFrame(0x81, "{\n\"b\":2}", false), rawFrame(0x82, "binary", false), rawFrame(0x81, " \t ", false),
				closeFrame(4000, "bye")),
			lines: "{\"a\":1}\n{ \"b\":2}\n",
			code:  4000,
			reply: []byte{0xa, 0x8},
		},
		{name: "reserved bits", wire: rawFrame(0xc1, "{}", false), code: 1006, proto: true, hang: true},
		{name: "masked", wire: rawFrame(0x81, "{}", true), code: 1006, proto: true, hang: true},
		{name: "stray continuation", wire: rawFrame(0x80, "{}", false), code: 1006, proto: true, hang: true},
		{name: "unknown opcode", wire: rawFrame(0x83, "{}", false), code: 1006, proto: true, hang: true},
		{name: "fragmented ping", wire: rawFrame(0x09, "x", false), code: 1006, proto: true, hang: true},
		{name: "new message inside one", wire: cat(rawFrame(0x01, "{", false), rawFrame(0x81, "{}", false)), code: 1006, proto: true, hang: true},
		{name: "close of one byte", wire: rawFrame(0x88, "x", false), code: 1006, proto: true, hang: true},
		{name: "close code 1005 on the wire", wire: closeFrame(1005, ""), code: 1006, proto: true, hang: true},
		{name: "64-bit length past 2^63", wire: []byte{0x81, 127, 0x80, 0, 0, 0, 0, 0, 0, 0}, code: 1006, proto: true, hang: true},
		{name: "empty close", wire: cat(rawFrame(0x81, "{}", false), rawFrame(0x88, "", false)), lines: "{}\n", code: 1005, reply: []byte{0x8}},
		{name: "cut in a frame", wire: []byte{0x81, 10, '{'}, code: 1006, hang: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, frames := rawWSServer(t, tc.wire, tc.hang)
			tr := &remote.WebSocketTransport{URL: ts.URL}
			conn, err := tr.Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			got, err := io.ReadAll(conn)
			if string(got) != tc.lines {
				t.Errorf("read %q, want %q", got, tc.lines)
			}
			var ce *remote.CloseError
			if !errors.As(err, &ce) || ce.Code != tc.code {
				t.Fatalf("ended with %v, want a CloseError with code %d", err, tc.code)
			}
			if tc.code == 4000 && ce.Reason != "bye" {
				t.Errorf("reason %q, want bye", ce.Reason)
			}
			want := tc.reply
			if tc.proto {
				want = []byte{0x8}
			}
			for i, op := range want {
				f, ok := <-frames
				if !ok || f.op != op {
					t.Fatalf("client frame %d: opcode %d (%v), want %d", i, f.op, ok, op)
				}
				switch {
				case op == 0xa && string(f.payload) != "hi":
					t.Errorf("pong %q, want the ping's payload", f.payload)
				case op == 0x8 && tc.proto && (len(f.payload) < 2 || binary.BigEndian.Uint16(f.payload) != 1002):
					t.Errorf("close %x, want 1002", f.payload)
				case op == 0x8 && tc.code == 4000 && (len(f.payload) < 2 || binary.BigEndian.Uint16(f.payload) != 4000):
					t.Errorf("close %x, want the server's 4000 echoed", f.payload)
				case op == 0x8 && tc.code == 1005 && len(f.payload) != 0:
					t.Errorf("close %x, want an empty one echoed", f.payload)
				}
			}
		})
	}
}
