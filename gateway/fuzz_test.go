package gateway

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// envelopeSeeds are messages of every shape the gateway routes by, and
// near misses.
var envelopeSeeds = []string{
	`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`,
	`{"jsonrpc":"2.0","id":"a","method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`,
	`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}`,
	`{"jsonrpc":"2.0","id":7,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}`,
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}`,
	` { "id" : -1.5e3 , "method" : "x" , "params" : [ 1 , "two" ] } `,
	`{"id":[1],"method":"x"}`, `{"id":{},"result":1}`, `{"method":null}`, `{"params":{"sessionId":7}}`,
	`{"params":{"sessionId":"\u0000\ud800"}}`, `{"id":"\"\\\/\b\f\n\r\t"}`, `{"a":"{\"id\":1}"}`,
	`[]`, `[{"id":1}]`, `null`, `1`, `"s"`, `{`, `{"id":1}}`, `{"id":01}`, "{\"a\":\"\n\"}", "\xff",
	`{"id":1,"id":2,"method":"x","method":"y"}`, `{"id":` + strings.Repeat("9", 1100) + `}`,
}

// FuzzEnvelope: compactInPlace agrees with json.Compact and leaves one
// line; parseEnvelope, idKey and the routing predicates never panic and
// agree with each other; an id that parses makes a valid error reply.
func FuzzEnvelope(f *testing.F) {
	for _, s := range envelopeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want bytes.Buffer
		werr := json.Compact(&want, b)
		got, ok := compactInPlace(bytes.Clone(b))
		if ok != (werr == nil) {
			t.Fatalf("compactInPlace ok=%v, json.Compact %v", ok, werr)
		}
		if !ok {
			return
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("compactInPlace %q, json.Compact %q", got, want.Bytes())
		}
		if bytes.ContainsAny(got, "\r\n") {
			t.Fatalf("compacted message spans lines: %q", got)
		}
		e, ok := parseEnvelope(got)
		if !ok {
			return
		}
		if e.isRequest() && e.isResponse() {
			t.Fatalf("both a request and a response: %q", got)
		}
		if s, ok := e.sessionID(); !ok && s != "" {
			t.Fatalf("session %q without ok", s)
		}
		key, ok := idKey(e.ID)
		if !ok {
			return
		}
		if len(key) > maxIDBytes+2 {
			t.Fatalf("id key of %d bytes", len(key))
		}
		if !json.Valid(rpcError(e.ID, -32600, "x")) {
			t.Fatalf("error reply to id %s is not JSON", e.ID)
		}
	})
}

// FuzzServePost posts arbitrary bodies (and session headers) on an
// initialized connection: every answer is one of the documented
// statuses, never a panic, and the gateway stays consistent.
func FuzzServePost(f *testing.F) {
	for _, s := range envelopeSeeds {
		f.Add([]byte(s), "")
		f.Add([]byte(s), "s1")
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`), "")
	d := newPipeDial(f, nil)
	g := New(d.Dial, &Options{MaxBodyBytes: 1 << 20})
	f.Cleanup(func() { g.Close() })
	post := func(body []byte, conn, session string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "http://localhost/", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if conn != "" {
			req.Header.Set(HeaderConnectionID, conn)
		}
		if session != "" {
			req.Header.Set(HeaderSessionID, session)
		}
		w := httptest.NewRecorder()
		g.ServeHTTP(w, req)
		return w
	}
	w := post([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`), "", "")
	if w.Code != 200 {
		f.Fatalf("initialize: %d %s", w.Code, w.Body)
	}
	conn := w.Header().Get(HeaderConnectionID)
	allowed := map[int]bool{200: true, 202: true, 400: true, 404: true, 413: true, 429: true, 501: true, 502: true, 503: true, 504: true}
	f.Fuzz(func(t *testing.T, body []byte, session string) {
		if !validHeaderValue(session) {
			return // net/http refuses such a header before any handler
		}
		w := post(body, conn, session)
		if !allowed[w.Code] {
			t.Fatalf("status %d for %q (session %q): %s", w.Code, body, session, w.Body)
		}
		if w.Code == 200 {
			// Only an initialize without a connection id answers 200;
			// this one names the connection.
			t.Fatalf("200 for %q", body)
		}
		g.bodies.mu.Lock()
		held := g.bodies.used
		g.bodies.mu.Unlock()
		if held != 0 {
			t.Fatalf("%d body bytes still counted after the answer", held)
		}
		if w.Code != http.StatusAccepted && strings.TrimSpace(w.Body.String()) == "" {
			t.Fatalf("status %d without a reason", w.Code)
		}
	})
}

func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
