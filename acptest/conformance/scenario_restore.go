// This file holds the restore scenario (session/list, load, resume and
// close, each only when advertised) and the fs handlers the tool scenario
// serves, confined to the workspace.

package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
)

// restore prompts a session on one connection, then lists, loads, resumes
// and closes it on new ones, as far as the agent advertises each.
func (r *runner) restore(s *scene) {
	info := r.inits[r.version]
	if !info.loadSession && !info.resume && !info.list && !info.close {
		for _, id := range []string{"session.load", "session.resume", "session.list", "session.close"} {
			r.notExercised(id, "the agent advertises none of loadSession, sessionCapabilities.list, resume, close")
		}
		return
	}
	c, conn, err := s.client(false)
	if err != nil {
		r.fail(firstAdvertised(info), "connecting: "+s.why(err))
		return
	}
	sess, err := s.newSession(c)
	if err != nil {
		c.Close()
		r.fail(firstAdvertised(info), "session/new: "+s.why(err))
		return
	}
	id := sess.ID()
	s.prompt(conn, sess, "prompt.text", "a prompt before restoring", schema.Text(r.opts.Prompts.hello()))
	c.Close()

	if info.list {
		r.list(s)
	} else {
		r.notExercised("session.list", "sessionCapabilities.list is not advertised")
	}
	// Each way back runs on a connection of its own, closed before the
	// next: an agent may refuse a session another process still holds.
	// session/close goes to the last session restored, else to a new one.
	closed := false
	restored := func(c *acp.Client, conn *tap, sess *acp.Session, last bool) {
		if sess != nil && info.close && last {
			r.closeSession(s, conn, sess)
			closed = true
		}
		if c != nil {
			c.Close()
		}
	}
	if info.loadSession {
		c, conn, sess := r.load(s, id)
		restored(c, conn, sess, !info.resume)
	} else {
		r.notExercised("session.load", "loadSession is not advertised")
	}
	if info.resume {
		c, conn, sess := r.resume(s, id)
		restored(c, conn, sess, true)
	} else {
		r.notExercised("session.resume", "sessionCapabilities.resume is not advertised")
	}
	switch {
	case !info.close:
		r.notExercised("session.close", "sessionCapabilities.close is not advertised")
	case !closed:
		c, conn, err := s.client(false)
		if err != nil {
			r.fail("session.close", "connecting: "+s.why(err))
			return
		}
		defer c.Close()
		if sess, err := s.newSession(c); err == nil {
			r.closeSession(s, conn, sess)
		} else {
			r.fail("session.close", "session/new: "+s.why(err))
		}
	}
}

func firstAdvertised(info *initInfo) string {
	switch {
	case info.loadSession:
		return "session.load"
	case info.resume:
		return "session.resume"
	case info.list:
		return "session.list"
	}
	return "session.close"
}

func (r *runner) closeSession(s *scene, conn *tap, sess *acp.Session) {
	if err := sess.Close(s.ctx); err != nil {
		_, resp := requestSpan(conn.log, "session/close")
		r.fail("session.close", "session/close: "+s.why(err), resp)
		return
	}
	r.pass("session.close", "session/close answered")
}

func (r *runner) list(s *scene) {
	c, conn, err := s.client(false)
	if err != nil {
		r.fail("session.list", "connecting: "+s.why(err))
		return
	}
	defer c.Close()
	var res struct {
		Sessions *[]struct {
			SessionID *string `json:"sessionId"`
			Cwd       *string `json:"cwd"`
		} `json:"sessions"`
	}
	if err := c.Call(s.ctx, "session/list", map[string]any{}, &res); err != nil {
		r.fail("session.list", "session/list: "+s.why(err), lastFrom(conn.log))
		return
	}
	if res.Sessions == nil {
		r.fail("session.list", "the session/list result has no sessions array", lastFrom(conn.log))
		return
	}
	for i, e := range *res.Sessions {
		if e.SessionID == nil || *e.SessionID == "" || e.Cwd == nil {
			r.fail("session.list", fmt.Sprintf("sessions[%d] lacks a sessionId or cwd", i), lastFrom(conn.log))
			return
		}
	}
	r.pass("session.list", fmt.Sprintf("session/list answered %d sessions", len(*res.Sessions)))
}

// lastFrom returns the last frame the agent sent.
func lastFrom(log *wireLog) *frame {
	fs := log.all()
	for i := len(fs) - 1; i >= 0; i-- {
		if fs[i].dir == '<' {
			return &fs[i]
		}
	}
	return nil
}

// load loads session id on a new connection and grades its replay; it
// returns the connection's client (nil if none), which the caller closes.
func (r *runner) load(s *scene, id string) (*acp.Client, *tap, *acp.Session) {
	c, conn, err := s.client(false)
	if err != nil {
		r.fail("session.load", "connecting: "+s.why(err))
		return nil, nil, nil
	}
	sess, err := c.LoadSession(s.ctx, &schema.LoadSessionRequest{SessionID: id, Cwd: r.opts.Workspace, MCPServers: []schema.MCPServer{}})
	req, resp := requestSpan(conn.log, "session/load")
	if err != nil {
		r.fail("session.load", "session/load of a session prompted on an earlier connection: "+s.why(err)+restoreHint, resp)
		return c, conn, nil
	}
	want := jsonText(r.opts.Prompts.hello())
	replayed, ours := 0, false
	fs := conn.log.all()
	for i := req; i < len(fs); i++ {
		f := &fs[i]
		if u, ok := updateOf(f); ok && u.SessionID == id && historyKinds[u.Kind] {
			replayed++
			if strings.HasPrefix(u.Kind, "user_message") && strings.Contains(string(f.msg.Params), want) {
				ours = true
			}
		}
		if f.dir == '<' && f.msg.isResponse() && resp != nil && idKey(f.msg.ID) == idKey(resp.msg.ID) {
			break
		}
	}
	switch {
	case replayed == 0:
		r.fail("session.load", "session/load answered without replaying any of the conversation", resp)
		return c, conn, sess
	case !ours:
		r.warn("session.load", fmt.Sprintf("session/load replayed %d updates, but not the earlier prompt as a user message: another conversation?", replayed), resp)
		return c, conn, sess
	}
	r.pass("session.load", "session/load replayed the conversation and answered")
	return c, conn, sess
}

// jsonText is s as it appears inside a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// requestSpan finds the last request of method the client sent and its
// response: the request's index and the response frame (nil if none).
func requestSpan(log *wireLog, method string) (int, *frame) {
	fs := log.all()
	for i := len(fs) - 1; i >= 0; i-- {
		if fs[i].dir == '>' && fs[i].msg.Method == method && fs[i].msg.isRequest() {
			key := idKey(fs[i].msg.ID)
			for j := i + 1; j < len(fs); j++ {
				if fs[j].dir == '<' && fs[j].msg.isResponse() && idKey(fs[j].msg.ID) == key {
					return i, &fs[j]
				}
			}
			return i, nil
		}
	}
	return 0, nil
}

// resume resumes session id on a new connection: no history before the
// answer. It returns the client, which the caller closes.
func (r *runner) resume(s *scene, id string) (*acp.Client, *tap, *acp.Session) {
	c, conn, err := s.client(false)
	if err != nil {
		r.fail("session.resume", "connecting: "+s.why(err))
		return nil, nil, nil
	}
	sess, err := c.ResumeSession(s.ctx, &schema.ResumeSessionRequest{SessionID: id, Cwd: r.opts.Workspace, MCPServers: []schema.MCPServer{}})
	req, resp := requestSpan(conn.log, "session/resume")
	if err != nil {
		r.fail("session.resume", "session/resume of a session prompted on an earlier connection: "+s.why(err)+restoreHint, resp)
		return c, conn, nil
	}
	fs := conn.log.all()
	for i := req; i < len(fs); i++ {
		if u, ok := updateOf(&fs[i]); ok && u.SessionID == id && historyKinds[u.Kind] {
			r.fail("session.resume", "session/resume replayed history ("+u.Kind+") before answering", &fs[i])
			return c, conn, sess
		}
		if resp != nil && fs[i].dir == '<' && fs[i].msg.isResponse() && idKey(fs[i].msg.ID) == idKey(resp.msg.ID) {
			break
		}
	}
	r.pass("session.resume", "session/resume answered without replaying")
	return c, conn, sess
}

// restoreHint explains a failed load or resume of an agent that keeps
// sessions only in memory.
const restoreHint = " (the session was created on an earlier connection, for a command a process since shut down)"

// fsHandlers serve fs requests inside the workspace only.
func (r *runner) fsHandlers() acp.FileSystemHandlers {
	ws := r.opts.Workspace
	inside := func(p string) (string, error) {
		if !filepath.IsAbs(p) {
			return "", fmt.Errorf("path %q is not absolute", p)
		}
		rel, err := filepath.Rel(ws, filepath.Clean(p))
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", fmt.Errorf("path %q is outside the conformance workspace", p)
		}
		return rel, nil
	}
	return acp.FileSystemHandlers{
		ReadTextFile: func(ctx context.Context, req *schema.ReadTextFileRequest) (*schema.ReadTextFileResponse, error) {
			rel, err := inside(req.Path)
			if err != nil {
				return nil, err
			}
			root, err := os.OpenRoot(ws)
			if err != nil {
				return nil, err
			}
			defer root.Close()
			b, err := root.ReadFile(rel)
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("%s: no such file", req.Path)
			}
			if err != nil {
				return nil, err
			}
			return &schema.ReadTextFileResponse{Content: string(b)}, nil
		},
		WriteTextFile: func(ctx context.Context, req *schema.WriteTextFileRequest) (*schema.WriteTextFileResponse, error) {
			rel, err := inside(req.Path)
			if err != nil {
				return nil, err
			}
			root, err := os.OpenRoot(ws)
			if err != nil {
				return nil, err
			}
			defer root.Close()
			if dir := filepath.Dir(rel); dir != "." {
				if err := root.MkdirAll(dir, 0o755); err != nil {
					return nil, err
				}
			}
			if err := root.WriteFile(rel, []byte(req.Content), 0o644); err != nil {
				return nil, err
			}
			return &schema.WriteTextFileResponse{}, nil
		},
	}
}
