// This file holds the restore scenario in v1 (session/list, load, resume
// and close, each only when advertised), the openers it shares with v2's
// (scenario_restore_v2.go), and the fs handlers the tool scenario serves,
// confined to the workspace.

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
// and closes it on new ones, as far as the agent advertises each (v2:
// restoreV2).
func (r *runner) restore(s *scene) {
	if r.version == 2 {
		r.restoreV2(s)
		return
	}
	info := r.inits[r.version]
	if !info.loadSession && !info.resume && !info.list && !info.close {
		for _, id := range []string{"session.load", "session.resume", "session.list", "session.close"} {
			r.notExercised(id, "the agent advertises none of loadSession, sessionCapabilities.list, resume, close")
		}
		return
	}
	id, ok := r.promptedSession(s, firstAdvertised(info))
	if !ok {
		return
	}
	if info.list {
		r.list(s)
	} else {
		r.notExercised("session.list", "sessionCapabilities.list is not advertised")
	}
	// Each way back runs on a connection of its own, closed before the
	// next: an agent may refuse a session another process still holds.
	// session/close goes to the last session restored, else to a new one.
	closed := false
	restored := func(ro reopened, last bool) {
		if ro.sess != nil && info.close && last {
			r.closeSession(s, ro.conn, ro.sess)
			closed = true
		}
		ro.close()
	}
	if info.loadSession {
		restored(r.load(s, id), !info.resume)
	} else {
		r.notExercised("session.load", "loadSession is not advertised")
	}
	if info.resume {
		restored(r.resume(s, id), true)
	} else {
		r.notExercised("session.resume", "sessionCapabilities.resume is not advertised")
	}
	switch {
	case !info.close:
		r.notExercised("session.close", "sessionCapabilities.close is not advertised")
	case !closed:
		ro := r.freshSession(s, "session.close")
		if ro.sess != nil {
			r.closeSession(s, ro.conn, ro.sess)
		}
		ro.close()
	}
}

// promptedSession creates a session on a connection of its own, prompts
// it once and closes the connection; it returns the session's id, and
// false (having failed rule) when there is none.
func (r *runner) promptedSession(s *scene, rule string) (string, bool) {
	c, conn, err := s.client(false)
	if err != nil {
		r.fail(rule, "connecting: "+s.why(err))
		return "", false
	}
	defer c.Close()
	sess, err := s.newSession(c)
	if err != nil {
		r.fail(rule, "session/new: "+s.why(err))
		return "", false
	}
	s.prompt(conn, sess, "prompt.text", "a prompt before restoring", schema.Text(r.opts.Prompts.hello()))
	return sess.ID(), true
}

// freshSession opens a connection and a new session on it, for the rules
// that need an open session when none could be restored.
func (r *runner) freshSession(s *scene, rule string) reopened {
	c, conn, err := s.client(false)
	if err != nil {
		r.fail(rule, "connecting: "+s.why(err))
		return reopened{}
	}
	ro := reopened{c: c, conn: conn}
	if ro.sess, err = s.newSession(c); err != nil {
		r.fail(rule, "session/new: "+s.why(err))
	}
	return ro
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

func (r *runner) closeSession(s *scene, conn *tap, sess *acp.Session) bool {
	if err := sess.Close(s.ctx); err != nil {
		_, resp := requestSpan(conn.log, "session/close")
		r.fail("session.close", "session/close: "+s.why(err), resp)
		return false
	}
	r.pass("session.close", "session/close answered")
	return true
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

// reopened is a session restored on a connection of its own.
type reopened struct {
	c    *acp.Client // nil when the connection failed
	conn *tap
	sess *acp.Session // nil when the restoring call failed
	req  int          // the index of the restoring request's frame
	resp *frame       // its response, nil if none
}

func (ro *reopened) close() {
	if ro.c != nil {
		ro.c.Close()
	}
}

// beforeAnswer returns the frames from the restoring request up to, not
// including, its response.
func (ro *reopened) beforeAnswer() []frame {
	fs := ro.conn.log.all()
	if ro.resp == nil {
		return fs[ro.req:]
	}
	for i := ro.req; i < len(fs); i++ {
		if fs[i].dir == '<' && fs[i].msg.isResponse() && idKey(fs[i].msg.ID) == idKey(ro.resp.msg.ID) {
			return fs[ro.req:i]
		}
	}
	return fs[ro.req:]
}

// reopen restores a session prompted on an earlier connection on a new
// one, with call (which sends method); when it cannot, it fails rule,
// saying why such a restore may fail. The caller closes the result.
func (r *runner) reopen(s *scene, rule, method string, call func(*acp.Client) (*acp.Session, error)) reopened {
	c, conn, err := s.client(false)
	if err != nil {
		r.fail(rule, "connecting: "+s.why(err))
		return reopened{}
	}
	ro := reopened{c: c, conn: conn}
	sess, err := call(c)
	ro.req, ro.resp = requestSpan(conn.log, method)
	if err != nil {
		r.fail(rule, method+" of a session prompted on an earlier connection: "+s.why(err)+restoreHint, ro.resp)
		return ro
	}
	ro.sess = sess
	return ro
}

// load loads session id on a new connection and grades its replay.
func (r *runner) load(s *scene, id string) reopened {
	ro := r.reopen(s, "session.load", "session/load", func(c *acp.Client) (*acp.Session, error) {
		return c.LoadSession(s.ctx, &schema.LoadSessionRequest{SessionID: id, Cwd: r.opts.Workspace, MCPServers: []schema.MCPServer{}})
	})
	if ro.sess == nil {
		return ro
	}
	want := jsonText(r.opts.Prompts.hello())
	replayed, ours := 0, false
	for _, f := range ro.beforeAnswer() {
		if u, ok := updateOf(&f); ok && u.SessionID == id && historyKinds[u.Kind] {
			replayed++
			if strings.HasPrefix(u.Kind, "user_message") && strings.Contains(string(f.msg.Params), want) {
				ours = true
			}
		}
	}
	switch {
	case replayed == 0:
		r.fail("session.load", "session/load answered without replaying any of the conversation", ro.resp)
	case !ours:
		r.warn("session.load", fmt.Sprintf("session/load replayed %d updates, but not the earlier prompt as a user message: another conversation?", replayed), ro.resp)
	default:
		r.pass("session.load", "session/load replayed the conversation and answered")
	}
	return ro
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

// resume resumes session id on a new connection (v2: without replayFrom):
// no history before the answer.
func (r *runner) resume(s *scene, id string) reopened {
	ro := r.reopen(s, "session.resume", "session/resume", func(c *acp.Client) (*acp.Session, error) {
		return c.ResumeSession(s.ctx, &schema.ResumeSessionRequest{SessionID: id, Cwd: r.opts.Workspace, MCPServers: []schema.MCPServer{}})
	})
	if ro.sess == nil {
		return ro
	}
	for _, f := range ro.beforeAnswer() {
		if u, ok := updateOf(&f); ok && u.SessionID == id && historyKinds[u.Kind] {
			r.fail("session.resume", "session/resume replayed history ("+u.Kind+") before answering", &f)
			return ro
		}
	}
	r.pass("session.resume", "session/resume answered without replaying")
	return ro
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
