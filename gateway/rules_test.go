package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// The RFD's Streamable HTTP flow end to end: initialize → 200 with
// Acp-Connection-Id; session/new → 202, its response on the connection
// stream; prompt → 202, updates and response on the session stream; a
// permission round (the agent's request on the session stream, the
// client's answer posted with Acp-Session-Id); cancel; DELETE → 202 and
// the streams end; the id is then unknown (404).
func TestHTTPFlow(t *testing.T) {
	d := newPipeDial(t, nil)
	_, url := start(t, d.Dial, nil)
	c := &client{t: t, url: url}
	r := c.initialize()
	if c.conn == "" || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("initialize: header %q, content type %q", c.conn, r.header.Get("Content-Type"))
	}
	var init map[string]any
	if json.Unmarshal([]byte(r.body), &init) != nil || init["id"] != 0.0 || result(init)["protocolVersion"] != 1.0 {
		t.Fatalf("initialize body: %s", r.body)
	}
	conn := c.open("")
	sid := newSession(t, c, conn, 1)
	sess := c.open(sid)

	if r := c.post(sid, prompt(2, sid, "hello")); r.status != 202 || r.body != "" {
		t.Fatalf("prompt: %d %q", r.status, r.body)
	}
	if got := chunkText(sess.next(t)); got != "echo:hello" {
		t.Fatalf("first session event: %q", got)
	}
	if m := sess.next(t); !isResponse(2)(m) || result(m)["stopReason"] != "end_turn" {
		t.Fatalf("prompt response: %v", m)
	}

	// Permission round.
	c.post(sid, prompt(3, sid, "permission"))
	req := sess.until(t, isMethod("session/request_permission"))
	answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}`, mustJSON(req["id"]))
	if r := c.post("", answer); r.status != 400 || !strings.Contains(r.body, "Missing Acp-Session-Id") {
		t.Fatalf("answer without the session header: %d %s", r.status, r.body)
	}
	if r := c.post("other", answer); r.status != 400 || !strings.Contains(r.body, "Mismatched") {
		t.Fatalf("answer with another session header: %d %s", r.status, r.body)
	}
	if r := c.post(sid, answer); r.status != 202 {
		t.Fatalf("answer: %d %s", r.status, r.body)
	}
	if got := chunkText(sess.until(t, func(m map[string]any) bool { return chunkText(m) != "" })); got != "outcome:allow" {
		t.Fatalf("after permission: %q", got)
	}
	sess.until(t, isResponse(3))

	// Cancel.
	c.post(sid, prompt(4, sid, "wait"))
	sess.until(t, func(m map[string]any) bool { return chunkText(m) == "waiting" })
	if r := c.post(sid, fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`, sid)); r.status != 202 {
		t.Fatalf("cancel: %d %s", r.status, r.body)
	}
	if m := sess.until(t, isResponse(4)); result(m)["stopReason"] != "cancelled" {
		t.Fatalf("cancelled prompt: %v", m)
	}

	if r := c.do("DELETE", "", ""); r.status != 202 {
		t.Fatalf("DELETE: %d %s", r.status, r.body)
	}
	conn.ended(t)
	sess.ended(t)
	if r := c.post(sid, prompt(5, sid, "late")); r.status != 404 || !strings.Contains(r.body, "client closed") {
		t.Fatalf("after DELETE: %d %s", r.status, r.body)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// The RFD's "Content Negotiation and Validation" and "Unified Endpoint
// Routing" statuses.
func TestHTTPStatuses(t *testing.T) {
	d := newPipeDial(t, nil)
	_, url := start(t, d.Dial, nil)
	c := &client{t: t, url: url}
	c.initialize()
	c.open("")
	other := &client{t: t, url: url, conn: "00000000-0000-4000-8000-000000000000"}
	none := &client{t: t, url: url}
	cases := []struct {
		name   string
		got    reply
		status int
		body   string
	}{
		{"POST text/plain", c.do("POST", "", `{}`, "Content-Type", "text/plain"), 415, ""},
		{"batch", c.post("", `[{"jsonrpc":"2.0","id":1,"method":"x"}]`), 501, "batches"},
		{"invalid JSON", c.post("", `{"jsonrpc":`), 400, "Invalid JSON"},
		{"not an object", c.post("", `"x"`), 400, "Invalid JSON-RPC"},
		{"no connection id", none.post("", `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}`), 400, "Missing Acp-Connection-Id"},
		{"unknown connection id", other.post("", `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}`), 404, "Unknown Acp-Connection-Id"},
		{"initialize on a connection", c.post("", `{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":1}}`), 400, "Initialize not allowed"},
		{"initialize without id", none.post("", `{"jsonrpc":"2.0","id":null,"method":"initialize","params":{"protocolVersion":1}}`), 400, "must include an ID"},
		{"session method without header", c.post("", `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"prompt":[]}}`), 400, "Missing Acp-Session-Id"},
		{"sessionId without header", c.post("", `{"jsonrpc":"2.0","id":1,"method":"_x/y","params":{"sessionId":"s"}}`), 400, "Missing Acp-Session-Id"},
		{"mismatched session", c.post("a", prompt(1, "b", "x")), 400, "Mismatched Acp-Session-Id"},
		{"bad id type", c.post("s", `{"jsonrpc":"2.0","id":{},"method":"session/prompt","params":{"sessionId":"s"}}`), 400, "Invalid JSON-RPC id"},
		{"neither request nor response", c.post("", `{"jsonrpc":"2.0"}`), 400, "neither"},
		{"GET without Accept", c.do("GET", "", "", "Accept", "application/json"), 406, ""},
		{"GET no connection id", none.do("GET", "", "", "Accept", "text/event-stream"), 400, "Missing Acp-Connection-Id"},
		{"GET unknown connection id", other.do("GET", "", "", "Accept", "text/event-stream"), 404, "Unknown"},
		{"DELETE no connection id", none.do("DELETE", "", ""), 400, "Missing Acp-Connection-Id"},
		{"DELETE unknown connection id", other.do("DELETE", "", ""), 404, "Unknown"},
		{"PUT", c.do("PUT", "", ""), 405, ""},
	}
	for _, tc := range cases {
		if tc.got.status != tc.status || !strings.Contains(tc.got.body, tc.body) {
			t.Errorf("%s: %d %q, want %d containing %q", tc.name, tc.got.status, tc.got.body, tc.status, tc.body)
		}
	}
	if got := c.do("PUT", "", "").header.Get("Allow"); got != "GET, POST, DELETE" {
		t.Errorf("405 Allow: %q", got)
	}
}

// A stream takes one receiver at a time (409, as the TypeScript server);
// once it leaves, another may attach and gets what was queued meanwhile.
func TestStreamOneReceiver(t *testing.T) {
	d := newPipeDial(t, nil)
	g, url := start(t, d.Dial, nil)
	c := &client{t: t, url: url}
	c.initialize()
	conn := c.open("")
	if s := c.openStatus(""); s.status != http.StatusConflict {
		t.Fatalf("second receiver: %d", s.status)
	}
	sid := newSession(t, c, conn, 1)
	sess := c.open(sid)
	if s := c.openStatus(sid); s.status != http.StatusConflict {
		t.Fatalf("second session receiver: %d", s.status)
	}
	sess.body.Close()
	<-sess.done
	// Wait until the gateway has seen the receiver go (a message written
	// to a receiver that is going is lost with it: v1 has no replay), then
	// queue the prompt's output with no receiver, then attach again.
	g.mu.Lock()
	gc := g.conns[c.conn]
	g.mu.Unlock()
	waitFor(t, func() bool {
		gc.mu.Lock()
		defer gc.mu.Unlock()
		st := gc.streams[sid]
		return st == nil || !st.receiver
	})
	c.post(sid, prompt(2, sid, "queued"))
	waitFor(t, func() bool {
		gc.mu.Lock()
		defer gc.mu.Unlock()
		st := gc.streams[sid]
		return st != nil && len(st.queue) == 2 // the chunk and the response
	})
	again := c.open(sid)
	if got := chunkText(again.next(t)); got != "echo:queued" {
		t.Fatalf("after reattaching: %q", got)
	}
}

// The RFD's resume flow: a new connection, the session's stream opened
// before session/load (the session is not known on the new connection yet,
// as the TypeScript client does it), the replay on the session stream, and
// the load response on the connection stream.
func TestResumeSessionOnNewConnection(t *testing.T) {
	d := newPipeDial(t, nil)
	_, url := start(t, d.Dial, nil)
	c := &client{t: t, url: url}
	c.initialize()
	conn := c.open("")
	sid := newSession(t, c, conn, 1)
	sess := c.open(sid)
	c.post(sid, prompt(2, sid, "remember me"))
	sess.until(t, isResponse(2))
	c.do("DELETE", "", "")

	c2 := &client{t: t, url: url}
	c2.initialize()
	conn2 := c2.open("")
	sess2 := c2.open(sid)
	load := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"session/load","params":{"sessionId":%q,"cwd":"/tmp","mcpServers":[]}}`, sid)
	if r := c2.post(sid, load); r.status != 202 {
		t.Fatalf("session/load: %d %s", r.status, r.body)
	}
	if got := chunkText(sess2.until(t, func(m map[string]any) bool { return chunkText(m) != "" })); got != "echo:remember me" {
		t.Fatalf("replay: %q", got)
	}
	conn2.until(t, isResponse(7))
}

// The RFD requires HTTP/2 for Streamable HTTP: NewServer speaks it without
// TLS (h2c), and the whole flow runs over one multiplexed TCP connection,
// long-lived streams beside the POSTs. The client is one HTTP/2 connection
// (http.Transport.NewClientConn), so that the count is the server's
// doing: a Transport's pool may dial a second connection of its own accord
// under load (CI once saw 2), which says nothing of the server.
func TestHTTP2(t *testing.T) {
	d := newPipeDial(t, nil)
	g := New(d.Dial, nil)
	srv := NewServer(g)
	var conns atomic.Int64 // TCP connections the server accepted
	srv.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: p}
	cc, err := tr.NewClientConn(context.Background(), "http", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		g.Close()
		srv.Close()
		cc.Close()
	})
	c := &client{t: t, url: "http://" + ln.Addr().String() + "/acp", hc: &http.Client{Transport: cc}, h2: true}
	c.initialize()
	conn := c.open("")
	sid := newSession(t, c, conn, 1)
	sess := c.open(sid)
	c.post(sid, prompt(2, sid, "over h2"))
	if got := chunkText(sess.next(t)); got != "echo:over h2" {
		t.Fatalf("chunk %q", got)
	}
	sess.until(t, isResponse(2))
	if err := cc.Err(); err != nil {
		t.Fatalf("the connection failed: %v", err)
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("the server accepted %d TCP connections, want 1", n)
	}
}

// An SSE stream over HTTP/1.1 is sent as it is, not chunked, and ends
// with its connection (Transfer-Encoding: identity, which Go's server
// answers with Connection: close): one write an SSE batch where net/http's
// chunked writer made two (the chunk's header and the first 4 KiB of it,
// then the rest), and a client reading it with no chunk framing. (Over
// HTTP/2, TestHTTP2, the header is not sent.)
func TestSSEStreamNotChunked(t *testing.T) {
	d := newPipeDial(t, nil)
	_, u := start(t, d.Dial, nil)
	c := &client{t: t, url: u}
	c.initialize()
	conn := c.open("")
	sid := newSession(t, c, conn, 1)
	nc := rawSessionStream(t, c, sid)
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.TransferEncoding != nil || !resp.Close || resp.Header.Get("Transfer-Encoding") != "" {
		t.Fatalf("status %d, transfer encoding %q, close %v: want 200, none, the connection closed at the end", resp.StatusCode, resp.TransferEncoding, resp.Close)
	}
	c.post(sid, prompt(2, sid, "hi"))
	// The body is the events' bytes, with no chunk framing between them.
	var got []byte
	for !bytes.Contains(got, []byte(`"echo:hi"`)) {
		line, err := br.ReadSlice('\n')
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		got = append(got, line...)
	}
	if want := ":\n\ndata: {"; !bytes.HasPrefix(got, []byte(want)) {
		t.Fatalf("the stream began %q, want %q", got, want)
	}
}
