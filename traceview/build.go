package traceview

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// request is a request seen on the wire, waiting for its response.
type request struct {
	method string
	sid    string
	params json.RawMessage
	t      *float64
	item   *item
	seg    *segment
}

type builder struct {
	p     *page
	opts  Options
	byID  map[string]*session
	reqs  map[string]*request // by direction of the request + its id
	tools map[string]*item    // by session id + "\x00" + toolCallId
	msgs  map[string]*item    // v2 whole messages by session + kind + messageId
	// open holds the turns not ended yet (each the last segment of its
	// session), so that place finds the one running without walking
	// every session for every note.
	open map[*segment]struct{}
	// lastTurn is the turn whose prompt came last: the page opens it.
	lastTurn *segment
	agent    string
	proto    int
}

// load reads a trace and folds it, frame by frame as it is read, into
// the page's model.
func load(r io.Reader, opts Options) (*page, *trace, error) {
	b := newBuilder(opts)
	tr, err := readTrace(r, opts, func(f frame) {
		i := len(b.p.Frames)
		b.p.Frames = append(b.p.Frames, rawFrame{Line: f.line, T: f.t, Dir: f.dir, Msg: f.msg, Note: f.note})
		if f.t != nil {
			b.p.Stats.Timestamps = true
		}
		b.frame(i, f)
	})
	if err != nil {
		return nil, nil, err
	}
	b.finish(tr)
	return b.p, tr, nil
}

func newBuilder(opts Options) *builder {
	return &builder{
		p:     &page{V: 1, Title: opts.Title, Conn: []*item{}, Sessions: []*session{}},
		opts:  opts,
		byID:  map[string]*session{},
		reqs:  map[string]*request{},
		tools: map[string]*item{},
		msgs:  map[string]*item{},
		open:  map[*segment]struct{}{},
	}
}

// finish completes the model once the whole trace is read.
func (b *builder) finish(tr *trace) {
	b.p.Bad = tr.bad
	if b.p.Bad == nil {
		b.p.Bad = []badLine{}
	}
	st := &b.p.Stats
	st.Lines, st.Frames, st.Bad, st.Listed, st.Bytes = tr.lines, tr.frames, tr.malformed, len(tr.bad), tr.bytes
	st.MaxBytes, st.Truncated, st.CutLine = b.opts.MaxBytes, tr.truncated, tr.cutLine
	st.Agent, st.Proto = b.agent, b.proto
	if b.lastTurn != nil {
		b.lastTurn.Open = true
	}
	for _, s := range b.p.Sessions {
		for _, g := range s.Segs {
			if g.Kind == "turn" {
				st.Turns++
			}
			for _, it := range g.Items {
				it.flush()
				g.Counts[it.K]++
			}
		}
	}
}

func (b *builder) frame(i int, f frame) {
	if f.dir == "!" {
		// TraceWriter's notes say what they are; a recording's are its own.
		title, text := "note", f.note
		for _, p := range []struct{ prefix, title string }{{"stderr: ", "agent stderr"}, {"stdout (not JSON): ", "agent wrote a line that is not JSON"}} {
			if strings.HasPrefix(text, p.prefix) {
				title, text = p.title, text[len(p.prefix):]
			}
		}
		it := &item{K: "note", T: f.t, Title: title, Text: text}
		it.addFrame(i)
		b.place(it)
		return
	}
	m, err := peekEnvelope(f.msg)
	if err != nil {
		// A valid JSON object that is not a JSON-RPC message.
		it := &item{K: "error", T: f.t, Title: "not a JSON-RPC message", Text: err.Error()}
		it.addFrame(i)
		b.p.Conn = append(b.p.Conn, it)
		return
	}
	hasID := len(m.ID) > 0 && string(m.ID) != "null"
	switch {
	case m.Method != "" && hasID:
		b.request(i, f, &m)
	case m.Method != "":
		b.notification(i, f, &m)
	case hasID:
		b.response(i, f, &m)
	default:
		it := &item{K: "error", T: f.t, Title: "a message with neither method nor id"}
		it.addFrame(i)
		b.p.Conn = append(b.p.Conn, it)
	}
}

// place puts a note where it happened: in the one turn running, if one
// is, else with the connection.
func (b *builder) place(it *item) {
	if len(b.open) == 1 {
		for g := range b.open {
			g.Items = append(g.Items, it)
		}
		return
	}
	b.p.Conn = append(b.p.Conn, it)
}

// endTurn ends the turn g, at t with stop when the trace says how (a
// turn ended by the next prompt learns its stop reason from a late
// response all the same).
func (b *builder) endTurn(g *segment, t *float64, stop string) {
	g.Ended = true
	if stop != "" {
		g.T1, g.Stop = t, stop
	}
	delete(b.open, g)
}

func (b *builder) session(id, how string) *session {
	if s, ok := b.byID[id]; ok {
		if how != "seen" && s.How == "seen" {
			s.How = how
		}
		return s
	}
	s := &session{ID: id, How: how, Agent: b.agent, Proto: b.proto, Segs: []*segment{}}
	b.byID[id] = s
	b.p.Sessions = append(b.p.Sessions, s)
	return s
}

func (s *session) last() *segment {
	if len(s.Segs) == 0 {
		return nil
	}
	return s.Segs[len(s.Segs)-1]
}

// current is the segment an update to s belongs to: the running turn, or
// the segment outside turns that follows the last one.
func (s *session) current(t *float64) *segment {
	if g := s.last(); g != nil && (g.Kind == "outside" || !g.Ended) {
		return g
	}
	g := &segment{Kind: "outside", T0: t, Counts: map[string]int{}, Items: []*item{}}
	s.Segs = append(s.Segs, g)
	return g
}

func (b *builder) add(sid string, t *float64, it *item) *segment {
	if sid == "" {
		b.p.Conn = append(b.p.Conn, it)
		return nil
	}
	g := b.session(sid, "seen").current(t)
	g.Items = append(g.Items, it)
	return g
}

func key(dir string, id json.RawMessage) string { return dir + string(id) }

func other(dir string) string {
	if dir == ">" {
		return "<"
	}
	return ">"
}

func (b *builder) request(i int, f frame, m *envelope) {
	var p struct {
		SessionID string          `json:"sessionId"`
		Cwd       string          `json:"cwd"`
		Prompt    json.RawMessage `json:"prompt"`
		Path      string          `json:"path"`
		Command   string          `json:"command"`
	}
	_ = json.Unmarshal(m.Params, &p)
	r := &request{method: m.Method, sid: p.SessionID, params: m.Params, t: f.t}
	if f.dir == ">" && m.Method == "initialize" {
		// A new connection: ids start again.
		b.reqs = map[string]*request{}
	}
	b.reqs[key(f.dir, m.ID)] = r
	switch {
	case f.dir == ">" && m.Method == "session/prompt":
		// Even without a sessionId (a broken client's): the turn is what
		// the trace is about.
		s := b.session(p.SessionID, "seen")
		if g := s.last(); g != nil && g.Kind == "turn" && !g.Ended {
			// The previous turn's end is not in the trace.
			b.endTurn(g, nil, "")
		}
		s.turns++
		text := blocksText(p.Prompt)
		g := &segment{Kind: "turn", N: s.turns, T0: f.t, Prompt: firstLine(text, 200), Counts: map[string]int{}}
		it := &item{K: "user", T: f.t, Title: "prompt", Text: text}
		it.addFrame(i)
		g.Items = []*item{it}
		s.Segs = append(s.Segs, g)
		b.open[g] = struct{}{}
		b.lastTurn = g
		r.item, r.seg = it, g
	case f.dir == "<" && m.Method == "session/request_permission":
		r.item = b.permission(i, f, p.SessionID, m.Params)
	default:
		title := m.Method
		switch {
		case p.Path != "":
			title += " " + p.Path
		case p.Command != "":
			title += " " + p.Command
		}
		title = clip(title, maxNameBytes)
		it := &item{K: "event", T: f.t, Title: title, Text: summary(m.Params, "sessionId")}
		it.addFrame(i)
		if f.dir == "<" {
			it.Title = "agent asks: " + title
		}
		r.item = it
		if p.SessionID != "" && (m.Method == "session/load" || m.Method == "session/resume" || m.Method == "session/fork") {
			s := b.session(p.SessionID, strings.TrimPrefix(m.Method, "session/"))
			s.Cwd = p.Cwd
		}
		r.seg = b.add(p.SessionID, f.t, it)
	}
}

func (b *builder) response(i int, f frame, m *envelope) {
	r, ok := b.reqs[key(other(f.dir), m.ID)]
	if !ok {
		it := &item{K: "event", T: f.t, Title: "a response to no request in the trace (id " + clip(string(m.ID), maxNameBytes) + ")", Text: summary(m.Result, "")}
		if m.Error != nil {
			it.K, it.Text = "error", fmt.Sprintf("%d %s", m.Error.Code, m.Error.Message)
		}
		it.addFrame(i)
		b.p.Conn = append(b.p.Conn, it)
		return
	}
	delete(b.reqs, key(other(f.dir), m.ID))
	if r.item != nil {
		r.item.addFrame(i)
	}
	if m.Error != nil {
		msg := fmt.Sprintf("%s failed: %d %s", r.method, m.Error.Code, m.Error.Message)
		if len(m.Error.Data) > 0 && string(m.Error.Data) != "null" {
			msg += " " + clip(compact(m.Error.Data), 2000)
		}
		if r.item != nil && r.item.Perm != nil {
			r.item.Perm.Answer, r.item.Perm.Err = "error", msg
			r.item.Perm.MS = since(r.t, f.t)
			return
		}
		it := &item{K: "error", T: f.t, Title: r.method + " failed", Text: msg}
		it.addFrame(i)
		if r.seg != nil {
			r.seg.Items = append(r.seg.Items, it)
			if r.seg.Kind == "turn" && r.method == "session/prompt" {
				b.endTurn(r.seg, f.t, "error")
			}
		} else {
			b.add(r.sid, f.t, it)
		}
		return
	}
	switch r.method {
	case "initialize":
		var res struct {
			ProtocolVersion int `json:"protocolVersion"`
			AgentInfo       *struct {
				Name, Title, Version string
			} `json:"agentInfo"`
			Info *struct {
				Name, Title, Version string
			} `json:"info"`
		}
		_ = json.Unmarshal(m.Result, &res)
		b.proto = res.ProtocolVersion
		info := res.AgentInfo
		if info == nil {
			info = res.Info
		}
		b.agent = ""
		if info != nil {
			b.agent = strings.TrimSpace(firstNonEmpty(info.Title, info.Name) + " " + info.Version)
		}
		if r.item != nil {
			r.item.Text = fmt.Sprintf("protocol %d, agent %s", b.proto, firstNonEmpty(b.agent, "(unnamed)"))
		}
	case "session/new", "session/fork":
		var res struct {
			SessionID string `json:"sessionId"`
		}
		_ = json.Unmarshal(m.Result, &res)
		if res.SessionID != "" {
			var p struct {
				Cwd string `json:"cwd"`
			}
			_ = json.Unmarshal(r.params, &p)
			s := b.session(res.SessionID, strings.TrimPrefix(r.method, "session/"))
			s.Cwd = p.Cwd
			if r.item != nil {
				r.item.Text = "session " + res.SessionID
			}
		}
	case "session/prompt":
		var res struct {
			StopReason string `json:"stopReason"`
		}
		_ = json.Unmarshal(m.Result, &res)
		if res.StopReason != "" && r.seg != nil {
			b.endTurn(r.seg, f.t, res.StopReason)
		}
	case "session/request_permission":
		if r.item == nil || r.item.Perm == nil {
			return
		}
		var res struct {
			Outcome struct {
				Outcome  string `json:"outcome"`
				OptionID string `json:"optionId"`
			} `json:"outcome"`
		}
		_ = json.Unmarshal(m.Result, &res)
		pm := r.item.Perm
		pm.Answer, pm.Option = firstNonEmpty(res.Outcome.Outcome, "answered"), res.Outcome.OptionID
		for _, o := range pm.Options {
			if o.ID == pm.Option {
				pm.Name = o.Name
			}
		}
		pm.MS = since(r.t, f.t)
		pm.Tone = answerTone(pm)
		if tc := b.tools[r.sid+"\x00"+pm.Tool]; tc != nil {
			tc.Tool.Perm, tc.Tool.PermTone = permSummary(pm), pm.Tone
		}
	default:
		if r.item != nil && r.item.K == "event" && len(m.Result) > 0 && string(m.Result) != "{}" && string(m.Result) != "null" {
			r.item.Text = strings.TrimSpace(r.item.Text + " → " + summary(m.Result, ""))
		}
	}
}

func permSummary(p *perm) string {
	s := p.Answer
	if p.Name != "" || p.Option != "" {
		s = firstNonEmpty(p.Name, p.Option)
	}
	if p.MS != nil {
		s += " after " + duration(*p.MS)
	}
	return s
}

func (b *builder) notification(i int, f frame, m *envelope) {
	switch {
	case m.Method == "session/update":
		b.update(i, f, m.Params)
		return
	case f.dir == "<" && m.Method == "$/cancel_request":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
			ID        json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(m.Params, &p)
		id := p.RequestID
		if len(id) == 0 {
			id = p.ID
		}
		if r, ok := b.reqs[key("<", id)]; ok && r.item != nil && r.item.Perm != nil {
			r.item.addFrame(i)
			r.item.Perm.Answer = "withdrawn"
			r.item.Perm.MS = since(r.t, f.t)
			return
		}
	}
	var p struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(m.Params, &p)
	title := clip(m.Method, maxNameBytes)
	if f.dir == "<" {
		title = "agent: " + title
	}
	it := &item{K: "event", T: f.t, Title: title, Text: summary(m.Params, "sessionId")}
	it.addFrame(i)
	b.add(p.SessionID, f.t, it)
}

func (b *builder) permission(i int, f frame, sid string, params json.RawMessage) *item {
	var p struct {
		Title    string          `json:"title"`
		ToolCall json.RawMessage `json:"toolCall"`
		Subject  struct {
			ToolCall json.RawMessage `json:"toolCall"`
		} `json:"subject"`
		Options []struct {
			OptionID string `json:"optionId"`
			Name     string `json:"name"`
			Kind     string `json:"kind"`
		} `json:"options"`
	}
	_ = json.Unmarshal(params, &p)
	tc := p.ToolCall
	if len(tc) == 0 {
		tc = p.Subject.ToolCall
	}
	var ref updateFields
	_ = json.Unmarshal(tc, &ref)
	refTitle := ""
	if ref.Title != nil {
		refTitle = *ref.Title
	}
	pm := &perm{Tool: ref.ToolCallID}
	for _, o := range p.Options {
		pm.Options = append(pm.Options, option{ID: o.OptionID, Name: o.Name, Kind: o.Kind, Tone: tone(o.Kind)})
	}
	it := &item{K: "perm", T: f.t, Title: firstNonEmpty(p.Title, refTitle), Perm: pm}
	it.addFrame(i)
	if ref.ToolCallID != "" && sid != "" {
		// The request may carry the tool call's fields (v1's toolCall is a
		// tool_call_update). Its title is the question, worded for the
		// user ("Allow editing a.go?"): the permission row's title, and
		// the card's only when the call has none yet, as the client's
		// fold does.
		if c := b.tools[sid+"\x00"+ref.ToolCallID]; c != nil && c.Tool.Title != "" {
			ref.Title = nil
		}
		card := b.toolCard(i, f, sid, ref.ToolCallID, &ref, false)
		if it.Title == "" {
			it.Title = card.Tool.Title
		}
	}
	if it.Title == "" {
		it.Title = "permission"
	}
	b.add(sid, f.t, it)
	return it
}

type planEntry struct {
	Content  string `json:"content"`
	Status   string `json:"status"`
	Priority string `json:"priority"`
}

// updateFields are the fields of a session update the page uses, tool
// call fields included: a params object is decoded once (a large trace is
// mostly updates).
type updateFields struct {
	Kind       string          `json:"sessionUpdate"`
	MessageID  string          `json:"messageId"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"toolCallId"`
	State      string          `json:"state"`
	StopReason string          `json:"stopReason"`
	Error      *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Entries []planEntry `json:"entries"`
	// Plan is a plan_update's plan; its entries are a plan of type items'.
	Plan *struct {
		Entries []planEntry `json:"entries"`
	} `json:"plan"`
	// A tool call's (tool_call, tool_call_update, a permission's toolCall).
	Title     *string `json:"title"`
	ToolKind  *string `json:"kind"`
	Status    *string `json:"status"`
	Locations *[]struct {
		Path string `json:"path"`
		Line *int   `json:"line"`
	} `json:"locations"`
	RawInput  json.RawMessage `json:"rawInput"`
	RawOutput json.RawMessage `json:"rawOutput"`
}

func (b *builder) update(i int, f frame, params json.RawMessage) {
	var p struct {
		SessionID string       `json:"sessionId"`
		Update    updateFields `json:"update"`
	}
	_ = json.Unmarshal(params, &p)
	u := &p.Update
	// rawUpdate is the update as sent, for the rare items that show it.
	rawUpdate := func() json.RawMessage {
		var r struct {
			Update json.RawMessage `json:"update"`
		}
		_ = json.Unmarshal(params, &r)
		return r.Update
	}
	b.p.Stats.Updates++
	sid := p.SessionID
	if sid == "" {
		it := &item{K: "error", T: f.t, Title: "session/update without a sessionId", Text: summary(rawUpdate(), "")}
		it.addFrame(i)
		b.p.Conn = append(b.p.Conn, it)
		return
	}
	s := b.session(sid, "seen")
	switch u.Kind {
	case "user_message_chunk", "agent_message_chunk", "agent_thought_chunk":
		k := map[string]string{"user_message_chunk": "user", "agent_message_chunk": "msg", "agent_thought_chunk": "thought"}[u.Kind]
		g := s.current(f.t)
		text := blockText(u.Content)
		if n := len(g.Items); n > 0 {
			if last := g.Items[n-1]; last.K == k && last.msgID == u.MessageID && last.Tool == nil && last.Title == "" {
				last.appendText(text)
				last.addFrame(i)
				return
			}
		}
		it := &item{K: k, T: f.t, Text: text, msgID: u.MessageID}
		it.addFrame(i)
		g.Items = append(g.Items, it)
	case "user_message", "agent_message", "agent_thought":
		k := map[string]string{"user_message": "user", "agent_message": "msg", "agent_thought": "thought"}[u.Kind]
		mk := sid + "\x00" + k + "\x00" + u.MessageID
		if it, ok := b.msgs[mk]; ok && u.MessageID != "" {
			it.Text, it.buf = blocksText(u.Content), nil // chunks appended to it are replaced too
			it.addFrame(i)
			return
		}
		it := &item{K: k, T: f.t, Text: blocksText(u.Content), msgID: u.MessageID}
		it.addFrame(i)
		if u.MessageID != "" {
			b.msgs[mk] = it
		}
		s.current(f.t).Items = append(s.current(f.t).Items, it)
	case "tool_call", "tool_call_update":
		b.toolCard(i, f, sid, u.ToolCallID, u, true)
	case "tool_call_content_chunk":
		card := b.toolCard(i, f, sid, u.ToolCallID, nil, true)
		card.Tool.Content = append(card.Tool.Content, b.content(u.Content)...)
	case "plan", "plan_update":
		var lines []string
		entries := u.Entries
		if u.Plan != nil {
			entries = u.Plan.Entries
		}
		for _, e := range entries {
			lines = append(lines, fmt.Sprintf("[%s] %s", firstNonEmpty(e.Status, "?"), e.Content))
		}
		it := &item{K: "plan", T: f.t, Title: u.Kind, Text: strings.Join(lines, "\n")}
		it.addFrame(i)
		s.current(f.t).Items = append(s.current(f.t).Items, it)
	case "state_update":
		g := s.current(f.t)
		it := &item{K: "event", T: f.t, Title: "state: " + u.State, Text: u.StopReason}
		it.addFrame(i)
		g.Items = append(g.Items, it)
		if u.Error != nil {
			e := &item{K: "error", T: f.t, Title: "turn error", Text: fmt.Sprintf("%d %s", u.Error.Code, u.Error.Message)}
			e.addFrame(i)
			g.Items = append(g.Items, e)
		}
		if u.State == "idle" && u.StopReason != "" && g.Kind == "turn" && !g.Ended {
			b.endTurn(g, f.t, u.StopReason)
		}
	default:
		it := &item{K: "event", T: f.t, Title: firstNonEmpty(u.Kind, "update"), Text: summary(rawUpdate(), "sessionUpdate")}
		it.addFrame(i)
		s.current(f.t).Items = append(s.current(f.t).Items, it)
	}
}

// maxRawBytes bounds a tool call's raw input and output as the card shows
// them (indented); the frames keep them whole.
const maxRawBytes = 64 << 10

// maxNameBytes bounds what of a method name, path, command or id the page
// puts in an item's title: a title names, the raw frame has the rest.
const maxNameBytes = 300

// toolCard returns the card of a tool call, creating it where it first
// appears, and applies the fields of upd (a tool_call or
// tool_call_update, or nil) to it.
func (b *builder) toolCard(i int, f frame, sid, id string, u *updateFields, own bool) *item {
	k := sid + "\x00" + id
	it, ok := b.tools[k]
	if !ok {
		it = &item{K: "tool", T: f.t, Tool: &tool{ID: id}}
		b.tools[k] = it
		b.session(sid, "seen").current(f.t).Items = append(b.session(sid, "seen").current(f.t).Items, it)
	}
	if own {
		it.addFrame(i)
	}
	if u == nil {
		return it
	}
	tc := it.Tool
	if u.Title != nil {
		tc.Title = *u.Title
	}
	if u.ToolKind != nil {
		tc.Kind = *u.ToolKind
	}
	if u.Status != nil && *u.Status != tc.Status {
		tc.Status = *u.Status
		tc.Hist = append(tc.Hist, change{S: *u.Status, T: f.t})
	}
	if len(u.Content) > 0 && string(u.Content) != "null" {
		// A list replaces (v1 and v2 alike), keeping what it replaced as
		// the card's history; null, like absent, leaves it as it is (the
		// client's fold does the same).
		var list []json.RawMessage
		_ = json.Unmarshal(u.Content, &list)
		var next []content
		for _, c := range list {
			next = append(next, b.content(c)...)
		}
		tc.replaceContent(next, f.t)
	}
	if u.Locations != nil {
		tc.Locs = nil
		for _, l := range *u.Locations {
			s := l.Path
			if l.Line != nil {
				s = fmt.Sprintf("%s:%d", s, *l.Line)
			}
			tc.Locs = append(tc.Locs, s)
		}
	}
	if len(u.RawInput) > 0 {
		tc.In = pretty(u.RawInput, maxRawBytes)
	}
	if len(u.RawOutput) > 0 {
		tc.Out = pretty(u.RawOutput, maxRawBytes)
	}
	return it
}

// content renders one tool call content item (or a chunk of one).
func (b *builder) content(raw json.RawMessage) []content {
	var c struct {
		Type       string          `json:"type"`
		Content    json.RawMessage `json:"content"`
		Path       string          `json:"path"`
		OldText    *string         `json:"oldText"`
		NewText    *string         `json:"newText"`
		TerminalID string          `json:"terminalId"`
		Changes    []struct {
			Operation string `json:"operation"`
			Path      string `json:"path"`
			OldPath   string `json:"oldPath"`
		} `json:"changes"`
		Patch *struct {
			Format string `json:"format"`
			Text   string `json:"text"`
		} `json:"patch"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return []content{{Type: "other", Text: clip(compact(raw), 2000)}}
	}
	switch c.Type {
	case "content":
		return []content{{Type: "text", Text: blockText(c.Content)}}
	case "terminal":
		return []content{{Type: "terminal", Text: "terminal " + c.TerminalID}}
	case "diff":
		if c.Changes != nil || c.Patch != nil {
			var lines []string
			for _, ch := range c.Changes {
				s := ch.Operation + " " + ch.Path
				if ch.OldPath != "" {
					s += " (from " + ch.OldPath + ")"
				}
				lines = append(lines, s)
			}
			out := content{Type: "diff", Path: c.Path, Note: strings.Join(lines, "\n")}
			if len(c.Changes) > 0 && out.Path == "" {
				out.Path = c.Changes[0].Path
			}
			if c.Patch != nil {
				out.Diff = strings.Split(strings.TrimSuffix(c.Patch.Text, "\n"), "\n")
				if c.Patch.Format != "git_patch" {
					out.Note = strings.TrimSpace(out.Note + "\npatch format " + c.Patch.Format)
				}
			}
			return []content{out}
		}
		return []content{b.diff(c.Path, c.OldText, c.NewText)}
	case "text", "image", "audio", "resource", "resource_link":
		// A bare content block (v2 chunks carry blocks directly).
		return []content{{Type: "text", Text: blockText(raw)}}
	}
	return []content{{Type: firstNonEmpty(c.Type, "other"), Text: clip(compact(raw), 2000)}}
}
