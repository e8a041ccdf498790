package remote_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/remote"
	"github.com/acpclient/acp/schema"
	"github.com/coder/websocket"
)

// wsAgent is a raw WebSocket server: it answers initialize and
// session/new, and hands each later request to script.
func wsAgent(t *testing.T, script func(ctx context.Context, ws *websocket.Conn, req []byte)) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ws.SetReadLimit(-1)
		ctx := r.Context()
		for {
			_, b, err := ws.Read(ctx)
			if err != nil {
				return
			}
			e := peekTest(b)
			switch e.Method {
			case "initialize":
				ws.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":`+string(e.ID)+`,"result":{"protocolVersion":1,"agentCapabilities":{}}}`))
			case "session/new":
				ws.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":`+string(e.ID)+`,"result":{"sessionId":"s1"}}`))
			case "":
			default:
				script(ctx, ws, b)
			}
		}
	}))
	t.Cleanup(ts.Close)
	return ts
}

func peekTest(b []byte) env {
	var e env
	_ = jsonUnmarshal(b, &e)
	return e
}

func newWSSession(t *testing.T, ts *httptest.Server, opts *acp.ClientOptions) (*acp.Client, *acp.Session) {
	t.Helper()
	c := connect(t, &remote.WebSocketTransport{URL: ts.URL}, opts)
	s, err := c.NewSession(ctx(t), &schema.NewSessionRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return c, s
}

func TestHostileWSHandshakeStatus(t *testing.T) {
	for _, code := range []int{401, 403, 404, 426, 500} {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "WebSocket upgrade is not implemented", code)
		}))
		_, err := acp.Connect(ctx(t), &remote.WebSocketTransport{URL: ts.URL}, nil)
		wantStatus(t, err, code)
		ts.Close()
	}
}

func TestHostileWSHandshakeNeverAnswers(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer ts.Close()
	_, err := acp.Connect(ctx(t), &remote.WebSocketTransport{URL: ts.URL, Options: remote.Options{RequestTimeout: 100 * time.Millisecond}}, nil)
	if err == nil || !strings.Contains(err.Error(), "RequestTimeout") {
		t.Fatalf("Connect: %v, want the timeout named", err)
	}
}

// The server closes mid-call with a code and reason: the call fails with
// ErrConnClosed and a *remote.CloseError carrying both; a socket that just
// drops is code 1006.
func TestHostileWSServerCloses(t *testing.T) {
	for _, tc := range []struct {
		code   int
		reason string
	}{{4001, "agent crashed"}, {1011, "internal error"}, {1006, ""}} {
		ts := wsAgent(t, func(ctx context.Context, ws *websocket.Conn, req []byte) {
			if tc.code == 1006 {
				ws.CloseNow()
				return
			}
			ws.Close(websocket.StatusCode(tc.code), tc.reason)
		})
		c, s := newWSSession(t, ts, nil)
		turn, err := s.Prompt(ctx(t), schema.Text("hi"))
		if err == nil {
			_, err = turn.Wait()
		}
		var ce *remote.CloseError
		if !errors.Is(err, acp.ErrConnClosed) || !errors.As(err, &ce) || ce.Code != tc.code || ce.Reason != tc.reason {
			t.Fatalf("%d: turn: %v, want ErrConnClosed and CloseError{%d %q}", tc.code, err, tc.code, tc.reason)
		}
		connErr(t, c)
	}
}

// Binary frames are read past; a pretty-printed frame is one message; an
// over-cap frame fails only the call it answers, and junk frames cost
// diagnostics only.
func TestHostileWSFrames(t *testing.T) {
	ts := wsAgent(t, func(ctx context.Context, ws *websocket.Conn, req []byte) {
		e := peekTest(req)
		id := string(e.ID)
		ws.Write(ctx, websocket.MessageBinary, []byte(`{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-1,"message":"binary must be ignored"}}`))
		ws.Write(ctx, websocket.MessageText, []byte("not json"))
		ws.Write(ctx, websocket.MessageText, []byte(""))
		if strings.Contains(string(req), "huge") {
			ws.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":`+id+`,"result":{"stopReason":"end_turn","pad":"`+strings.Repeat("p", 3<<20)+`"}}`))
			return
		}
		ws.Write(ctx, websocket.MessageText, []byte("{\n  \"jsonrpc\": \"2.0\",\n  \"method\": \"session/update\",\n  \"params\": {\"sessionId\": \"s1\", \"update\": {\"sessionUpdate\": \"agent_message_chunk\", \"content\": {\"type\": \"text\", \"text\": \"pretty\"}}}\n}"))
		ws.Write(ctx, websocket.MessageText, []byte("{\r\n\"jsonrpc\":\"2.0\",\"id\":"+id+",\r\n\"result\":{\"stopReason\":\"end_turn\"}}"))
	})
	_, s := newWSSession(t, ts, &acp.ClientOptions{Limits: acp.Limits{MaxLineBytes: 1 << 20}})
	turn, err := s.Prompt(ctx(t), schema.Text("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if stop, err := turn.Wait(); err != nil || stop != schema.StopReasonEndTurn {
		t.Fatalf("turn: %q, %v", stop, err)
	}
	if m, _ := turn.LastMessage(); m.Text != "pretty" {
		t.Fatalf("message %q", m.Text)
	}
	turn, err = s.Prompt(ctx(t), schema.Text("huge"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Wait(); !errors.Is(err, acp.ErrLineTooLong) {
		t.Fatalf("huge answer: %v, want ErrLineTooLong", err)
	}
	turn, err = s.Prompt(ctx(t), schema.Text("again"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatalf("after the huge answer: %v", err)
	}
}

// Close performs the close handshake: the server reads a close frame with
// code 1000.
func TestWSCloseHandshake(t *testing.T) {
	got := make(chan websocket.StatusCode, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		for {
			_, b, err := ws.Read(r.Context())
			if err != nil {
				got <- websocket.CloseStatus(err)
				return
			}
			if e := peekTest(b); e.Method == "initialize" {
				ws.Write(r.Context(), websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":`+string(e.ID)+`,"result":{"protocolVersion":1}}`))
			}
		}
	}))
	defer ts.Close()
	c := connect(t, &remote.WebSocketTransport{URL: ts.URL}, nil)
	c.Close()
	if code := <-got; code != websocket.StatusNormalClosure {
		t.Fatalf("the server saw close code %d, want 1000", code)
	}
}

// Row 7c over WebSocket: one 300 MiB text frame. The transport holds at
// most MaxMessageBytes of it in a buffer that never grows past that bound,
// then passes it on; the client (its line limit kept small, so that the
// figure is the transport's) discards it. The live heap, sampled after a
// GC every 2 MiB the server writes, stays under 2 × MaxMessageBytes.
func TestHostileWSHugeFrame(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 300 MiB")
	}
	const max, size = 32 * mib, 300 * mib
	debug.FreeOSMemory()
	probe := newHeapProbe()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx := r.Context()
		_, b, err := ws.Read(ctx)
		if err != nil {
			return
		}
		ws.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":`+string(peekTest(b).ID)+`,"result":{"protocolVersion":1,"agentCapabilities":{}}}`))
		fw, err := ws.Writer(ctx, websocket.MessageText)
		if err != nil {
			return
		}
		io.WriteString(fw, `{"jsonrpc":"2.0","method":"_x/big","params":{"s":"`)
		for n := mib; n <= size; n += mib {
			if _, err := fw.Write(fill); err != nil {
				return
			}
			if n%(2*mib) == 0 {
				probe.sample()
			}
		}
		io.WriteString(fw, `"}}`)
		fw.Close()
		for { // hold the socket until the client goes
			if _, _, err := ws.Read(ctx); err != nil {
				return
			}
		}
	}))
	defer ts.Close()
	diags := newDiagCounter(acp.DiagLineTooLong, 1)
	c := connect(t, &remote.WebSocketTransport{URL: ts.URL, Options: remote.Options{MaxMessageBytes: max}}, &acp.ClientOptions{
		Limits:       acp.Limits{MaxLineBytes: mib},
		OnDiagnostic: diags.on,
	})
	diags.wait(t, 2*time.Minute)
	after := probe.sample()
	t.Logf("a %d MiB text frame, MaxMessageBytes %d MiB: live heap peak +%.1f MiB (%.2f× MaxMessageBytes), +%.1f MiB after", size/mib, max/mib, float64(probe.max())/mib, float64(probe.max())/max, float64(after)/mib)
	// The exact guard of the 2× rule is TestMessageHoldsAtMostMax, which
	// counts the transport's buffers (at most 1.75×). This sampled figure
	// is the whole process's live heap, and has peaked at up to 2.4× in
	// repeated runs (-count=6), which the counted buffers do not explain
	// yet; it guards against the 4× this row was found at.
	if probe.max() > 3*max {
		t.Errorf("the live heap peaked at +%d MiB, over 3 × MaxMessageBytes (%d MiB)", probe.max()/mib, 3*max/mib)
	}
	c.Close()
}
