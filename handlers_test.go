package acp

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/acpclient/acp/schema"
	"io"
	"strings"
	"sync"
	"testing"
)

func readHandler(context.Context, *schema.ReadTextFileRequest) (*schema.ReadTextFileResponse, error) {
	return &schema.ReadTextFileResponse{Content: "read"}, nil
}

func writeHandler(context.Context, *schema.WriteTextFileRequest) (*schema.WriteTextFileResponse, error) {
	return nil, nil
}

// fakeTerminals returns a complete set of terminal handlers that answer
// with fixed results.
func fakeTerminals() TerminalHandlers {
	return TerminalHandlers{
		Create: func(context.Context, *schema.CreateTerminalRequest) (*schema.CreateTerminalResponse, error) {
			return &schema.CreateTerminalResponse{TerminalID: "t1"}, nil
		},
		Output: func(context.Context, *schema.TerminalOutputRequest) (*schema.TerminalOutputResponse, error) {
			return &schema.TerminalOutputResponse{Output: "out"}, nil
		},
		WaitForExit: func(context.Context, *schema.WaitForTerminalExitRequest) (*schema.WaitForTerminalExitResponse, error) {
			return &schema.WaitForTerminalExitResponse{}, nil
		},
		Kill: func(context.Context, *schema.KillTerminalRequest) (*schema.KillTerminalResponse, error) {
			return nil, nil
		},
		Release: func(context.Context, *schema.ReleaseTerminalRequest) (*schema.ReleaseTerminalResponse, error) {
			return nil, nil
		},
	}
}

// Each fs handler is advertised and served exactly when it is set: the
// other one is neither advertised nor served (-32601), with no type
// assertion deciding either.
func TestFileSystemHandlersEachExplicit(t *testing.T) {
	for _, tc := range []struct {
		name        string
		fs          FileSystemHandlers
		read, write bool
	}{
		{"none", FileSystemHandlers{}, false, false},
		{"read", FileSystemHandlers{ReadTextFile: readHandler}, true, false},
		{"write", FileSystemHandlers{WriteTextFile: writeHandler}, false, true},
		{"both", FileSystemHandlers{ReadTextFile: readHandler, WriteTextFile: writeHandler}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, a := connectRaw(t, &ClientOptions{FS: tc.fs}, nil)
			if caps := c.capabilities(); caps.FS.ReadTextFile != tc.read || caps.FS.WriteTextFile != tc.write {
				t.Errorf("advertised fs %+v, want read %v write %v", caps.FS, tc.read, tc.write)
			}
			for method, served := range map[string]bool{"fs/read_text_file": tc.read, "fs/write_text_file": tc.write} {
				a.send(map[string]any{"jsonrpc": "2.0", "id": method, "method": method,
					"params": map[string]any{"sessionId": "s1", "path": "/x", "content": "c"}})
				m := a.next()
				if served && m.Error != nil {
					t.Errorf("%s: error %s, want a result", method, m.line)
				}
				if !served && (m.Error == nil || m.Error.Code != schema.CodeMethodNotFound) {
					t.Errorf("%s: reply %s, want -32601", method, m.line)
				}
			}
		})
	}
}

// Terminal handlers are advertised and served only as a complete set; a set
// with some of them missing is refused by Connect before anything is sent.
func TestTerminalHandlersComplete(t *testing.T) {
	c, a := connectRaw(t, &ClientOptions{Terminal: fakeTerminals()}, nil)
	if !c.capabilities().Terminal {
		t.Error("a complete set of terminal handlers is not advertised")
	}
	a.send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "terminal/output",
		"params": map[string]any{"sessionId": "s1", "terminalId": "t1"}})
	if m := a.next(); m.Error != nil || !strings.Contains(string(m.Result), `"out"`) {
		t.Errorf("terminal/output: %s", m.line)
	}

	partial := fakeTerminals()
	partial.Kill = nil
	// An agent that has already gone: without the check, Connect fails
	// for that reason instead.
	tr := &StreamTransport{Reader: strings.NewReader(""), Writer: io.Discard}
	c, err := Connect(context.Background(), tr, &ClientOptions{Terminal: partial})
	if err == nil || !strings.Contains(err.Error(), "terminal handlers") {
		t.Errorf("Connect with four of five terminal handlers: %v, want an error", err)
	}
	if c != nil {
		c.Close()
	}
}

// CloseSession runs when Session.Close has its answer, with the session's
// id, before Session.Close returns; Close runs once, from the first
// Client.Close, whose result is its error.
func TestTerminalLifecycleHooks(t *testing.T) {
	var (
		mu       sync.Mutex
		sessions []string
		closes   int
	)
	h := fakeTerminals()
	h.CloseSession = func(id string) {
		mu.Lock()
		defer mu.Unlock()
		sessions = append(sessions, id)
	}
	errHook := errors.New("hook failed")
	h.Close = func() error {
		mu.Lock()
		defer mu.Unlock()
		closes++
		return errHook
	}
	c, a := connectRaw(t, &ClientOptions{Terminal: h}, nil)
	s := newSessionRaw(t, c, a)
	done := make(chan error, 1)
	go func() { done <- s.Close(context.Background()) }()
	a.reply(a.expect("session/close"), map[string]any{})
	if err := <-done; err != nil {
		t.Fatalf("Session.Close: %v", err)
	}
	mu.Lock()
	if len(sessions) != 1 || sessions[0] != "s1" || closes != 0 {
		t.Errorf("after Session.Close: CloseSession calls %q, Close calls %d; want [s1] and 0", sessions, closes)
	}
	mu.Unlock()
	if err := c.Close(); !errors.Is(err, errHook) {
		t.Errorf("Client.Close = %v, want the hook's error", err)
	}
	c.Close()
	mu.Lock()
	defer mu.Unlock()
	if closes != 1 {
		t.Errorf("Close hook called %d times, want 1", closes)
	}
}

// The extension handlers' named types accept plain func literals, as the
// fields did before they were named.
func TestExtHandlerTypesTakeFuncLiterals(t *testing.T) {
	got := make(chan string, 1)
	opts := &ClientOptions{
		ExtMethod: func(_ context.Context, method string, _ json.RawMessage) (any, error) { return method, nil },
		ExtNotification: func(method string, _ json.RawMessage) {
			got <- method
		},
	}
	_, a := connectRaw(t, opts, nil)
	a.send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "_x/echo", "params": map[string]any{}})
	if m := a.next(); string(m.Result) != `"_x/echo"` {
		t.Errorf("ext method reply %s", m.line)
	}
	a.send(map[string]any{"jsonrpc": "2.0", "method": "_x/note", "params": map[string]any{}})
	if m := <-got; m != "_x/note" {
		t.Errorf("ext notification %q", m)
	}
}
