package gateway

// A drain and ACP v2's turns: the answer to session/prompt only accepts
// the prompt, and the turn runs on until the agent reports idle.

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/acpclient/acp"
	"github.com/coder/websocket"
)

// stateOf is a v2 state_update's state, "" for any other message.
func stateOf(m map[string]any) string {
	p, _ := m["params"].(map[string]any)
	u, _ := p["update"].(map[string]any)
	if u["sessionUpdate"] != "state_update" {
		return ""
	}
	s, _ := u["state"].(string)
	return s
}

// A v2 turn whose prompt the agent accepted holds the drain until the
// agent reports the session idle: its answer ({messageId}) came long
// before, and closing the connection then would cut the turn short, which
// the client could not send again (the agent has it). Meanwhile new
// requests are refused CodeNotDelivered; the turn's cancel still reaches
// the agent, and the socket closes 1001 only after the idle.
func TestDrainWaitsForV2Turn(t *testing.T) {
	opts := scriptOptions()
	opts.Version = 2
	g, url := start(t, newPipeDial(t, opts).Dial, nil)
	w, err := dialWS(t, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"capabilities":{}}}`)
	w.until(isResponse(0))
	w.send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	sid := result(w.until(isResponse(1)))["sessionId"].(string)
	w.send(prompt(2, sid, "wait"))
	if m := w.until(isResponse(2)); result(m)["messageId"] == nil {
		t.Fatalf("the v2 prompt's answer: %v, want {messageId}", m)
	}
	w.until(func(m map[string]any) bool { return chunkText(m) == "waiting" })

	drained := make(chan error, 1)
	go func() { drained <- g.Drain(context.Background()) }()
	// The prompt is answered: only the running turn holds the connection.
	for id := 3; ; id++ {
		w.send(`{"jsonrpc":"2.0","id":` + fmt.Sprint(id) + `,"method":"session/list","params":{}}`)
		m := w.until(isResponse(float64(id)))
		if e, _ := m["error"].(map[string]any); e != nil && e["code"] == float64(acp.CodeNotDelivered) {
			break
		}
	}
	select {
	case err := <-drained:
		t.Fatalf("Drain returned %v while the v2 turn runs", err)
	default:
	}
	w.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`, sid))
	w.until(func(m map[string]any) bool { return stateOf(m) == "idle" })
	_, err = w.recv()
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusGoingAway || !strings.Contains(ce.Reason, "(drained)") {
		t.Fatalf("after the idle: %v, want close 1001 naming the drain", err)
	}
	if err := <-drained; err != nil {
		t.Fatalf("Drain: %v", err)
	}
}

// Over Streamable HTTP likewise: the session's stream ends only after the
// idle, and the connection closes once the client came back for it.
func TestDrainWaitsForV2TurnHTTP(t *testing.T) {
	opts := scriptOptions()
	opts.Version = 2
	g, url := start(t, newPipeDial(t, opts).Dial, nil)
	c := &client{t: t, url: url}
	r := c.post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"capabilities":{}}}`)
	if r.status != 200 {
		t.Fatalf("initialize: %d %s", r.status, r.body)
	}
	c.conn = r.header.Get(HeaderConnectionID)
	conn := c.open("")
	sid := newSession(t, c, conn, 1)
	sess := c.open(sid)
	if r := c.post(sid, prompt(10, sid, "wait")); r.status != 202 {
		t.Fatalf("prompt: %d %s", r.status, r.body)
	}
	sess.until(t, isResponse(10))
	sess.until(t, func(m map[string]any) bool { return chunkText(m) == "waiting" })

	drained := make(chan error, 1)
	go func() { drained <- g.Drain(context.Background()) }()
	waitFor(t, func() bool {
		rec := httptest.NewRecorder()
		g.Health().ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
		return rec.Code == 503
	})
	if r := c.post(sid, prompt(11, sid, "hello")); r.status != 202 {
		t.Fatalf("prompt while draining: %d %s", r.status, r.body)
	}
	m := sess.until(t, isResponse(11))
	if e, _ := m["error"].(map[string]any); e == nil || e["code"] != float64(acp.CodeNotDelivered) {
		t.Fatalf("prompt while draining answered %v, want error %d", m, acp.CodeNotDelivered)
	}
	if cn, _ := g.lookup(c.conn); cn == nil {
		t.Fatal("the connection closed while its v2 turn runs")
	}
	if r := c.post(sid, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"`+sid+`"}}`); r.status != 202 {
		t.Fatalf("cancel while draining: %d %s", r.status, r.body)
	}
	sess.until(t, func(m map[string]any) bool { return stateOf(m) == "idle" })
	sess.ended(t)
	if again := c.openStatus(sid); again.status != 404 {
		t.Fatalf("the ended session's stream asked again: %d, want 404", again.status)
	}
	conn.ended(t)
	if err := <-drained; err != nil {
		t.Fatalf("Drain: %v", err)
	}
}
