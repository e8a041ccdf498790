package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/internal/proctest"
	"github.com/acpclient/acp/remote"
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
			var tr acp.Transport
			switch profile {
			case "stdio":
				cmd := exec.Command("node", "agent.mjs")
				cmd.Dir = tsagentDir
				cmd.Env = append(os.Environ(), "TSAGENT_QUIET=1")
				tr = &acp.CommandTransport{Command: cmd}
			default:
				u := startTSServerB(b)
				if profile == "ws" {
					u = strings.Replace(u, "http://", "ws://", 1)
				}
				tr, _ = remote.New(u, remote.Options{})
			}
			conn, err := tr.Connect(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			f := &floorConn{conn: conn, buf: make([]byte, 64<<10)}
			f.call(b, 1, "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
			f.call(b, 2, "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, b.TempDir()))
			var sess struct {
				Result struct {
					SessionID string `json:"sessionId"`
				} `json:"result"`
			}
			if err := json.Unmarshal(f.last, &sess); err != nil || sess.Result.SessionID == "" {
				b.Fatalf("session/new answered %s (%v)", f.last, err)
			}
			var elapsed, cpu time.Duration
			turns := 0
			for b.Loop() {
				start := time.Now()
				cpu0, _ := proctest.CPU()
				lines := f.call(b, 3+turns, "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"flood %d"}]}`, sess.Result.SessionID, n))
				elapsed += time.Since(start)
				cpu1, _ := proctest.CPU()
				cpu += cpu1 - cpu0
				turns++
				if lines != n+1 {
					b.Fatalf("read %d lines, want %d", lines, n+1)
				}
			}
			b.ReportMetric(float64(n*turns)/elapsed.Seconds(), "updates/s")
			if _, ok := proctest.CPU(); ok {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(n*turns), "client-cpu-ns/update")
			}
		})
	}
}

// floorConn writes a call and counts the lines it reads until the call's
// answer; it keeps only the answer's line.
type floorConn struct {
	conn acp.Conn
	buf  []byte
	part []byte // a line begun in the last read
	last []byte // the answer's line
}

func (f *floorConn) call(b *testing.B, id int, method, params string) int {
	b.Helper()
	if _, err := fmt.Fprintf(f.conn, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params); err != nil {
		b.Fatal(err)
	}
	answer := []byte(fmt.Sprintf(`"id":%d,`, id))
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
			// Only an answer has no "method"; the check reads a line's
			// first bytes only.
			if bytes.Contains(line[:min(len(line), 40)], answer) {
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
