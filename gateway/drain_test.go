package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/coder/websocket"
)

// A drain lets the running turn finish and loses nothing: new connections
// get 503, the health endpoint 503, a new request on the open connection
// is answered CodeNotDelivered without reaching the agent, a notification
// (session/cancel) still reaches it, and the connection closes only once
// the turn's answer is written and the client has come back for the
// session's stream: its stream ends before the connection's.
func TestDrainLetsTheRunningTurnFinish(t *testing.T) {
	g, url := start(t, newPipeDial(t, nil).Dial, nil)
	health := httptest.NewServer(g.Health())
	defer health.Close()
	c := &client{t: t, url: url}
	c.initialize()
	conn := c.open("")
	sid := newSession(t, c, conn, 1)
	sess := c.open(sid)
	if r := c.post(sid, prompt(10, sid, "wait")); r.status != 202 {
		t.Fatalf("prompt: %d %s", r.status, r.body)
	}
	sess.until(t, func(m map[string]any) bool { return chunkText(m) == "waiting" })

	drained := make(chan error, 1)
	go func() { drained <- g.Drain(context.Background()) }()
	waitFor(t, func() bool {
		resp, err := http.Get(health.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusServiceUnavailable
	})
	if r := (&client{t: t, url: url}).post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`); r.status != 503 || r.header.Get("Retry-After") == "" {
		t.Errorf("initialize while draining: %d %q, want 503 with Retry-After", r.status, r.body)
	}

	// A new request: answered in the gateway's name, on the session's stream.
	if r := c.post(sid, prompt(11, sid, "hello")); r.status != 202 {
		t.Fatalf("prompt while draining: %d %s", r.status, r.body)
	}
	m := sess.until(t, isResponse(11))
	e, _ := m["error"].(map[string]any)
	if code, _ := e["code"].(float64); code != acp.CodeNotDelivered {
		t.Fatalf("prompt while draining answered %v, want error %d", m, acp.CodeNotDelivered)
	}
	// The running turn goes on: its cancel is forwarded, and answered.
	if r := c.post(sid, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"`+sid+`"}}`); r.status != 202 {
		t.Fatalf("cancel while draining: %d %s", r.status, r.body)
	}
	if m := sess.until(t, isResponse(10)); result(m)["stopReason"] == nil {
		t.Fatalf("the running turn's answer: %v", m)
	}
	sess.ended(t)
	// The session's stream has ended; the connection waits for the client
	// to come back for it.
	if cn, _ := g.lookup(c.conn); cn == nil {
		t.Fatal("the connection closed before the client came back for its session's stream")
	}
	select {
	case err := <-drained:
		t.Fatalf("Drain returned %v before the connection closed", err)
	default:
	}
	if again := c.openStatus(sid); again.status != 404 {
		t.Fatalf("the ended session's stream asked again: %d, want 404", again.status)
	}
	conn.ended(t)
	if err := <-drained; err != nil {
		t.Fatalf("Drain: %v", err)
	}
}

// An idle connection closes at once; Drain returns when none is left.
func TestDrainClosesIdleConnections(t *testing.T) {
	g, url := start(t, newPipeDial(t, nil).Dial, nil)
	c := &client{t: t, url: url}
	c.initialize()
	conn := c.open("")
	newSession(t, c, conn, 1)
	if err := g.Drain(context.Background()); err != nil {
		t.Fatalf("Drain: %v", err)
	}
	conn.ended(t)
	if r := c.post("", prompt(2, "x", "hello")); r.status != 404 || !strings.Contains(r.body, "drained") {
		t.Errorf("a POST after the drain: %d %q, want 404 naming the drain", r.status, r.body)
	}
}

// A turn that does not end holds Drain only until its context ends;
// Shutdown then closes the connection.
func TestDrainDeadline(t *testing.T) {
	g, url := start(t, newPipeDial(t, nil).Dial, nil)
	c := &client{t: t, url: url}
	c.initialize()
	conn := c.open("")
	sid := newSession(t, c, conn, 1)
	sess := c.open(sid)
	c.post(sid, prompt(10, sid, "wait"))
	sess.until(t, func(m map[string]any) bool { return chunkText(m) == "waiting" })
	ctx, cancel := context.WithCancel(context.Background())
	drained := make(chan error, 1)
	go func() { drained <- g.Drain(ctx) }()
	// The drain has begun once the health endpoint says so; the turn holds it.
	waitFor(t, func() bool {
		rec := httptest.NewRecorder()
		g.Health().ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
		return rec.Code == 503
	})
	cancel()
	if err := <-drained; err != context.Canceled {
		t.Fatalf("Drain: %v, want context.Canceled", err)
	}
	if cn, _ := g.lookup(c.conn); cn == nil {
		t.Fatal("the running turn's connection closed at the deadline; Shutdown closes it")
	}
	sctx, scancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer scancel()
	if err := g.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	conn.ended(t)
}

// The health endpoint: 200 while serving, 503 once stopping, GET and HEAD
// only.
func TestHealth(t *testing.T) {
	g := New(newPipeDial(t, nil).Dial, nil)
	h := g.Health()
	for _, tc := range []struct {
		method string
		want   int
	}{{"GET", 200}, {"HEAD", 200}, {"POST", 405}} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tc.method, "/healthz", nil))
		if rec.Code != tc.want {
			t.Errorf("%s: %d, want %d", tc.method, rec.Code, tc.want)
		}
	}
	if err := g.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	if rec.Code != 503 || !strings.Contains(rec.Body.String(), "draining") {
		t.Errorf("after Shutdown: %d %q, want 503 draining", rec.Code, rec.Body.String())
	}
}

// Over WebSocket: a new request while draining is answered
// CodeNotDelivered, the running turn's cancel still reaches the agent,
// and the socket closes 1001 naming the drain only after the turn's
// answer.
func TestDrainWebSocket(t *testing.T) {
	g, url := start(t, newPipeDial(t, nil).Dial, nil)
	w, err := dialWS(t, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	w.until(isResponse(0))
	w.send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	sid := result(w.until(isResponse(1)))["sessionId"].(string)
	w.send(prompt(2, sid, "wait"))
	w.until(func(m map[string]any) bool { return chunkText(m) == "waiting" })

	drained := make(chan error, 1)
	go func() { drained <- g.Drain(context.Background()) }()
	// Until the drain has begun, a request is forwarded as usual: send
	// until one is refused (the agent echoes the others).
	for id := 3; ; id++ {
		w.send(`{"jsonrpc":"2.0","id":` + fmt.Sprint(id) + `,"method":"session/list","params":{}}`)
		m := w.until(isResponse(float64(id)))
		if e, _ := m["error"].(map[string]any); e != nil && e["code"] == float64(acp.CodeNotDelivered) {
			break
		}
	}
	w.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`, sid))
	if m := w.until(isResponse(2)); result(m)["stopReason"] != "cancelled" {
		t.Fatalf("the running turn's answer: %v", m)
	}
	_, err = w.recv()
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusGoingAway || !strings.Contains(ce.Reason, "(drained)") {
		t.Fatalf("after the answer: %v, want close 1001 naming the drain", err)
	}
	if err := <-drained; err != nil {
		t.Fatalf("Drain: %v", err)
	}
}
