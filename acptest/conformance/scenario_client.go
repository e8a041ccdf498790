// This file holds the scenarios driven through the acp client: a session
// with prompts of each content type, modes and config options; a
// cancelled turn; and the tool scenario, the only one that offers fs (v1).

package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
)

// LateWindow is how long the cancel scenario watches for output after a
// cancelled turn ended (at most a tenth of the scenario's timeout), before
// it sends the next prompt.
const LateWindow = time.Second

func (p *Prompts) hello() string {
	if p.Hello != "" {
		return strings.ReplaceAll(p.Hello, "{workspace}", p.workspace)
	}
	return "Say hello in one short sentence."
}

func (p *Prompts) cancel() string {
	if p.Cancel != "" {
		return strings.ReplaceAll(p.Cancel, "{workspace}", p.workspace)
	}
	return "Write a long essay, at least two thousand words, about the history of the number zero."
}

func (p *Prompts) tool() string {
	if p.Tool != "" {
		return strings.ReplaceAll(p.Tool, "{workspace}", p.workspace)
	}
	return "Create a file named conformance.txt in the current directory containing the word ok."
}

// client opens a connection and connects the acp client; fs offers the
// fs capability, confined to the workspace.
func (s *scene) client(fs bool) (*acp.Client, *tap, error) {
	conn, err := s.open()
	if err != nil {
		return nil, nil, err
	}
	grace := min(5*time.Second, s.r.opts.ScenarioTimeout/2)
	opts := &acp.ClientOptions{
		ProtocolVersion: s.r.version,
		ClientInfo:      &schema.Implementation{Name: "acp-conformance", Version: "1"},
		Permission:      acp.RejectAll,
		CancelGrace:     grace,
		OnDiagnostic: func(d acp.Diagnostic) {
			s.mu.Lock()
			s.diags = append(s.diags, d)
			s.mu.Unlock()
		},
	}
	if fs {
		s.fs = true
		opts.FS = s.r.fsHandlers()
	}
	if s.name == "tool" {
		opts.Permission = allowFileTools
	}
	c, err := acp.Connect(s.ctx, tapTransport{conn}, opts)
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	if s.r.authRequired && s.r.opts.AuthMethod != "" {
		// Known to require it: authenticate up front, so that load,
		// resume and list on this connection work too.
		if _, err := c.Authenticate(s.ctx, &schema.AuthenticateRequest{MethodID: s.r.opts.AuthMethod}); err != nil {
			c.Close()
			return nil, nil, fmt.Errorf("authenticate with %s: %w", s.r.opts.AuthMethod, err)
		}
	}
	return c, conn, nil
}

// allowFileTools allows tool calls that read or edit files (the agent's fs
// requests are confined to the workspace) and rejects the rest: the
// grader never lets an agent execute anything.
func allowFileTools(ctx context.Context, req *acp.PermissionRequest) (schema.PermissionOutcome, error) {
	switch req.ToolCall.Kind {
	case schema.ToolKindRead, schema.ToolKindEdit:
		if o := req.Option(schema.PermissionAllowOnce); o != nil {
			return acp.SelectedOutcome(o.OptionID), nil
		}
	}
	return acp.RejectAll(ctx, req)
}

// lastConn is the connection opened last.
func (s *scene) lastConn() *tap {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.conns) == 0 {
		return nil
	}
	return s.conns[len(s.conns)-1]
}

// newSession creates a session in the workspace, authenticating first when
// the agent requires it and Options.AuthMethod names a method.
func (s *scene) newSession(c *acp.Client) (*acp.Session, error) {
	req := &schema.NewSessionRequest{Cwd: s.r.opts.Workspace, MCPServers: []schema.MCPServer{}}
	sess, err := c.NewSession(s.ctx, req)
	var auth *acp.AuthRequiredError
	if !errors.As(err, &auth) {
		if err == nil {
			s.r.notExercised("auth.methods", "the agent did not require authentication")
		}
		return sess, err
	}
	s.r.authRequired = true
	if len(auth.Methods) == 0 {
		var ev *frame
		if conn := s.lastConn(); conn != nil {
			_, ev = requestSpan(conn.log, "session/new")
		}
		s.r.fail("auth.methods", "session/new failed with auth_required, but initialize offered no authMethods: "+err.Error(), ev)
		return nil, err
	}
	if s.r.opts.AuthMethod == "" {
		s.r.notExercised("auth.methods", "the agent requires authentication; set Options.AuthMethod (acp check --auth ID) to grade its sessions")
		s.r.stopped = "the agent requires authentication and no method was given"
		return nil, err
	}
	if _, aerr := c.Authenticate(s.ctx, &schema.AuthenticateRequest{MethodID: s.r.opts.AuthMethod}); aerr != nil {
		s.r.fail("auth.methods", fmt.Sprintf("authenticate with %s failed: %v", s.r.opts.AuthMethod, aerr))
		return nil, aerr
	}
	sess, err = c.NewSession(s.ctx, req)
	if err != nil {
		s.r.fail("auth.methods", "session/new still failed after authenticating: "+s.why(err))
		return nil, err
	}
	s.r.pass("auth.methods", "authenticated with "+s.r.opts.AuthMethod+", then session/new worked")
	return sess, nil
}

// sessionFrame returns the result frame that created session id.
func sessionFrame(log *wireLog, id string) *frame {
	fs := log.all()
	for i := range fs {
		f := &fs[i]
		if f.dir == '<' && f.ok && f.msg.isResponse() && f.msg.Result != nil {
			var res struct {
				SessionID string `json:"sessionId"`
			}
			if json.Unmarshal(f.msg.Result, &res) == nil && res.SessionID == id {
				return f
			}
		}
	}
	return nil
}

// prompt runs one turn and grades whether it was answered with a result.
// It returns the index of the prompt's response frame, or -1.
func (s *scene) prompt(conn *tap, sess *acp.Session, rule string, what string, blocks ...schema.ContentBlock) int {
	turn, err := sess.Prompt(s.ctx, blocks...)
	if err != nil {
		s.r.fail(rule, fmt.Sprintf("%s: session/prompt: %s", what, s.why(err)))
		return -1
	}
	_, werr := turn.Wait()
	i, ferr := conn.log.response(s.ctx, 0, json.RawMessage(turn.RequestID()))
	switch {
	case errors.Is(ferr, errTruncated):
		return -1 // not seen, so not graded (jsonrpc.lines warns)
	case ferr != nil:
		s.r.fail(rule, fmt.Sprintf("%s: no answer to session/prompt: %s", what, s.why(ferr)))
		return -1
	case conn.log.all()[i].msg.Error != nil:
		f := conn.log.all()[i]
		s.r.fail(rule, fmt.Sprintf("%s: session/prompt was answered with an error", what), &f)
		return -1
	case werr != nil && !errors.Is(werr, acp.ErrTurnEnded):
		s.r.fail(rule, fmt.Sprintf("%s: the turn did not end: %s", what, s.why(werr)))
		return i
	}
	s.r.pass(rule, what+" was answered")
	return i
}

// session: two sessions, modes, config options and a prompt of each
// content type the agent takes.
func (r *runner) session(s *scene) {
	c, conn, err := s.client(false)
	if err != nil {
		r.fail("session.new", "connecting: "+s.why(err))
		return
	}
	defer c.Close()
	s1, err := s.newSession(c)
	if err != nil {
		if r.stopped == "" {
			r.fail("session.new", "session/new: "+s.why(err))
		}
		return
	}
	s2, err := s.newSession(c)
	switch {
	case errors.Is(err, acp.ErrDuplicateSessionID):
		r.fail("session.new", "the second session/new answered the id of the first: "+err.Error(), sessionFrame(conn.log, s1.ID()), lastFrom(conn.log))
	case err != nil:
		r.fail("session.new", "the second session/new: "+s.why(err))
	case s1.ID() == "" || s2.ID() == "":
		r.fail("session.new", "session/new answered an empty sessionId")
	case s1.ID() == s2.ID():
		r.fail("session.new", "two session/new calls answered the same sessionId "+s1.ID(), sessionFrame(conn.log, s1.ID()))
	default:
		r.pass("session.new", "two session/new calls answered distinct ids")
	}
	created := sessionFrame(conn.log, s1.ID())
	r.modes(s, c, conn, s1, created)
	r.configs(s, c, conn, s1, created)

	info := r.inits[r.version]
	s.prompt(conn, s1, "prompt.text", "a text prompt", schema.Text(r.opts.Prompts.hello()))
	notes := filepath.Join(r.opts.Workspace, NotesFile)
	s.prompt(conn, s1, "prompt.resource-link", "a prompt with a resource link",
		schema.Text("Here is a file for context; answer in one short sentence."), schema.Link("file://"+filepath.ToSlash(notes), NotesFile))
	var tried []string
	if info.image {
		tried = append(tried, "image")
		s.prompt(conn, s1, "prompt.capabilities", "a prompt with an image",
			schema.Text("Describe this image in one short sentence."), schema.Image(tinyPNG, "image/png"))
	}
	if info.audio {
		tried = append(tried, "audio")
		s.prompt(conn, s1, "prompt.capabilities", "a prompt with audio",
			schema.Text("Describe this sound in one short sentence."), &schema.AudioContent{Data: tinyWAV, MimeType: "audio/wav"})
	}
	if info.embedded {
		tried = append(tried, "an embedded resource")
		s.prompt(conn, s1, "prompt.capabilities", "a prompt with an embedded resource",
			schema.Text("Summarise this file in one short sentence."), schema.TextResource("file://"+filepath.ToSlash(notes), notesText, "text/plain"))
	}
	if len(tried) == 0 {
		r.notExercised("prompt.capabilities", "promptCapabilities advertises no image, audio or embedded context")
	}
}

// modes grades set_mode with an advertised and an unknown mode.
func (r *runner) modes(s *scene, c *acp.Client, conn *tap, sess *acp.Session, created *frame) {
	if r.version != 1 {
		return
	}
	var res struct {
		Modes *struct {
			CurrentModeID  string `json:"currentModeId"`
			AvailableModes []struct {
				ID string `json:"id"`
			} `json:"availableModes"`
		} `json:"modes"`
	}
	if created != nil {
		json.Unmarshal(created.msg.Result, &res)
	}
	if res.Modes == nil || len(res.Modes.AvailableModes) == 0 {
		r.notExercised("modes.set", "session/new returned no modes")
		r.notExercised("modes.unknown", "session/new returned no modes")
		return
	}
	other := ""
	for _, m := range res.Modes.AvailableModes {
		if m.ID != res.Modes.CurrentModeID {
			other = m.ID
			break
		}
	}
	if other == "" {
		r.notExercised("modes.set", "the session offers only its current mode")
	} else if err := c.Call(s.ctx, "session/set_mode", map[string]any{"sessionId": sess.ID(), "modeId": other}, nil); err != nil {
		_, resp := requestSpan(conn.log, "session/set_mode")
		r.fail("modes.set", fmt.Sprintf("session/set_mode %s: %s", other, s.why(err)), resp)
	} else {
		r.pass("modes.set", "switched to mode "+other)
		c.Call(s.ctx, "session/set_mode", map[string]any{"sessionId": sess.ID(), "modeId": res.Modes.CurrentModeID}, nil)
	}
	err := c.Call(s.ctx, "session/set_mode", map[string]any{"sessionId": sess.ID(), "modeId": "conformance-no-such-mode"}, nil)
	var rpcErr *schema.Error
	switch {
	case errors.As(err, &rpcErr):
		r.pass("modes.unknown", fmt.Sprintf("an unknown mode was refused with error %d", rpcErr.Code))
	case err != nil:
		r.fail("modes.unknown", "session/set_mode with an unknown mode: "+s.why(err))
	default:
		_, resp := requestSpan(conn.log, "session/set_mode")
		r.fail("modes.unknown", "session/set_mode with mode conformance-no-such-mode was answered with a result", resp)
	}
}

type configOption struct {
	ID           string          `json:"id"`       // v1
	ConfigID     string          `json:"configId"` // v2
	Type         string          `json:"type"`
	CurrentValue json.RawMessage `json:"currentValue"`
	Options      []struct {
		Value   string `json:"value"`
		Group   string `json:"group"`
		Options []struct {
			Value string `json:"value"`
		} `json:"options"`
	} `json:"options"`
}

// key is the option's id in version v's field.
func (o *configOption) key(v int) string {
	if v == 2 {
		return o.ConfigID
	}
	return o.ID
}

// values lists a select option's values, flattening groups.
func (o *configOption) values() []string {
	var vs []string
	for _, v := range o.Options {
		if v.Value != "" {
			vs = append(vs, v.Value)
		}
		for _, g := range v.Options {
			vs = append(vs, g.Value)
		}
	}
	return vs
}

// configs grades the config options of session/new and a set.
func (r *runner) configs(s *scene, c *acp.Client, conn *tap, sess *acp.Session, created *frame) {
	var res struct {
		ConfigOptions []configOption `json:"configOptions"`
	}
	if created != nil {
		json.Unmarshal(created.msg.Result, &res)
	}
	if len(res.ConfigOptions) == 0 {
		r.notExercised("config.defaults", "session/new returned no configOptions")
		r.notExercised("config.set", "session/new returned no configOptions")
		return
	}
	ok := true
	for _, o := range res.ConfigOptions {
		switch {
		case o.key(r.version) == "":
			ok = false
			field := "id"
			if r.version == 2 {
				field = "configId"
			}
			r.fail("config.defaults", "a config option has no "+field, created)
		case o.CurrentValue == nil || string(o.CurrentValue) == "null":
			ok = false
			r.fail("config.defaults", "config option "+o.key(r.version)+" has no currentValue", created)
		case o.Type == "boolean" && r.version == 1: // v2 has booleans by default
			ok = false
			r.fail("config.defaults", "config option "+o.key(r.version)+" is boolean, which the client did not offer", created)
		}
	}
	if ok {
		r.pass("config.defaults", fmt.Sprintf("%d config options, each with a current value", len(res.ConfigOptions)))
	}
	for _, o := range res.ConfigOptions {
		var cur string
		if o.Type != "select" || json.Unmarshal(o.CurrentValue, &cur) != nil {
			continue
		}
		i := slices.IndexFunc(o.values(), func(v string) bool { return v != cur })
		if i < 0 {
			continue
		}
		value := o.values()[i]
		params := map[string]any{"sessionId": sess.ID(), "configId": o.key(r.version), "value": value}
		if r.version == 2 {
			params["type"] = "id"
		}
		if err := c.Call(s.ctx, "session/set_config_option", params, nil); err != nil {
			r.fail("config.set", fmt.Sprintf("session/set_config_option %s=%s: %s", o.key(r.version), value, s.why(err)))
			return
		}
		// The answer as it came on the wire (the client may translate a
		// v2 result into its v1 form).
		var out struct {
			ConfigOptions []configOption `json:"configOptions"`
		}
		_, resp := requestSpan(conn.log, "session/set_config_option")
		if resp != nil {
			json.Unmarshal(resp.msg.Result, &out)
		}
		j := slices.IndexFunc(out.ConfigOptions, func(n configOption) bool { return n.key(r.version) == o.key(r.version) })
		var now string
		if j >= 0 {
			json.Unmarshal(out.ConfigOptions[j].CurrentValue, &now)
		}
		if now != value {
			r.fail("config.set", fmt.Sprintf("set %s to %s, the answer's list has it at %q", o.key(r.version), value, now), resp)
		} else {
			r.pass("config.set", fmt.Sprintf("set %s to %s", o.key(r.version), value))
		}
		c.Call(s.ctx, "session/set_config_option", map[string]any{"sessionId": sess.ID(), "configId": o.key(r.version), "value": cur, "type": "id"}, nil)
		return
	}
	r.notExercised("config.set", "no select config option has a second value")
}

// cancel: a prompt cancelled at once, then a prompt that must be answered.
func (r *runner) cancel(s *scene) {
	c, conn, err := s.client(false)
	if err != nil {
		r.fail("cancel.stop-reason", "connecting: "+s.why(err))
		return
	}
	defer c.Close()
	sess, err := s.newSession(c)
	if err != nil {
		r.fail("cancel.stop-reason", "session/new: "+s.why(err))
		return
	}
	turn, err := sess.Prompt(s.ctx, schema.Text(r.opts.Prompts.cancel()))
	if err != nil {
		r.fail("cancel.stop-reason", "session/prompt: "+s.why(err))
		return
	}
	if r.version == 2 {
		// v2: cancel once the prompt is accepted, the foreground work
		// the spec's cancellation duties are about. (Whether a prompt
		// cancelled before its acceptance may be refused, the spec does
		// not say.)
		if _, err := conn.log.response(s.ctx, 0, json.RawMessage(turn.RequestID())); err != nil {
			r.fail("cancel.stop-reason", "no answer to session/prompt: "+s.why(err))
			return
		}
	}
	turn.Cancel()
	turn.Wait()
	i, err := conn.log.response(s.ctx, 0, json.RawMessage(turn.RequestID()))
	if err != nil {
		r.fail("cancel.stop-reason", "no answer to the cancelled session/prompt: "+s.why(err))
		return
	}
	f := conn.log.all()[i]
	if f.msg.Error != nil {
		r.fail("cancel.stop-reason", "the cancelled session/prompt was answered with an error, not stopReason cancelled", &f)
		return
	}
	stop, sf, ok := "", &f, true
	if r.version == 1 {
		var res struct {
			StopReason string `json:"stopReason"`
		}
		json.Unmarshal(f.msg.Result, &res)
		stop = res.StopReason
	} else {
		// v2: the end is the idle state_update after the prompt.
		stop, sf, ok = idleAfter(s, conn.log, sess.ID(), i)
		if !ok {
			r.fail("cancel.stop-reason", "no idle state_update after the cancelled prompt")
			return
		}
	}
	if stop == string(schema.StopReasonCancelled) {
		r.pass("cancel.stop-reason", "the cancelled turn ended with stopReason cancelled")
	} else {
		r.warn("cancel.stop-reason", fmt.Sprintf("the cancelled turn ended with stopReason %q: it may have ended before the cancel arrived (give a longer Prompts.Cancel)", stop), sf)
	}
	if r.version == 1 {
		// Late output is looked for (checkFrames) until the next prompt;
		// the grader first watches a while for it, since an agent's
		// stray update would otherwise race the next prompt and pass for
		// part of its turn. A late update ends the watch at once.
		wctx, stop := context.WithTimeout(s.ctx, min(LateWindow, r.opts.ScenarioTimeout/10))
		conn.log.waitFor(wctx, i+1, func(f *frame) bool {
			u, ok := updateOf(f)
			return ok && u.SessionID == sess.ID() && historyKinds[u.Kind]
		})
		stop()
	}
	// The next prompt ends the window in which late updates are looked
	// for, and must be answered.
	if s.prompt(conn, sess, "cancel.no-late-updates", "the prompt after a cancelled turn", schema.Text(r.opts.Prompts.hello())) >= 0 {
		r.pass("cancel.no-late-updates", "the next prompt was answered")
	}
}

// idleAfter waits for the idle state_update of session id after frame
// index from, and returns its stop reason.
func idleAfter(s *scene, log *wireLog, id string, from int) (string, *frame, bool) {
	var stop string
	i, err := log.waitFor(s.ctx, from, func(f *frame) bool {
		u, ok := updateOf(f)
		if ok && u.SessionID == id && u.Kind == "state_update" && u.State == "idle" {
			stop = u.StopReason
			return true
		}
		return false
	})
	if err != nil {
		return "", nil, false
	}
	f := log.all()[i]
	return stop, &f, true
}

// tool asks for a file tool, allowing read and edit tool calls; in v1 it
// offers fs inside the workspace (v2 has no client fs).
func (r *runner) tool(s *scene) {
	c, conn, err := s.client(r.version == 1)
	if err != nil {
		r.fail("fs.absolute-paths", "connecting: "+s.why(err))
		return
	}
	defer c.Close()
	sess, err := s.newSession(c)
	if err != nil {
		r.fail("fs.absolute-paths", "session/new: "+s.why(err))
		return
	}
	s.prompt(conn, sess, "prompt.text", "a prompt asking for a file tool", schema.Text(r.opts.Prompts.tool()))
	seen := false
	for _, f := range conn.log.all() {
		if f.dir != '<' || !f.ok || !f.msg.isRequest() || (f.msg.Method != "fs/read_text_file" && f.msg.Method != "fs/write_text_file") {
			continue
		}
		seen = true
		var p struct {
			Path string `json:"path"`
		}
		json.Unmarshal(f.msg.Params, &p)
		if !isAbs(p.Path) {
			r.fail("fs.absolute-paths", fmt.Sprintf("%s with the relative path %q", f.msg.Method, p.Path), &f)
		}
	}
	if seen {
		r.pass("fs.absolute-paths", "every fs request named an absolute path")
	} else {
		r.notExercised("fs.absolute-paths", "the agent sent no fs request (the prompt did not steer it to; see Prompts.Tool)")
	}
}

// isAbs accepts POSIX and Windows absolute paths, whatever the grader's OS.
func isAbs(p string) bool {
	return filepath.IsAbs(p) || len(p) > 0 && p[0] == '/' ||
		len(p) > 2 && p[1] == ':' && (p[2] == '\\' || p[2] == '/')
}

// A 1x1 PNG and a 1-sample WAV, for the content-type prompts.
const (
	tinyPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
	tinyWAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQIAAAAAAA=="
)
