package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/acpclient/acp"
)

// BenchmarkTSFloodFloor is BenchmarkTSFlood100k's turn received by the
// least a client can do: it writes the three calls of the turn by hand
// (initialize, session/new, session/prompt), then only counts the lines
// it reads until the prompt's answer, over the same transports (stdio,
// and our remote transport's WebSocket and Streamable HTTP against the
// TypeScript SDK's server). Its ratios to stdio are the most any client
// could reach against that server: the pace the server sets, measured
// apart from our client's engine and fold.
//
//	go test -run X -bench 'TSFlood100k|TSFloodFloor' -benchtime 2x ./interop
func BenchmarkTSFloodFloor(b *testing.B) {
	const n = 100_000
	for _, profile := range []string{"stdio", "http", "ws"} {
		b.Run(profile, func(b *testing.B) {
			f := dialFloor(b, profile, func() string { return startTSServerB(b) })
			floodTurns(b, n, func() (check func()) {
				lines := f.flood(b, n)
				return func() {
					if lines != n+1 {
						b.Fatalf("read %d lines, want %d", lines, n+1)
					}
				}
			})
		})
	}
}

// TestTSFloodFloorCounts keeps BenchmarkTSFloodFloor's client a floor
// that reads the whole turn: over each transport, a flood of n updates
// from the TypeScript agent is n lines and the answer, twice in one
// session (the second prompt's lines must not be mistaken for the first's).
func TestTSFloodFloorCounts(t *testing.T) {
	const n = 300
	for _, profile := range []string{"stdio", "http", "ws"} {
		t.Run(profile, func(t *testing.T) {
			if profile == "stdio" {
				npm := needTool(t, "npm")
				needTool(t, "node")
				npmOnce.Do(func() { npmErr = installTSAgent(npm) })
				if npmErr != nil {
					t.Fatalf("installing the TypeScript agent's dependencies failed: %v", npmErr)
				}
			}
			f := dialFloor(t, profile, func() string { return startTSServer(t) })
			for turn := range 2 {
				if lines := f.flood(t, n); lines != n+1 {
					t.Fatalf("turn %d: read %d lines, want %d", turn, lines, n+1)
				}
			}
		})
	}
}

// dialFloor connects a floorConn to the TypeScript agent over profile
// (stdio, or over http or ws to the server at the URL start returns) and
// opens a session with it.
func dialFloor(tb testing.TB, profile string, start func() string) *floorConn {
	tb.Helper()
	conn, err := floodTransport(profile, start).Connect(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	f := &floorConn{conn: conn, buf: make([]byte, 64<<10)}
	f.call(tb, "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
	f.call(tb, "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, tb.TempDir()))
	var sess struct {
		Result struct {
			SessionID string `json:"sessionId"`
		} `json:"result"`
	}
	if err := json.Unmarshal(f.last, &sess); err != nil || sess.Result.SessionID == "" {
		tb.Fatalf("session/new answered %s (%v)", f.last, err)
	}
	f.session = sess.Result.SessionID
	return f
}

// flood prompts "flood n" and returns the lines read until the answer.
func (f *floorConn) flood(tb testing.TB, n int) int {
	return f.call(tb, "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"flood %d"}]}`, f.session, n))
}

// floorConn writes a call and counts the lines it reads until the call's
// answer; it keeps only the answer's line.
type floorConn struct {
	conn    acp.Conn
	buf     []byte
	part    []byte // a line begun in the last read
	last    []byte // the answer's line
	id      int    // the last call's id
	session string
}

// call writes the call of method with params and returns the lines read
// up to and including its answer, which it keeps in f.last.
func (f *floorConn) call(b testing.TB, method, params string) int {
	b.Helper()
	f.id++
	if _, err := fmt.Fprintf(f.conn, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", f.id, method, params); err != nil {
		b.Fatal(err)
	}
	// The TypeScript SDK writes a response's id before its result or
	// error, and a request's id before its method: a line with this id
	// followed by either is the answer. The check reads a line's first
	// bytes only.
	result, failure := []byte(fmt.Sprintf(`"id":%d,"result"`, f.id)), []byte(fmt.Sprintf(`"id":%d,"error"`, f.id))
	lines := 0
	for {
		k, err := f.conn.Read(f.buf)
		data := f.buf[:k]
		for {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				f.part = append(f.part, data...)
				break
			}
			line := data[:i]
			if len(f.part) > 0 {
				line = append(f.part, line...)
				f.part = f.part[:0]
			}
			data = data[i+1:]
			lines++
			if head := line[:min(len(line), 48)]; bytes.Contains(head, result) || bytes.Contains(head, failure) {
				f.last = append(f.last[:0], line...)
				f.part = append(f.part[:0], data...)
				return lines
			}
		}
		if err == io.EOF {
			b.Fatalf("%s: the stream ended after %d lines", method, lines)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}
