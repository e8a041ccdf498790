package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Reply is one scripted model answer. Its parts stream in this order:
// thinking, text, tool call; then the stream ends with Stop (or the stop
// reason the parts imply). Status, when set, replaces all that with an HTTP
// error. Stall, when set, holds the stream open after the parts written so
// far (thinking and text) until the channel is closed or the agent hangs up.
type Reply struct {
	Thinking []string // streamed as reasoning / thinking deltas
	Text     []string // streamed as text deltas, one per chunk
	Tool     *ToolUse // a function call / tool_use block

	Stall chan struct{}

	Status int    // an HTTP error status instead of a stream
	Error  string // the error message of that status

	InputTokens, OutputTokens int
}

// ToolUse is a tool call the model makes.
type ToolUse struct {
	ID   string // call_id / tool_use id
	Name string
	Args any // marshalled to the arguments JSON
}

// Request is what the agent sent to the model, as recorded.
type Request struct {
	Method, Path string
	Body         map[string]any
	Raw          []byte
	Scripted     bool // answered with a scripted Reply (not a side request)
}

// Model is a scripted language-model server on 127.0.0.1 that speaks the
// OpenAI Responses stream (POST /v1/responses, codex) and the Anthropic
// Messages stream (POST /v1/messages, Claude Code). Each conversation
// request takes the next scripted Reply; Claude Code's side requests (title
// and summary generation on the small model, token counting) are answered
// without consuming the script.
type Model struct {
	t   testing.TB
	URL string // http://127.0.0.1:PORT

	mu      sync.Mutex
	script  []Reply
	reqs    []Request
	waiters []chan struct{} // closed when a scripted request arrives
	srv     *http.Server
}

// MainModel is the model name the agents are configured with; Claude Code's
// side requests use SmallModel, which routes them away from the script.
const (
	MainModel  = "mock-model"
	SmallModel = "mock-small"
)

func newModel(t testing.TB) *Model {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &Model{t: t, URL: "http://" + ln.Addr().String()}
	m.srv = &http.Server{Handler: m}
	go m.srv.Serve(ln)
	t.Cleanup(func() { m.srv.Close() })
	return m
}

// Script appends replies to the script.
func (m *Model) Script(r ...Reply) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.script = append(m.script, r...)
}

// Requests returns the requests received so far; with scripted set, only
// those that took a scripted reply.
func (m *Model) Requests(scripted bool) []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Request
	for _, r := range m.reqs {
		if !scripted || r.Scripted {
			out = append(out, r)
		}
	}
	return out
}

// Left is how many scripted replies are unused.
func (m *Model) Left() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.script)
}

// Arrived returns a channel closed when the n-th (1-based) scripted request
// has arrived.
func (m *Model) Arrived(n int) <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	for len(m.waiters) < n {
		m.waiters = append(m.waiters, make(chan struct{}))
	}
	return m.waiters[n-1]
}

func (m *Model) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, Raw: raw}
	_ = json.Unmarshal(raw, &req.Body)
	var reply Reply
	scripted := false
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/responses":
		scripted = true
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		model, _ := req.Body["model"].(string)
		scripted = model == MainModel && req.Body["tools"] != nil
	}
	m.mu.Lock()
	if scripted {
		req.Scripted = true
		n := 0
		for _, q := range m.reqs {
			if q.Scripted {
				n++
			}
		}
		if len(m.script) == 0 {
			m.mu.Unlock()
			m.t.Errorf("model: scripted request #%d with no reply left: %s %s %.400s", n+1, r.Method, r.URL.Path, raw)
			m.mu.Lock()
			reply = Reply{Status: 400, Error: "the test's script has no reply left"}
		} else {
			reply, m.script = m.script[0], m.script[1:]
		}
		for len(m.waiters) <= n {
			m.waiters = append(m.waiters, make(chan struct{}))
		}
		close(m.waiters[n])
	}
	// Every answer names its items after the request's number, as real
	// model APIs give every message its own id: agents pass those ids on
	// (as ACP v2 messageIds), and one id for two replies would make them
	// one message.
	seq := len(m.reqs) + 1
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()

	switch {
	case r.URL.Path == "/v1/responses" && r.Method == http.MethodPost:
		writeResponses(w, r, reply, seq)
	case r.URL.Path == "/v1/messages/count_tokens":
		writeJSON(w, 200, map[string]any{"input_tokens": 100})
	case r.URL.Path == "/v1/messages" && r.Method == http.MethodPost:
		if !scripted {
			reply = Reply{Text: []string{"Side answer"}}
		}
		writeMessages(w, r, reply, seq)
	case r.Method == http.MethodHead || r.URL.Path == "/":
		w.WriteHeader(200)
	default:
		writeJSON(w, 404, map[string]any{"error": map[string]any{"type": "not_found_error", "message": "no such endpoint in the test model: " + r.URL.Path}})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// sse writes server-sent events, flushing each.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func startSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

func (s *sse) event(name string, data map[string]any) {
	if _, ok := data["type"]; !ok {
		data["type"] = name
	}
	b, _ := json.Marshal(data)
	fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, b)
	if s.f != nil {
		s.f.Flush()
	}
}

// stall holds the stream until the test releases it or the client leaves.
func stall(r *http.Request, reply Reply) (released bool) {
	if reply.Stall == nil {
		return true
	}
	select {
	case <-reply.Stall:
		return true
	case <-r.Context().Done():
		return false
	}
}

func argsJSON(a any) string {
	if s, ok := a.(string); ok {
		return s
	}
	b, _ := json.Marshal(a)
	return string(b)
}

func tokens(reply Reply) (in, out int) {
	in, out = reply.InputTokens, reply.OutputTokens
	if in == 0 {
		in = 100
	}
	if out == 0 {
		out = 10
	}
	return in, out
}

// writeResponses answers POST /v1/responses with the OpenAI Responses
// streaming events codex consumes.
func writeResponses(w http.ResponseWriter, r *http.Request, reply Reply, seq int) {
	respID, rsID, msgID := fmt.Sprint("resp_", seq), fmt.Sprint("rs_", seq), fmt.Sprint("msg_", seq)
	if reply.Status != 0 {
		writeJSON(w, reply.Status, map[string]any{"error": map[string]any{"type": "invalid_request_error", "code": "test_error", "message": reply.Error}})
		return
	}
	s := startSSE(w)
	s.event("response.created", map[string]any{"response": map[string]any{"id": respID}})
	idx := 0
	if len(reply.Thinking) > 0 {
		item := map[string]any{"type": "reasoning", "id": rsID, "summary": []any{}}
		s.event("response.output_item.added", map[string]any{"output_index": idx, "item": item})
		s.event("response.reasoning_summary_part.added", map[string]any{"item_id": rsID, "output_index": idx, "summary_index": 0, "part": map[string]any{"type": "summary_text", "text": ""}})
		for _, d := range reply.Thinking {
			s.event("response.reasoning_summary_text.delta", map[string]any{"item_id": rsID, "output_index": idx, "summary_index": 0, "delta": d})
		}
		done := map[string]any{"type": "reasoning", "id": rsID, "summary": []any{map[string]any{"type": "summary_text", "text": strings.Join(reply.Thinking, "")}}}
		s.event("response.output_item.done", map[string]any{"output_index": idx, "item": done})
		idx++
	}
	if len(reply.Text) > 0 {
		s.event("response.output_item.added", map[string]any{"output_index": idx, "item": map[string]any{"type": "message", "role": "assistant", "id": msgID, "content": []any{}}})
		for _, d := range reply.Text {
			s.event("response.output_text.delta", map[string]any{"item_id": msgID, "output_index": idx, "content_index": 0, "delta": d})
		}
		if !stall(r, reply) {
			return
		}
		s.event("response.output_item.done", map[string]any{"output_index": idx, "item": map[string]any{"type": "message", "role": "assistant", "id": msgID, "content": []any{map[string]any{"type": "output_text", "text": strings.Join(reply.Text, "")}}}})
		idx++
	} else if !stall(r, reply) {
		return
	}
	if tc := reply.Tool; tc != nil {
		item := map[string]any{"type": "function_call", "id": "fc_" + tc.ID, "call_id": tc.ID, "name": tc.Name, "arguments": argsJSON(tc.Args)}
		s.event("response.output_item.added", map[string]any{"output_index": idx, "item": item})
		s.event("response.output_item.done", map[string]any{"output_index": idx, "item": item})
	}
	in, out := tokens(reply)
	s.event("response.completed", map[string]any{"response": map[string]any{"id": respID, "usage": map[string]any{
		"input_tokens": in, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": out, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": in + out}}})
}

// writeMessages answers POST /v1/messages with the Anthropic Messages
// streaming events Claude Code consumes.
func writeMessages(w http.ResponseWriter, r *http.Request, reply Reply, seq int) {
	msgID := fmt.Sprint("msg_", seq)
	if reply.Status != 0 {
		writeJSON(w, reply.Status, map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": reply.Error}})
		return
	}
	in, out := tokens(reply)
	s := startSSE(w)
	s.event("message_start", map[string]any{"message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": MainModel, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": in, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}})
	idx := 0
	if len(reply.Thinking) > 0 {
		s.event("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
		for _, d := range reply.Thinking {
			s.event("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "thinking_delta", "thinking": d}})
		}
		s.event("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "signature_delta", "signature": "c2lnbmF0dXJl"}})
		s.event("content_block_stop", map[string]any{"index": idx})
		idx++
	}
	if len(reply.Text) > 0 {
		s.event("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, d := range reply.Text {
			s.event("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "text_delta", "text": d}})
		}
		if !stall(r, reply) {
			return
		}
		s.event("content_block_stop", map[string]any{"index": idx})
		idx++
	} else if !stall(r, reply) {
		return
	}
	stop := "end_turn"
	if tc := reply.Tool; tc != nil {
		stop = "tool_use"
		s.event("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": map[string]any{}}})
		s.event("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": argsJSON(tc.Args)}})
		s.event("content_block_stop", map[string]any{"index": idx})
	}
	s.event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": out}})
	s.event("message_stop", map[string]any{})
}
