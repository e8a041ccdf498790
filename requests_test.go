package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/acpclient/acp/schema"
	"strings"
	"testing"
)

// Unknown agent methods are answered -32601; a panicking handler becomes a
// -32603 reply and the connection lives on; handler errors keep their
// code and data.
func TestAgentRequestErrors(t *testing.T) {
	opts := &ClientOptions{
		ExtMethod: func(_ context.Context, method string, params json.RawMessage) (any, error) {
			switch method {
			case "_panic":
				panic("boom")
			case "_err":
				return nil, fmt.Errorf("wrapped: %w", &schema.Error{Code: -32042, Message: "custom", Data: json.RawMessage(`{"why":"because"}`)})
			}
			return map[string]any{"echo": params}, nil
		},
	}
	_, a := connectRaw(t, opts, nil)
	for _, tc := range []struct {
		method string
		code   int64
		data   string
	}{
		{"no/such_method", schema.CodeMethodNotFound, ""},
		{"_panic", schema.CodeInternalError, ""},
		{"fs/read_text_file", schema.CodeMethodNotFound, ""}, // no FileSystem: not advertised, not served
		{"_err", -32042, `{"why":"because"}`},
	} {
		a.send(map[string]any{"jsonrpc": "2.0", "id": tc.method, "method": tc.method, "params": map[string]any{}})
		m := a.next()
		if m.Error == nil || m.Error.Code != tc.code || string(m.Error.Data) != tc.data {
			t.Errorf("%s: reply %s", tc.method, m.line)
		}
	}
	a.send(map[string]any{"jsonrpc": "2.0", "id": 77, "method": "_echo", "params": map[string]any{"x": 1}})
	if m := a.next(); string(m.ID) != "77" || !strings.Contains(string(m.Result), `"x":1`) {
		t.Errorf("after the panic the connection answers %s", m.line)
	}
}

// The agent withdraws its request with $/cancel_request: the handler's ctx
// ends and the request is answered -32800.
func TestAgentCancelRequest(t *testing.T) {
	entered := make(chan struct{})
	var handlerErr error
	done := make(chan struct{})
	opts := &ClientOptions{FS: FileSystemHandlers{ReadTextFile: fsFunc(func(ctx context.Context, _ *schema.ReadTextFileRequest) (*schema.ReadTextFileResponse, error) {
		defer close(done)
		close(entered)
		<-ctx.Done()
		handlerErr = context.Cause(ctx)
		return nil, ctx.Err()
	}).ReadTextFile}}
	c, a := connectRaw(t, opts, nil)
	newSessionRaw(t, c, a)
	a.send(map[string]any{"jsonrpc": "2.0", "id": "r1", "method": "fs/read_text_file", "params": map[string]any{"sessionId": "s1", "path": "/tmp/x"}})
	<-entered
	a.send(map[string]any{"jsonrpc": "2.0", "method": "$/cancel_request", "params": map[string]any{"requestId": "r1"}})
	m := a.next()
	if string(m.ID) != `"r1"` || m.Error == nil || m.Error.Code != schema.CodeRequestCancelled {
		t.Fatalf("reply %s", m.line)
	}
	<-done
	if !errors.Is(handlerErr, errWithdrawn) {
		t.Errorf("handler ctx cause %v", handlerErr)
	}
	// A cancel for an id already answered (or never seen) is ignored.
	a.send(map[string]any{"jsonrpc": "2.0", "method": "$/cancel_request", "params": map[string]any{"requestId": "r1"}})
	a.send(map[string]any{"jsonrpc": "2.0", "id": "probe", "method": "no/such", "params": map[string]any{}})
	if m := a.next(); string(m.ID) != `"probe"` {
		t.Errorf("unexpected %s", m.line)
	}
}

// A call of ours abandoned by its context sends $/cancel_request with its
// id, and the call returns the context's error.
func TestClientCancelRequest(t *testing.T) {
	c, a := connectRaw(t, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.NewSession(ctx, nil)
		errc <- err
	}()
	m := a.expect("session/new")
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("NewSession: %v", err)
	}
	cr := a.expect("$/cancel_request")
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	json.Unmarshal(cr.Params, &p)
	if string(p.RequestID) != string(m.ID) || cr.ID != nil {
		t.Errorf("$/cancel_request %s for request %s", cr.line, m.ID)
	}
}
