package acp

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/acpclient/acp/internal/agenttext"
	"github.com/acpclient/acp/schema"
)

// Child sessions (subagents, stable since schema 1.34.0). A client that
// sets ClientOptions.Subagents advertises clientCapabilities.subagents: {};
// its agent may then announce, with a subagent_update on a parent session,
// a child session it created and owns. The client keeps the child as a
// Session of its own — registered by id, so the child's updates and
// requests find it — whose turns the agent starts and ends by the state it
// reports on the parent's subagent_update (v1 has no other signal: the
// client never prompts a child). What the parent said about the child
// (title, description, capabilities, state, cwd, _meta) is folded, by the
// patch rules, into the parent's SessionState.Subagents.
//
// All of it runs on the reader goroutine, in wire order: the announcement
// is registered before the next line is read, so the child's first update
// or request, on the very next line, finds it.
//
// In ACP v2 all of this is baseline, with no capability (subagentsOn),
// and the child's own state_update also drives its turn (childStateV2).

// ErrSubagentRestricted: the call is not permitted on a child session. A
// child accepts only what its parent's subagent_update allows
// (SubagentSessionCapabilities: cancel); prompts, modes, config options,
// models, close, load, resume and fork are the agent's own. Nothing was
// sent.
var ErrSubagentRestricted = errors.New("acp: not permitted on a child session")

// DiagProtocolViolation reports traffic the protocol forbids, which the
// client did not fold: a subagent_update, session_message or
// session_message_chunk when ClientOptions.Subagents is not set (v1), a
// subagent_update that re-parents a session or names an ordinary one,
// updates for a child that arrived before its announcement, or a message
// or tool call content naming a session never announced (those are folded
// still: only the rule is reported).
const DiagProtocolViolation DiagnosticKind = "protocol_violation"

// Subagent is what a parent session's agent said about one of its child
// sessions, every subagent_update for it folded by the patch rules: an
// absent field keeps the value, null clears it, a value replaces it; a
// _meta object patches the stored one by top-level key.
type Subagent struct {
	SessionID   string `json:"sessionId"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Capabilities are the operations the client may perform on the
	// child; nil: none (never given, or cleared).
	Capabilities *schema.SubagentSessionCapabilities `json:"capabilities,omitempty"`
	// State is the child's activity as last reported; nil: unset or
	// cleared, which is not idle.
	State *schema.StateUpdate `json:"state,omitempty"`
	CWD   string              `json:"cwd,omitempty"`
	// AdditionalDirectories are the child's, as reported: nil when unset
	// (never reported, or cleared by null: the child inherits the
	// parent's), a non-nil empty list when the agent reported none ([]).
	AdditionalDirectories []string        `json:"additionalDirectories,omitempty"`
	Meta                  json.RawMessage `json:"_meta,omitempty"`
}

// patchMeta overlays the top-level keys of patch on old; either may be
// nil. The result is a new object (keys sorted), old is left alone.
func patchMeta(old, patch json.RawMessage) json.RawMessage {
	if patch == nil {
		return old
	}
	if old == nil {
		return patch
	}
	var a, b map[string]json.RawMessage
	if json.Unmarshal(old, &a) != nil || json.Unmarshal(patch, &b) != nil {
		return patch
	}
	maps.Copy(a, b)
	out, err := json.Marshal(a)
	if err != nil {
		return patch
	}
	return out
}

// Parent returns the session that announced this one as its child, or nil
// for a session the client created, loaded or resumed.
func (s *Session) Parent() *Session { return s.sub.parent }

// Children yields the child sessions announced on this session, in the
// order they were announced (a snapshot taken when the iteration starts).
// Released children (Session.Release) are left out; the parent forgets
// one once its last turn has ended. The parent's SessionState.Subagents
// keeps what it said about every child not released: a released child's
// entry leaves it (an EventSubagentReleased on the parent's feed).
func (s *Session) Children() iter.Seq[*Session] {
	s.mu.Lock()
	kids := slices.Clone(s.sub.children)
	s.mu.Unlock()
	return func(yield func(*Session) bool) {
		for _, k := range kids {
			k.mu.Lock()
			closed := k.closed
			k.mu.Unlock()
			if !closed && !yield(k) {
				return
			}
		}
	}
}

// Subagent returns what the parent said about this child session
// (its entry in the parent's SessionState.Subagents), and false for a
// session that is not a child, or a child that was released.
func (s *Session) Subagent() (Subagent, bool) {
	if s.sub.parent == nil {
		return Subagent{}, false
	}
	p := s.sub.parent
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, sa := range p.state.Subagents {
		if sa.SessionID == s.id {
			return sa, true
		}
	}
	return Subagent{}, false
}

// checkMutable fails with ErrSubagentRestricted for a child session: the
// schema permits no client mutation of a child but those its capabilities
// grant (cancel, checked by Session.Cancel).
func (s *Session) checkMutable(method string) error {
	if s.sub.parent != nil {
		return callError(method, fmt.Errorf("%w: session %s is a child of %s", ErrSubagentRestricted, agenttext.Quote(s.id), agenttext.Quote(s.sub.parent.id)))
	}
	return nil
}

// checkNotChild fails with ErrSubagentRestricted when id names a child
// session of this client (load, resume and fork name sessions by id).
func (c *Client) checkNotChild(method, id string) error {
	if s := c.lookup(id); s != nil {
		return s.checkMutable(method)
	}
	return nil
}

// Cancel cancels the session's running turn, as [Turn.Cancel] does; with
// no turn running it does nothing. On a child session it fails with an
// error wrapping ErrSubagentRestricted, and sends nothing, unless the
// parent's latest subagent_update granted capabilities.cancel.
func (s *Session) Cancel() error {
	if err := s.checkCancel(); err != nil {
		return err
	}
	if t := s.CurrentTurn(); t != nil {
		t.Cancel()
	}
	return nil
}

// checkCancel is Cancel's capability check.
func (s *Session) checkCancel() error {
	if s.sub.parent == nil {
		return nil
	}
	s.mu.Lock()
	ok := s.sub.subCaps != nil && s.sub.subCaps.Cancel != nil
	s.mu.Unlock()
	if !ok {
		return callError(schema.MethodSessionCancel, fmt.Errorf("%w: child session %s does not grant cancel", ErrSubagentRestricted, agenttext.Quote(s.id)))
	}
	return nil
}

// AgentStarted reports whether the agent started the turn (a child
// session's turn, begun by a running state on its parent's
// subagent_update) rather than the client's Prompt.
func (t *Turn) AgentStarted() bool { return t.byAgent }

// isSubagentKind reports whether u is one of the kinds only a client that
// advertised subagents may receive.
func isSubagentKind(u schema.Update) bool {
	switch u.(type) {
	case *schema.SubagentUpdate, *schema.SessionMessage, *schema.SessionMessageChunk:
		return true
	}
	return false
}

// checkSubagentTraffic runs on the reader for an update u on session sid,
// before it is routed, and reports whether it may be folded; it announces
// a child for a valid subagent_update (returned, for applySubagentState
// once the parent has folded the update). Violations are reported as
// diagnostics.
func (c *Client) checkSubagentTraffic(sid string, u schema.Update) (fold bool, child *Session) {
	if !c.subagentsOn() {
		if isSubagentKind(u) {
			c.diagIn(sid, DiagProtocolViolation, fmt.Sprintf("dropped a %s on session %s: the client did not advertise subagents", u.UpdateKind(), agenttext.Quote(sid)), nil)
			return false, nil
		}
		if hasSessionContent(u) {
			c.diagIn(sid, DiagProtocolViolation, fmt.Sprintf("a tool call of session %s has session content, which the client did not advertise (kept as unknown content)", agenttext.Quote(sid)), nil)
		}
		return true, nil
	}
	switch u := u.(type) {
	case *schema.SubagentUpdate:
		return c.announce(sid, u)
	case *schema.SessionMessage:
		for _, f := range []schema.Field[string]{u.SenderSessionID, u.RecipientSessionID} {
			if f.Value != nil {
				c.checkKnown(sid, "session_message", *f.Value)
			}
		}
	case *schema.ToolCall:
		c.checkRefs(sid, u.Content)
	case *schema.ToolCallUpdate:
		c.checkRefs(sid, u.Content)
	}
	return true, nil
}

// subagentsOn reports whether the client takes child sessions: in v1 when
// it advertised them (ClientOptions.Subagents), in v2 always (ACP v2:
// understanding subagent_update, registering child sessions and applying
// their restrictions are baseline requirements; no client capability).
func (c *Client) subagentsOn() bool { return c.opts.Subagents || c.version == 2 }

// checkKnown reports a violation when id names no session of this client.
func (c *Client) checkKnown(sid, what, id string) {
	c.mu.Lock()
	_, ok := c.routing.sessions[id]
	c.mu.Unlock()
	if !ok {
		c.diagIn(sid, DiagProtocolViolation, fmt.Sprintf("a %s on session %s names session %s, which was never announced (folded still)", what, agenttext.Quote(sid), agenttext.Quote(id)), nil)
	}
}

func (c *Client) checkRefs(sid string, content []schema.ToolCallContent) {
	for _, tc := range content {
		if ref, ok := SessionReferenceOf(tc); ok {
			c.checkKnown(sid, "tool call's session content", ref.SessionID)
		}
	}
}

func hasSessionContent(u schema.Update) bool {
	var content []schema.ToolCallContent
	switch u := u.(type) {
	case *schema.ToolCall:
		content = u.Content
	case *schema.ToolCallUpdate:
		content = u.Content
	}
	for _, tc := range content {
		if _, ok := SessionReferenceOf(tc); ok {
			return true
		}
	}
	return false
}

// announce validates a subagent_update on session sid and registers the
// child it announces the first time. It reports whether the update may be
// folded into the parent, and the child.
func (c *Client) announce(sid string, u *schema.SubagentUpdate) (bool, *Session) {
	violation := func(why string) (bool, *Session) {
		c.diagIn(sid, DiagProtocolViolation, fmt.Sprintf("dropped a subagent_update on session %s for %s: %s", agenttext.Quote(sid), agenttext.Quote(u.SessionID), why), nil)
		return false, nil
	}
	if u.SessionID == sid {
		return violation("a session cannot be its own child")
	}
	c.mu.Lock()
	parent := c.routing.sessions[sid]
	if parent == nil {
		c.mu.Unlock()
		return violation("the parent session is not known")
	}
	if child := c.routing.sessions[u.SessionID]; child != nil {
		c.mu.Unlock()
		if child.sub.parent != parent {
			return violation("that session is not this session's child (a later update patches a child, never moves it)")
		}
		return true, child
	}
	if limit := c.opts.Limits.MaxSubagentSessions; c.subs.registered >= limit {
		// Reported at the 1st, 2nd, 4th, 8th... drop: a flood costs a
		// few diagnostics, not one per line.
		c.subs.dropped++
		n := c.subs.dropped
		c.mu.Unlock()
		if n&(n-1) == 0 {
			c.diagIn(sid, DiagLimitExceeded, fmt.Sprintf("dropped %d subagent_update announcements (the latest on session %s, for %s): %d child sessions are kept already (Limits.MaxSubagentSessions)", n, agenttext.Quote(sid), agenttext.Quote(u.SessionID), limit), nil)
		}
		return false, nil
	}
	// Updates held for the id came before the announcement: the rule says
	// the announcement comes first, so they are not the child's.
	early := len(c.routing.orphans[u.SessionID])
	for _, o := range c.routing.orphans[u.SessionID] {
		c.routing.orphanBytes -= o.size
	}
	delete(c.routing.orphans, u.SessionID)
	// roots never change once a session exists: no lock needed.
	cwd, dirs := parent.roots[0], parent.roots[1:]
	if u.CWD != nil && *u.CWD != "" { // "": a v2 null, inherit
		cwd = *u.CWD
	}
	if u.AdditionalDirectories != nil {
		dirs = u.AdditionalDirectories
	}
	root := parent
	for root.sub.parent != nil {
		root = root.sub.parent
	}
	if root.sub.kids == nil {
		root.sub.kids = &subtreeBudget{}
	}
	child := newSession(c, u.SessionID, cwd, slices.Clip(dirs))
	child.sub.parent = parent
	child.sub.budget = root.sub.kids
	child.state.ParentSessionID = parent.id
	child.logLocked(sentry{kind: entSetup, setup: &SessionSetup{ParentSessionID: parent.id}})
	// The agent chose the child's directories; the client granted only
	// the parent's. Requests for the child (fs/*, terminal/*) are
	// confined to the parent's roots.
	child.roots = parent.roots
	c.routing.setLocked(child.id, child)
	c.subs.registered++
	c.mu.Unlock()
	parent.mu.Lock()
	parent.sub.children = append(parent.sub.children, child)
	parent.mu.Unlock()
	if early > 0 {
		c.diagIn(u.SessionID, DiagProtocolViolation, fmt.Sprintf("dropped %d updates for child session %s that arrived before its announcement", early, agenttext.Quote(u.SessionID)), nil)
	}
	return true, child
}

// applySubagentState records the child's capabilities and starts or ends
// its agent-started turn by the state the parent's update reports:
// running or requires_action starts one (when none runs), idle ends it
// with its stop reason; a cleared or unknown state changes nothing.
func (s *Session) applySubagentState(u *schema.SubagentUpdate) {
	s.mu.Lock()
	if u.Capabilities.Present {
		s.sub.subCaps = u.Capabilities.Value
	}
	if !u.State.Present || u.State.Value == nil || s.closed {
		s.mu.Unlock()
		return
	}
	st := u.State.Value
	switch st.State {
	case schema.StateRunning, schema.StateRequiresAction:
		s.startAgentTurnLocked()
		s.mu.Unlock()
	case schema.StateIdle:
		t := s.turn
		s.mu.Unlock()
		if t == nil || !t.byAgent {
			return
		}
		// The error of an error stop stays in the parent's
		// Subagents[i].State.
		a := agentAnswer{stop: st.StopReason, usage: st.Usage, meta: st.Meta}
		s.endTurn(t, func(l *turnLife) { l.agentEnded(a) })
	default:
		s.mu.Unlock()
	}
}

// startAgentTurnLocked starts the child's agent-started turn, unless one
// runs. It counts as active for the v2 lifecycle (turn_v2.go): the agent
// reported it running, so the child's own idle state_update ends it. s.mu
// is held.
func (s *Session) startAgentTurnLocked() {
	if s.turn != nil || s.closed {
		return
	}
	t := &Turn{s: s, done: make(chan struct{}), call: promptCall{sent: make(chan error, 1)}, byAgent: true}
	t.v2.active = true
	s.turn = t
	s.turns = append(s.turns, t)
	s.started++
	s.logLocked(sentry{kind: entTurnStart, turn: t})
	s.notifyLocked()
}

// childStateV2 is v2's second signal for a child's turn: the child's own
// state_update (running or requires_action) starts its agent-started
// turn before the update is folded, so the update and what follows are
// the turn's; its idle ends the turn as any v2 turn ends (Session.apply).
// The parent's mirrored subagent_update state does the same, idempotently
// (applySubagentState).
func (s *Session) childStateV2(u schema.Update) {
	st, ok := u.(*schema.StateUpdate)
	if !ok || s.sub.parent == nil || s.c.version != 2 {
		return
	}
	if st.State == schema.StateRunning || st.State == schema.StateRequiresAction {
		s.mu.Lock()
		s.startAgentTurnLocked()
		s.mu.Unlock()
	}
}

// subtreeBudget counts what the children under one session the client
// opened were charged together, against Limits.MaxSubagentBytes. Atomic:
// children of one tree fold under their own locks.
type subtreeBudget struct {
	charged atomic.Int64
	drops   atomic.Int64
}

// chargeTreeLocked charges size against a child's tree and reports
// whether the tree is past Limits.MaxSubagentBytes, with the diagnostic
// to report (at the 1st, 2nd, 4th... drop). s.mu is held.
func (s *Session) chargeTreeLocked(size int64) (msg string, past bool) {
	limit := s.c.opts.Limits.MaxSubagentBytes
	if s.sub.budget.charged.Load() > limit {
		if n := s.sub.budget.drops.Add(1); n&(n-1) == 0 {
			msg = fmt.Sprintf("dropped %d updates of child sessions under the session that owns %s: they reached %d bytes, over Limits.MaxSubagentBytes (%d)", n, agenttext.Quote(s.id), s.sub.budget.charged.Load(), limit)
		}
		return msg, true
	}
	s.sub.budget.charged.Add(size)
	s.sub.charged += size
	return "", false
}

// treeOverLocked reports whether s is a child whose tree is past
// Limits.MaxSubagentBytes.
func (s *Session) treeOverLocked() bool {
	return s.sub.budget != nil && s.sub.budget.charged.Load() > s.c.opts.Limits.MaxSubagentBytes
}

// failChildTurns ends the agent-started turns still running when the
// connection ends: no idle state can come any more.
func (c *Client) failChildTurns(reason error) {
	c.mu.Lock()
	var turns []*Turn
	for _, s := range c.routing.sessions {
		if s.sub.parent == nil {
			continue
		}
		s.mu.Lock()
		if t := s.turn; t != nil && t.byAgent {
			turns = append(turns, t)
		}
		s.mu.Unlock()
	}
	c.mu.Unlock()
	for _, t := range turns {
		t.fail(callError("subagent", reason))
	}
}

// SessionReference is the "session" content of a tool call: a
// display-only link to another session the tool call operates on, such as
// a child it created, delegated to or waits on. It grants nothing and says
// nothing about that session's work. The pinned schema predates it (it is
// in the published reference of schema 1.34.0), so it decodes as an
// [*schema.UnknownToolCallContent] of type "session"; [SessionReferenceOf] reads
// it typed.
type SessionReference struct {
	SessionID string          `json:"sessionId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// SessionReferenceOf returns the session a tool call content item links
// to, when it is session content with a sessionId.
func SessionReferenceOf(tc schema.ToolCallContent) (SessionReference, bool) {
	u, ok := tc.(*schema.UnknownToolCallContent)
	if !ok || u.Type != "session" {
		return SessionReference{}, false
	}
	var w struct {
		SessionID *string         `json:"sessionId"`
		Meta      json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(u.Raw, &w) != nil || w.SessionID == nil {
		return SessionReference{}, false
	}
	ref := SessionReference{SessionID: *w.SessionID}
	if len(w.Meta) > 0 && strings.HasPrefix(string(w.Meta), "{") {
		ref.Meta = w.Meta
	}
	return ref, true
}

// forgetSubagentLocked removes a released child's entry from the parent's
// Subagents, by an EventSubagentReleased that SessionFold applies alike.
// The parent would otherwise keep what it said about every child it ever
// announced, which an agent that keeps announcing children the host keeps
// releasing grows without bound; live children are bounded by
// Limits.MaxSubagentSessions. It is the client's event, not an Update:
// no agent sends it. p.mu is held.
func (p *Session) forgetSubagentLocked(id string) {
	i := slices.IndexFunc(p.state.Subagents, func(sa Subagent) bool { return sa.SessionID == id })
	if i < 0 {
		return
	}
	left := p.state.Subagents[i]
	releaseSubagent(&p.state, id)
	p.logLocked(sentry{kind: entSubagentReleased, sub: &left, cost: costSessionEntry})
}

// releaseSubagent removes child id's entry from st.Subagents, copying the
// list so snapshots never change, and follows it into the background
// items that named it.
func releaseSubagent(st *SessionState, id string) {
	st.Subagents = slices.DeleteFunc(slices.Clone(st.Subagents), func(sa Subagent) bool { return sa.SessionID == id })
	refreshSubagent(st, id)
}

// mirrorChildStateV2 copies a v2 child's own state_update into its
// parent's Subagents entry (State), as a local *SubagentUpdate with only
// State on the parent's feed: the agent SHOULD mirror the child's state on
// the parent itself (schema SubagentUpdate), and the client does not wait
// for it; a duplicate report is idempotent. Called after the child folded
// it, without the child's lock (parent before child is never taken).
func (s *Session) mirrorChildStateV2(u schema.Update) {
	st, ok := u.(*schema.StateUpdate)
	if !ok || s.sub.parent == nil || s.c.version != 2 {
		return
	}
	p := s.sub.parent
	m := &schema.SubagentUpdate{SessionID: s.id, State: schema.Field[schema.StateUpdate]{Present: true, Value: st}}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || !slices.ContainsFunc(p.state.Subagents, func(sa Subagent) bool { return sa.SessionID == s.id }) {
		return // released: its entry is gone
	}
	foldSessionUpdate(&p.state, m)
	p.logLocked(sentry{kind: entLocal, u: m, cost: costSessionEntry})
}
