package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// Hostile agents and the session table: a request for a new session
// written on the line right after its answer.

// rootsFS answers fs/read_text_file with the roots its context carries,
// joined by commas, so a test can see which session a request reached.
func rootsFS() FileSystemHandlers {
	return FileSystemHandlers{ReadTextFile: func(ctx context.Context, _ *ReadTextFileRequest) (*ReadTextFileResponse, error) {
		roots := RootsFromContext(ctx)
		if len(roots) == 0 {
			return nil, errors.New("no workspace roots")
		}
		return &ReadTextFileResponse{Content: strings.Join(roots, ",")}, nil
	}}
}

// The agent writes the answer to session/new and, in the same write, a
// request for the new session. The session is registered before the reader
// handles the next line, so every such request finds it: fs and terminal
// handlers get its roots, the permission handler gets its Session.
func TestHostileRequestRightAfterNewSession(t *testing.T) {
	const runs = 200
	opts := &ClientOptions{
		FS: rootsFS(),
		Terminal: TerminalHandlers{
			Create: func(ctx context.Context, _ *CreateTerminalRequest) (*CreateTerminalResponse, error) {
				if len(RootsFromContext(ctx)) == 0 {
					return nil, errors.New("no workspace roots")
				}
				return &CreateTerminalResponse{TerminalID: "term"}, nil
			},
			Output: func(context.Context, *TerminalOutputRequest) (*TerminalOutputResponse, error) { return nil, nil },
			WaitForExit: func(context.Context, *WaitForTerminalExitRequest) (*WaitForTerminalExitResponse, error) {
				return nil, nil
			},
			Kill:    func(context.Context, *KillTerminalRequest) (*KillTerminalResponse, error) { return nil, nil },
			Release: func(context.Context, *ReleaseTerminalRequest) (*ReleaseTerminalResponse, error) { return nil, nil },
		},
		Permission: func(_ context.Context, req *PermissionRequest) (PermissionOutcome, error) {
			if req.Session == nil {
				return PermissionOutcome{}, errors.New("no session")
			}
			return SelectedOutcome("ok"), nil
		},
	}
	c, a := connectRaw(t, opts, nil)
	ctx := context.Background()
	failed := 0
	for i := range runs {
		sid := fmt.Sprintf("s%d", i)
		sc := make(chan *Session, 1)
		go func() {
			s, err := c.NewSession(ctx, &NewSessionRequest{Cwd: "/tmp"})
			if err != nil {
				t.Errorf("NewSession: %v", err)
			}
			sc <- s
		}()
		m := a.expect(MethodSessionNew)
		var req map[string]any
		switch i % 3 {
		case 0:
			req = map[string]any{"jsonrpc": "2.0", "id": i, "method": MethodTerminalCreate, "params": map[string]any{"sessionId": sid, "command": "true"}}
		case 1:
			req = map[string]any{"jsonrpc": "2.0", "id": i, "method": MethodFSReadTextFile, "params": map[string]any{"sessionId": sid, "path": "/tmp/x"}}
		case 2:
			req = map[string]any{"jsonrpc": "2.0", "id": i, "method": MethodSessionRequestPermission, "params": map[string]any{
				"sessionId": sid, "toolCall": map[string]any{"toolCallId": "t"},
				"options": []any{map[string]any{"optionId": "ok", "name": "OK", "kind": "allow_once"}},
			}}
		}
		rsp, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"sessionId": sid}})
		rq, _ := json.Marshal(req)
		a.write(string(rsp) + "\n" + string(rq) + "\n") // one write: both lines at once
		r := a.next()
		if string(r.ID) != jsonInt(i) {
			t.Fatalf("run %d: client sent %s, want the answer to request %d", i, r.line, i)
		}
		if r.Error != nil {
			failed++
			if failed <= 3 {
				t.Errorf("run %d: %v answered %s", i, req["method"], r.line)
			}
		}
		if s := <-sc; s == nil {
			t.FailNow()
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d requests written right after the session/new answer did not find their session", failed, runs)
	}
}
