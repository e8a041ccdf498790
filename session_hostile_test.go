package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/acpclient/acp/schema"
	"strings"
	"testing"
	"time"
)

// Hostile agents and the session table: an answer to session/new or
// session/fork that names a session already open on this client, and a
// request for a new session written on the line right after its answer.

// initWithFork is defaultInit plus sessionCapabilities.fork.
func initWithFork() map[string]any {
	b, _ := json.Marshal(defaultInit)
	var init map[string]any
	_ = json.Unmarshal(b, &init)
	caps := init["agentCapabilities"].(map[string]any)["sessionCapabilities"].(map[string]any)
	caps["fork"] = map[string]any{}
	return init
}

// rootsFS answers fs/read_text_file with the roots its context carries,
// joined by commas, so a test can see which session a request reached.
func rootsFS() FileSystemHandlers {
	return FileSystemHandlers{ReadTextFile: func(ctx context.Context, _ *schema.ReadTextFileRequest) (*schema.ReadTextFileResponse, error) {
		roots := RootsFromContext(ctx)
		if len(roots) == 0 {
			return nil, errors.New("no workspace roots")
		}
		return &schema.ReadTextFileResponse{Content: strings.Join(roots, ",")}, nil
	}}
}

// An agent that answers session/new or session/fork with the id of a live
// session must not take that session over: the call fails with
// ErrDuplicateSessionID, a diagnostic says so, and the live session keeps
// its routing (its running turn still gets its updates), its roots and its
// state.
func TestHostileDuplicateSessionID(t *testing.T) {
	for _, method := range []string{schema.MethodSessionNew, schema.MethodSessionFork} {
		t.Run(method, func(t *testing.T) {
			diags := make(chan Diagnostic, 100)
			opts := &ClientOptions{FS: rootsFS(), OnDiagnostic: func(d Diagnostic) { diags <- d }}
			c, a := connectRaw(t, opts, initWithFork())
			ctx := context.Background()
			s := newSessionRaw(t, c, a) // "s1" in /tmp
			turn, err := s.Prompt(ctx, schema.Text("go"))
			if err != nil {
				t.Fatal(err)
			}
			p := a.expect(schema.MethodSessionPrompt)
			a.update("s1", chunk("before "))
			before := s.State()

			errc := make(chan error, 1)
			go func() {
				var got *Session
				var err error
				if method == schema.MethodSessionNew {
					got, err = c.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/elsewhere"})
				} else {
					got, err = c.ForkSession(ctx, &schema.ForkSessionRequest{SessionID: "s1", Cwd: "/elsewhere"})
				}
				if got != nil {
					t.Errorf("%s returned a session for the duplicate id", method)
				}
				errc <- err
			}()
			a.reply(a.expect(method), map[string]any{"sessionId": "s1", "modes": map[string]any{"currentModeId": "evil", "availableModes": []any{map[string]any{"id": "evil", "name": "Evil"}}}})
			err = <-errc
			if !errors.Is(err, ErrDuplicateSessionID) {
				t.Fatalf("%s answered with a live session's id: err = %v, want ErrDuplicateSessionID", method, err)
			}
			if got := c.Session("s1"); got != s {
				t.Fatalf("c.Session(s1) = %p, want the live session %p", got, s)
			}

			// Routing: the running turn still gets its session's updates.
			a.update("s1", chunk("after"))
			// Roots: a request for s1 is served with s1's cwd.
			a.send(map[string]any{"jsonrpc": "2.0", "id": 7, "method": schema.MethodFSReadTextFile, "params": map[string]any{"sessionId": "s1", "path": "/tmp/x"}})
			m := a.next()
			if string(m.ID) != "7" || !strings.Contains(string(m.Result), `"content":"/tmp"`) {
				t.Errorf("fs/read_text_file for s1 answered %s, want the content /tmp", m.line)
			}
			a.reply(p, map[string]any{"stopReason": "end_turn"})
			if stop, err := turn.Wait(); stop != schema.StopReasonEndTurn || err != nil {
				t.Fatalf("Wait = %q, %v", stop, err)
			}
			if got := textOf(turn.State()); got != "before after" {
				t.Errorf("the live turn's text is %q, want %q: it lost its updates", got, "before after")
			}
			after := s.State()
			if after.Cwd != before.Cwd || after.Modes != nil {
				t.Errorf("the live session's state changed: cwd %q, modes %+v", after.Cwd, after.Modes)
			}

			for {
				select {
				case d := <-diags:
					if d.Kind == DiagDuplicateSessionID {
						if !strings.Contains(d.Message, `"s1"`) || !strings.Contains(d.Message, method) {
							t.Errorf("diagnostic %q does not name the id and the method", d.Message)
						}
						return
					}
				case <-time.After(10 * time.Second):
					t.Fatal("no duplicate_session_id diagnostic")
				}
			}
		})
	}
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
			Create: func(ctx context.Context, _ *schema.CreateTerminalRequest) (*schema.CreateTerminalResponse, error) {
				if len(RootsFromContext(ctx)) == 0 {
					return nil, errors.New("no workspace roots")
				}
				return &schema.CreateTerminalResponse{TerminalID: "term"}, nil
			},
			Output: func(context.Context, *schema.TerminalOutputRequest) (*schema.TerminalOutputResponse, error) {
				return nil, nil
			},
			WaitForExit: func(context.Context, *schema.WaitForTerminalExitRequest) (*schema.WaitForTerminalExitResponse, error) {
				return nil, nil
			},
			Kill: func(context.Context, *schema.KillTerminalRequest) (*schema.KillTerminalResponse, error) {
				return nil, nil
			},
			Release: func(context.Context, *schema.ReleaseTerminalRequest) (*schema.ReleaseTerminalResponse, error) {
				return nil, nil
			},
		},
		Permission: func(_ context.Context, req *PermissionRequest) (schema.PermissionOutcome, error) {
			if req.Session == nil {
				return schema.PermissionOutcome{}, errors.New("no session")
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
			s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/tmp"})
			if err != nil {
				t.Errorf("NewSession: %v", err)
			}
			sc <- s
		}()
		m := a.expect(schema.MethodSessionNew)
		var req map[string]any
		switch i % 3 {
		case 0:
			req = map[string]any{"jsonrpc": "2.0", "id": i, "method": schema.MethodTerminalCreate, "params": map[string]any{"sessionId": sid, "command": "true"}}
		case 1:
			req = map[string]any{"jsonrpc": "2.0", "id": i, "method": schema.MethodFSReadTextFile, "params": map[string]any{"sessionId": sid, "path": "/tmp/x"}}
		case 2:
			req = map[string]any{"jsonrpc": "2.0", "id": i, "method": schema.MethodSessionRequestPermission, "params": map[string]any{
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
