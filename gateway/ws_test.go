package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

type wsClient struct {
	t    testing.TB
	ws   *websocket.Conn
	resp *http.Response
}

func dialWS(t testing.TB, url string, h http.Header) (*wsClient, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, strings.Replace(url, "http", "ws", 1), &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		return &wsClient{t: t, resp: resp}, err
	}
	ws.SetReadLimit(1 << 26)
	t.Cleanup(func() { ws.CloseNow() })
	return &wsClient{t: t, ws: ws, resp: resp}, nil
}

func (c *wsClient) send(s string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
		c.t.Fatal(err)
	}
}

func (c *wsClient) recv() (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		typ, b, err := c.ws.Read(ctx)
		if err != nil {
			return nil, err
		}
		if typ != websocket.MessageText {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			c.t.Fatalf("frame %q: %v", b, err)
		}
		return m, nil
	}
}

func (c *wsClient) until(f func(map[string]any) bool) map[string]any {
	c.t.Helper()
	for {
		m, err := c.recv()
		if err != nil {
			c.t.Fatal(err)
		}
		if f(m) {
			return m
		}
	}
}

// The WebSocket profile: the 101 carries Acp-Connection-Id; initialize,
// session/new, prompt, a permission round and cancel go over text frames;
// binary frames are ignored; a second initialize and bad JSON get JSON-RPC
// errors; closing the socket ends the agent connection.
func TestWebSocketFlow(t *testing.T) {
	d := newPipeDial(t, nil)
	g, url := start(t, d.Dial, nil)
	c, err := dialWS(t, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.resp.Header.Get(HeaderConnectionID) == "" {
		t.Fatal("no Acp-Connection-Id on the 101")
	}
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	if m := c.until(isResponse(0)); result(m)["protocolVersion"] != 1.0 {
		t.Fatalf("initialize: %v", m)
	}
	ctx := context.Background()
	if err := c.ws.Write(ctx, websocket.MessageBinary, []byte(`{"jsonrpc":"2.0","id":50,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`)); err != nil {
		t.Fatal(err)
	}
	c.send("{\n  \"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"session/new\",\n  \"params\": {\"cwd\": \"/tmp\", \"mcpServers\": []}\n}")
	m := c.until(func(m map[string]any) bool { _, ok := m["id"]; return ok })
	if !isResponse(1)(m) { // 50 would have come first had the binary frame been read
		t.Fatalf("first response %v, want id 1", m)
	}
	sid := result(m)["sessionId"].(string)
	c.send(prompt(2, sid, "hi"))
	if got := chunkText(c.until(func(m map[string]any) bool { return chunkText(m) != "" })); got != "echo:hi" {
		t.Fatalf("chunk %q", got)
	}
	c.until(isResponse(2))

	c.send(prompt(3, sid, "permission"))
	req := c.until(isMethod("session/request_permission"))
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":"reject"}}}`, mustJSON(req["id"])))
	if got := chunkText(c.until(func(m map[string]any) bool { return chunkText(m) != "" })); got != "outcome:reject" {
		t.Fatalf("after permission %q", got)
	}
	c.until(isResponse(3))

	c.send(prompt(4, sid, "wait"))
	c.until(func(m map[string]any) bool { return chunkText(m) == "waiting" })
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`, sid))
	if m := c.until(isResponse(4)); result(m)["stopReason"] != "cancelled" {
		t.Fatalf("cancel: %v", m)
	}

	c.send(`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":1}}`)
	if m := c.until(isResponse(5)); m["error"] == nil {
		t.Fatalf("second initialize: %v", m)
	}
	c.send(`{"jsonrpc":`)
	if m := c.until(func(m map[string]any) bool { return m["error"] != nil }); m["error"].(map[string]any)["code"] != -32700.0 {
		t.Fatalf("bad JSON: %v", m)
	}
	c.send(`[1]`)
	if m := c.until(func(m map[string]any) bool { return m["error"] != nil }); m["error"].(map[string]any)["code"] != -32600.0 {
		t.Fatalf("batch: %v", m)
	}

	c.ws.Close(websocket.StatusNormalClosure, "bye")
	waitConns(t, g, 0)
}

// waitConns waits until the gateway holds n connections.
func waitConns(t *testing.T, g *Gateway, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		g.mu.Lock()
		got := len(g.conns)
		g.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// The first WebSocket message must be initialize: anything else closes
// the socket with 1002 (the TypeScript server's rule).
func TestWebSocketFirstMessage(t *testing.T) {
	d := newPipeDial(t, nil)
	_, url := start(t, d.Dial, nil)
	c, err := dialWS(t, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}`)
	_, err = c.recv()
	if got := websocket.CloseStatus(err); got != websocket.StatusProtocolError {
		t.Fatalf("close status %v (%v), want 1002", got, err)
	}
}

// The Origin rule: a browser origin other than the gateway's own, and
// not allowed by a pattern, gets 403 on the upgrade (and on any method);
// no Origin (not a browser) passes; an allowed pattern passes.
func TestOrigin(t *testing.T) {
	d := newPipeDial(t, nil)
	_, url := start(t, d.Dial, &Options{AllowedOrigins: []string{"*.example.com"}})
	_, err := dialWS(t, url, http.Header{"Origin": {"https://evil.test"}})
	if err == nil {
		t.Fatal("a foreign Origin was upgraded")
	}
	if c, _ := dialWS(t, url, http.Header{"Origin": {"https://evil.test"}}); c.resp == nil || c.resp.StatusCode != 403 {
		t.Fatalf("foreign Origin: %v", c.resp)
	}
	if _, err := dialWS(t, url, http.Header{"Origin": {"https://app.example.com"}}); err != nil {
		t.Fatalf("allowed Origin: %v", err)
	}
	if _, err := dialWS(t, url, http.Header{"Origin": {url}}); err != nil {
		t.Fatalf("same Origin: %v", err)
	}
	if _, err := dialWS(t, url, nil); err != nil {
		t.Fatalf("no Origin: %v", err)
	}
	c := &client{t: t, url: url, header: http.Header{"Origin": {"http://evil.test"}}}
	if r := c.post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`); r.status != 403 {
		t.Fatalf("POST with a foreign Origin: %d", r.status)
	}
}

// With a Token, every request needs it; without, 401 and no agent starts.
func TestToken(t *testing.T) {
	d := newPipeDial(t, nil)
	_, url := start(t, d.Dial, &Options{Token: "s3cret"})
	for _, h := range []http.Header{nil, {"Authorization": {"Bearer wrong"}}, {"Authorization": {"Basic s3cret"}}} {
		c := &client{t: t, url: url, header: h}
		r := c.post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
		if r.status != 401 || r.header.Get("WWW-Authenticate") == "" {
			t.Fatalf("%v: %d %v", h, r.status, r.header)
		}
		if c, _ := dialWS(t, url, h); c.resp == nil || c.resp.StatusCode != 401 {
			t.Fatalf("WebSocket %v: %v", h, c.resp)
		}
	}
	if d.n != 0 {
		t.Fatalf("%d agents started without the token", d.n)
	}
	c := &client{t: t, url: url, header: http.Header{"Authorization": {"Bearer s3cret"}}}
	c.initialize()
	if _, err := dialWS(t, url, http.Header{"Authorization": {"bearer s3cret"}}); err != nil {
		t.Fatal(err)
	}
}

// AllowedHosts refuses a Host it does not list (DNS rebinding).
func TestAllowedHosts(t *testing.T) {
	d := newPipeDial(t, nil)
	_, url := start(t, d.Dial, &Options{AllowedHosts: []string{"localhost", "127.0.0.1", "::1"}})
	c := &client{t: t, url: url}
	c.initialize()
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{}`))
	req.Host = "evil.test"
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatalf("foreign Host: %d", resp.StatusCode)
	}
}

// Shutdown closes WebSockets with 1001 (going away), ends SSE streams,
// shuts every agent down, and refuses new connections with 503.
func TestShutdown(t *testing.T) {
	d := newFreshDial(t)
	g, url := start(t, d.Dial, nil)
	w, err := dialWS(t, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	w.until(isResponse(0))
	c := &client{t: t, url: url}
	c.initialize()
	s := c.open("")
	if err := g.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := w.recv(); websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Fatalf("WebSocket: %v", err)
	}
	s.ended(t)
	if n := d.live.Load(); n != 0 {
		t.Fatalf("%d agents alive", n)
	}
	if r := (&client{t: t, url: url}).post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`); r.status != 503 {
		t.Fatalf("initialize after Shutdown: %d", r.status)
	}
}
