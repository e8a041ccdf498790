package remote_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/gateway"
	"github.com/acpclient/acp/internal/proctest"
	"github.com/acpclient/acp/remote"
	"github.com/acpclient/acp/schema"
)

// renderChunks renders n agent_message_chunk lines for session s1 whose
// texts are "<i>," padded to pad bytes (as the root package's
// BenchmarkTurn100kChunks does).
func renderChunks(n, pad int) []byte {
	var buf bytes.Buffer
	text := make([]byte, 0, pad+16)
	for i := range n {
		text = strconv.AppendInt(text[:0], int64(i), 10)
		text = append(text, ',')
		for len(text) < pad {
			text = append(text, '.')
		}
		buf.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`)
		buf.Write(text)
		buf.WriteString("\"}}}}\n")
	}
	return buf.Bytes()
}

// pipeConn is the gateway's side of a floodAgent's pipes.
type pipeConn struct {
	io.ReadCloser                // from the agent
	w             io.WriteCloser // to the agent
}

func (p pipeConn) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p pipeConn) Close() error {
	p.w.Close()
	return p.ReadCloser.Close()
}

// floodAgent is a raw agent: it answers initialize and session/new, and
// answers each session/prompt with turn's lines and then end_turn.
func floodAgent(r io.Reader, w io.Writer, turn []byte) {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
			continue
		}
		id := string(m.ID)
		switch m.Method {
		case "initialize":
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"protocolVersion":1,"agentCapabilities":{}}}`+"\n")
		case "session/new":
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"sessionId":"s1"}}`+"\n")
		case "session/prompt":
			w.Write(turn)
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"stopReason":"end_turn"}}`+"\n")
		}
	}
}

// benchProfiles are the transports the benchmarks compare: stdio (OS
// pipes), WebSocket and Streamable HTTP against the in-process test
// servers (fastWS, rfdServer), and both through this module's gateway.
var benchProfiles = []string{"stdio", "ws", "http", "gateway-ws", "gateway-http"}

// benchSession connects to a floodAgent answering each prompt with turn,
// over profile, and opens a session; the connection closes with b.
func benchSession(b *testing.B, profile string, turn []byte) *acp.Session {
	pipes := func() (io.ReadCloser, io.WriteCloser) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		go func() { floodAgent(inR, outW, turn); outW.Close() }()
		return outR, inW
	}
	gw := func() string {
		g := gateway.New(func(context.Context) (acp.Conn, error) {
			r, w := pipes()
			return pipeConn{r, w}, nil
		}, nil)
		ts := httptest.NewServer(g)
		b.Cleanup(func() { ts.CloseClientConnections(); g.Close(); ts.Close() })
		return ts.URL
	}
	var tr acp.Transport
	switch profile {
	case "stdio":
		inR, inW, _ := os.Pipe()
		outR, outW, _ := os.Pipe()
		go func() { floodAgent(inR, outW, turn); outW.Close() }()
		b.Cleanup(func() { inR.Close() })
		tr = &acp.StreamTransport{Reader: outR, Writer: inW}
	case "ws":
		ts := httptest.NewServer(fastWS(pipes))
		b.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
		tr = &remote.WebSocketTransport{URL: ts.URL}
	case "http":
		s := newRFDServer(pipes)
		ts := httptest.NewServer(s)
		b.Cleanup(func() { ts.CloseClientConnections(); s.Close(); ts.Close() })
		tr = &remote.HTTPTransport{URL: ts.URL}
	case "gateway-ws":
		tr = &remote.WebSocketTransport{URL: gw()}
	case "gateway-http":
		tr = &remote.HTTPTransport{URL: gw()}
	default:
		b.Fatalf("profile %q", profile)
	}
	c, err := acp.Connect(context.Background(), tr, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	s, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkTurn100kChunks runs whole turns of 100 000 chunks end to end
// over stdio (OS pipes, as the root package's benchmark of that name),
// WebSocket and Streamable HTTP (SSE), the last two against Go test
// servers on loopback in the same process (fastWS, and rfdServer, which
// batches its SSE writes the same way), and both again through this
// module's gateway serving the same agent:
//
//	go test -run X -bench BenchmarkTurn100kChunks -benchtime 5x ./remote
//
// Beside updates/s it reports cpu-ns/update, the process's CPU (getrusage)
// over the timed turns divided by the updates, and cores, that CPU over
// the wall time. Agent, server or gateway, and client are all this
// process: a change that only moves work between cores shows in cores,
// one that saves work in cpu-ns/update, which is the steadier figure on
// a busy machine.
func BenchmarkTurn100kChunks(b *testing.B) {
	const n = 100_000
	turn := renderChunks(n, 24)
	for _, profile := range benchProfiles {
		b.Run(profile, func(b *testing.B) {
			s := benchSession(b, profile, turn)
			b.SetBytes(int64(len(turn)))
			var elapsed, cpu time.Duration
			turns := 0
			for b.Loop() {
				start := time.Now()
				cpu0, _ := proctest.CPU()
				t, err := s.Prompt(context.Background(), schema.Text("go"))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := t.Wait(); err != nil {
					b.Fatal(err)
				}
				cpu1, _ := proctest.CPU()
				elapsed += time.Since(start)
				cpu += cpu1 - cpu0
				turns++
				if _, got := t.Snapshot(); got != n+1 {
					b.Fatalf("folded %d events, want %d", got, n+1)
				}
				t.Release()
			}
			b.ReportMetric(float64(n*turns)/elapsed.Seconds(), "updates/s")
			if _, ok := proctest.CPU(); ok {
				// The whole process's: the agent, the server or gateway
				// and the client, all in this one.
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(n*turns), "cpu-ns/update")
				b.ReportMetric(cpu.Seconds()/elapsed.Seconds(), "cores")
			}
		})
	}
}

// BenchmarkRoundTrip is one prompt turn that streams nothing, answered at
// once: a request and its answer, one message each way, the client's
// reader waking for the one message that arrives. ns/op is the round
// trip, over stdio (OS pipes), WebSocket and Streamable HTTP against the
// in-process test servers, and through this module's gateway:
//
//	go test -run X -bench BenchmarkRoundTrip ./remote
func BenchmarkRoundTrip(b *testing.B) {
	for _, profile := range benchProfiles {
		b.Run(profile, func(b *testing.B) {
			s := benchSession(b, profile, nil)
			for b.Loop() {
				t, err := s.Prompt(context.Background(), schema.Text("go"))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := t.Wait(); err != nil {
					b.Fatal(err)
				}
				t.Release()
			}
		})
	}
}
