package acp

import (
	"context"
	"encoding/json"
	"iter"
	"unsafe"

	"github.com/acpclient/acp/schema"
)

// Event is one change to a turn's folded state. A turn's events are
// numbered from 1 in the order they were applied, and they are the whole of
// that state: folding them from the first with a [TurnFold] reproduces
// [Turn.State] exactly. An Event and what it points to are read-only.
type Event struct {
	// Seq is the event's sequence number within its turn: 1, 2, 3...
	Seq uint64 `json:"seq"`
	// Joined is, for an event of Turn.EventsMerged that stands for
	// several plain text chunks, how many: its Update joins the texts of
	// events Seq-Joined+1 through Seq. 0 for any other event.
	Joined int       `json:"joined,omitempty"`
	Kind   EventKind `json:"kind"`
	// Origin says who made an EventUpdate.
	Origin EventOrigin `json:"origin,omitempty"`
	// Update is what an EventUpdate applied. For OriginAgent it is the
	// agent's update, the one Turn.Updates yields. For OriginPermission and
	// OriginLocal it is a *ToolCallUpdate.
	Update schema.Update `json:"update,omitempty"`
	// Meta is, for an agent's update, the _meta of the session/update
	// notification that carried it (beside sessionId and update; the
	// update's own _meta stays on the Update), when the agent sent one.
	Meta json.RawMessage `json:"_meta,omitempty"`
	// ToolCall is, when the event changed a tool call, that tool call as
	// merged after the event: a UI updates one card from it without
	// re-implementing the merge rules or copying the turn. It is shared and
	// never changes afterwards.
	ToolCall *ToolCallState `json:"toolCall,omitempty"`
	// End is the outcome of the turn, for EventEnd.
	End *TurnEnd `json:"end,omitempty"`
	// State is, for EventReleased in a turn's feed, the turn's state as of
	// Seq.
	State *TurnState `json:"state,omitempty"`
	// Session is, for EventReleased in a session's feed, the session's
	// state as of Seq.
	Session *SessionState `json:"session,omitempty"`
	// Setup is what an EventSetup set.
	Setup *SessionSetup `json:"setup,omitempty"`
	// Restart is, for EventRestarted, how the session came back.
	Restart *SessionRestart `json:"restart,omitempty"`
	// Subagent is, for EventSubagentReleased, the child's entry as it
	// left SessionState.Subagents; its SessionID names the child.
	Subagent *Subagent `json:"subagent,omitempty"`
	// Activity is, for a v2 agent's state_update in a session's feed,
	// SessionState.Activity after it: the update's background items
	// joined to what they name as it stood when the update arrived. It is
	// shared and never changes afterwards. Unstable: ACP v2 is in Preview.
	Activity *Activity `json:"activity,omitempty"`
	// Replay: in a session's feed, the update was replayed by session/load.
	Replay bool `json:"replay,omitempty"`
	// Trimmed is, for EventOutsideTrimmed, how many entries were dropped
	// from the front of SessionState.Outside.
	Trimmed int `json:"trimmed,omitempty"`
	// OverBudget: in a session's feed, an agent update that arrived past
	// Limits.MaxTurnBytes and, replacing session state (a mode, commands,
	// config options...), was applied to the session only: not to its turn,
	// History or Outside.
	OverBudget bool `json:"overBudget,omitempty"`
	// Turn is the turn the event belongs to: in a session's feed, the turn
	// that was running when it was applied (nil outside turns). Nil in
	// events made by hand or decoded.
	Turn *Turn `json:"-"`

	// histKind is, for EventReleased in a session's feed, the kind of the
	// last update folded into History, which decides whether an id-less
	// chunk continues its last message. Session carries it only while
	// Outside is not empty (ReleaseHistory empties it).
	histKind string
}

// EventKind tells events apart.
type EventKind string

const (
	// EventUpdate: Update was applied to the turn's state.
	EventUpdate EventKind = "update"
	// EventCancel: the client cancelled the turn ([Turn.Cancel]); the
	// turn's Cancelled becomes true. Local marks of its unfinished tool
	// calls follow as EventUpdate events of origin OriginLocal.
	EventCancel EventKind = "cancel"
	// EventEnd: the turn ended; End says how. It is the turn's last event.
	EventEnd EventKind = "end"
	// EventReleased: the events a reader asked for were released (see
	// Limits.TurnLogs, [Turn.Release], Limits.SessionLog); State (in a
	// turn's feed) or Session (in a session's) holds the state as of Seq,
	// which replaces whatever the reader folded. In a turn's feed it
	// happens only once the turn has ended, and no event follows it.
	EventReleased EventKind = "released"
	// EventSetup (a session's feed): the session was created, or a
	// session/new, load or resume result set its modes and config options;
	// Setup says what.
	EventSetup EventKind = "setup"
	// EventTurnStart (a session's feed): Turn started.
	EventTurnStart EventKind = "turn_start"
	// EventOutsideTrimmed (a session's feed): the oldest Trimmed entries of
	// SessionState.Outside were dropped, by Limits.OutsideLog or
	// [Session.ReleaseHistory]. The folded History does not change.
	EventOutsideTrimmed EventKind = "outside_trimmed"
	// EventTurnReleased (a session's feed): Turn, an ended turn, was
	// released because the session's ended turns kept more than
	// Limits.MaxEndedTurnBytes, as if by [Turn.Release]: its state is gone
	// (its outcome stays) and it left Session.Turns. SessionState does
	// not change.
	EventTurnReleased EventKind = "turn_released"
	// EventRestarted (a session's feed): the agent died and was restarted
	// (ClientOptions.Restart), and the session was brought back as
	// Restart says; SessionState.Restarts counts these. Exactly one per
	// restart that restored the session: it is logged when the restart's
	// last attempt has succeeded, before any call goes through again, so an
	// attempt that failed (its agent died while restoring this session or
	// another) adds none, and a session lost, or a restart given up, has
	// none. It therefore follows what the restore replayed (what the
	// client did not have yet, as replayed updates; what it had is not
	// repeated), and may follow updates the restarted agent sent of its own
	// accord after answering.
	EventRestarted EventKind = "restarted"
	// EventSubagentReleased (a parent session's feed): the host released
	// a child session ([Session.Release]), and Subagent, its entry, left
	// SessionState.Subagents (and the background items naming it lose
	// their join). Without it the parent would keep what it said about
	// every child it ever announced.
	EventSubagentReleased EventKind = "subagent_released"
)

// EventOrigin says who made an [EventUpdate].
type EventOrigin string

const (
	// OriginAgent: a session/update notification from the agent.
	OriginAgent EventOrigin = "agent"
	// OriginPermission: the toolCall of a session/request_permission, as
	// applied to the tool call. The request's title is not applied to a
	// tool call that already has one (it is the question, not the tool's
	// name; see PermissionRequest.Title).
	OriginPermission EventOrigin = "permission"
	// OriginLocal: a change the client made itself — a tool call set to
	// ToolCallStatusCancelled because the turn was cancelled (a turn's
	// feed), the mode or config options SetMode and SetConfigOption set,
	// and a v2 child's own state_update mirrored into its parent's
	// Subagents entry (a *SubagentUpdate with only State) (a session's
	// feed).
	OriginLocal EventOrigin = "local"
)

// TurnEnd is how a turn ended; the fields mean what TurnState's do.
type TurnEnd struct {
	StopReason schema.StopReason `json:"stopReason,omitempty"`
	Usage      *schema.Usage     `json:"usage,omitempty"`
	// Meta is the prompt response's _meta, if the agent sent one.
	Meta            json.RawMessage   `json:"_meta,omitempty"`
	AgentStopReason schema.StopReason `json:"agentStopReason,omitempty"`
	AgentError      *schema.Error     `json:"agentError,omitempty"`
	// Err is the turn's error, as Wait returns it.
	Err error `json:"-"`
}

// Kinds of logged entries (an entry is an Event without its sequence
// number, which is its index, and its turn). entryKind maps them, and the
// session's kinds that follow, to the Event's Kind and Origin.
const (
	entAgent uint8 = iota
	entPermission
	entLocal
	entCancel
	entEnd
)

// entryKind returns the Kind and Origin of an Event made from a log entry
// of kind k, a turn's or a session's.
func entryKind(k uint8) (EventKind, EventOrigin) {
	switch k {
	case entAgent:
		return EventUpdate, OriginAgent
	case entPermission:
		return EventUpdate, OriginPermission
	case entLocal:
		return EventUpdate, OriginLocal
	case entCancel:
		return EventCancel, ""
	case entEnd:
		return EventEnd, ""
	case entSetup:
		return EventSetup, ""
	case entTurnStart:
		return EventTurnStart, ""
	case entOutsideTrimmed:
		return EventOutsideTrimmed, ""
	case entTurnReleased:
		return EventTurnReleased, ""
	case entRestarted:
		return EventRestarted, ""
	case entSubagentReleased:
		return EventSubagentReleased, ""
	}
	return "", ""
}

// logChunk is the size of the chunks a turn's log grows by: appending
// never copies the log, whatever its length, and costs 16 bytes an event
// (a run of one message's text chunks, fewer: turnlog.go).
const logChunk = 256

// entry is one event of a turn's log, in 16 bytes: a pointer and a packed
// word. The pointer is, as the word's tag says: nothing (a cancel, an
// end), a *Update (the update, boxed: an interface would take 16 bytes of
// the entry), a *tcEntry (the update and the tool call as merged after
// it), or for a plain text chunk (see plainText), the bulk of every turn,
// its *msgAcc: the chunk keeps no update, only where its text is in its
// message's buffer — the message's own text, so the text is held once.
// Events and Updates make an equal chunk from it when they yield it.
//
// The word packs, from the low bits: the entry's kind (3 bits), the plain
// text chunk's kind (2 bits, textNone for other entries), whether the
// notification had its own _meta (1 bit; Turn.metas holds it by seq, as it
// is rare), the tag (2 bits), and the text's place (textPos): its length
// (24 bits), its offset in its block (16 bits) and its block (16 bits). A
// chunk whose numbers do not fit keeps its update.
type entry struct {
	p unsafe.Pointer
	x uint64
}

// tcEntry is what an entry keeps for an event that changed a tool call.
type tcEntry struct {
	u  schema.Update
	tc *ToolCallState
}

const (
	entryTextShift = 3
	entryMetaBit   = 1 << 5
	entryTagShift  = 6
	entryLenShift  = 8
	entryMaxLen    = 1<<24 - 1
	entryOffShift  = 32
	entryMaxOff    = 1<<16 - 1
	entryBlkShift  = 48
	entryMaxBlk    = 1<<16 - 1
)

// Tags of an entry's pointer.
const (
	tagNone uint8 = iota
	tagUpdate
	tagTool
	tagText
)

func (e *entry) kind() uint8 { return uint8(e.x & 7) }
func (e *entry) text() uint8 { return uint8(e.x>>entryTextShift) & 3 }
func (e *entry) tag() uint8  { return uint8(e.x>>entryTagShift) & 3 }
func (e *entry) hasMeta() bool {
	return e.x&entryMetaBit != 0
}

// newEntry makes the entry of an event of kind with update u (nil for a
// cancel or an end) that changed tool call tc (nil: none).
func newEntry(kind uint8, u schema.Update, tc *ToolCallState) entry {
	switch {
	case tc != nil:
		return toolEntry(kind, &tcEntry{u, tc})
	case u != nil:
		box := new(schema.Update)
		*box = u
		return entry{p: unsafe.Pointer(box), x: uint64(kind) | uint64(tagUpdate)<<entryTagShift}
	}
	return entry{x: uint64(kind)}
}

// toolEntry makes the entry of an event of kind that changed a tool call,
// as te holds it.
func toolEntry(kind uint8, te *tcEntry) entry {
	return entry{p: unsafe.Pointer(te), x: uint64(kind) | uint64(tagTool)<<entryTagShift}
}

// textEntry makes the entry of a plain text chunk of kind k whose text is
// at p in m, and reports false when the numbers do not fit.
func textEntry(k uint8, m *msgAcc, p textPos) (entry, bool) {
	if p.n > entryMaxLen || p.off > entryMaxOff || p.blk > entryMaxBlk {
		return entry{}, false
	}
	x := uint64(entAgent) | uint64(k)<<entryTextShift | uint64(tagText)<<entryTagShift
	x |= uint64(p.n)<<entryLenShift | uint64(p.off)<<entryOffShift | uint64(p.blk)<<entryBlkShift
	return entry{p: unsafe.Pointer(m), x: x}, true
}

// pos returns the place of a plain text chunk's text.
func (e *entry) pos() textPos {
	return textPos{
		n:   int(e.x>>entryLenShift) & entryMaxLen,
		off: int(e.x>>entryOffShift) & entryMaxOff,
		blk: int(e.x >> entryBlkShift),
	}
}

// logLocked appends an event to the turn's log and wakes its readers.
// s.mu is held.
func (t *Turn) logLocked(kind uint8, u schema.Update, tc *ToolCallState) {
	t.appendLocked(newEntry(kind, u, tc))
}

func (t *Turn) appendLocked(e entry) {
	t.log.append(e)
	t.updated.fire()
}

// updateLocked returns the update an entry holds and the tool call it
// changed, making a plain text chunk's again. s.mu is held: the message's
// buffer may be growing.
func updateLocked(e *entry) (schema.Update, *ToolCallState) {
	switch e.tag() {
	case tagUpdate:
		return *(*schema.Update)(e.p), nil
	case tagTool:
		v := (*tcEntry)(e.p)
		return v.u, v.tc
	case tagText:
		m := (*msgAcc)(e.p)
		return newTextChunk(e.text(), m.id, m.slice(e.pos())), nil
	}
	return nil, nil
}

// updatesLocked returns the updates of the entries of batch, made once
// under s.mu, for a reader to yield after releasing it; nil for a batch
// with no plain text chunk, whose entries hold their updates. The chunks
// are made in new slabs when r.sliceOnly (Turn.Updates, Turn.Events), else
// in r's values (Turn.EventsReused); the slice is r's, valid until its
// next call.
func updatesLocked(batch []entry, r *textReuse) []schema.Update {
	mk, ok := newTextMaker(batch) // the chunks in slabs (fold_textbatch.go)
	if !ok {
		return nil
	}
	var us []schema.Update
	if r.sliceOnly {
		r.us = grown(r.us, len(batch))
		us = r.us[:len(batch)]
	} else {
		us = r.take(&mk, len(batch))
	}
	if r.merge {
		r.spans = grown(r.spans, len(batch))
	}
	for i := 0; i < len(batch); {
		us[i] = nil
		e := &batch[i]
		if e.tag() != tagText {
			i++
			continue
		}
		m, p, n := (*msgAcc)(e.p), e.pos(), 1
		if r.merge {
			for i+n < len(batch) && continues(&batch[i+n-1], &batch[i+n]) {
				p.n += batch[i+n].pos().n
				n++
			}
			r.spans[i] = n
		}
		us[i] = mk.chunk(e.text(), m.id, m.slice(p))
		i += n
	}
	return us
}

// continues reports whether plain text chunk b continues chunk a in a
// merged feed (Turn.EventsMerged): both of one message, kind and origin,
// neither with a notification _meta of its own, and b's text right after
// a's in one block of the message's text, so that the two read as one
// chunk of their texts joined.
func continues(a, b *entry) bool {
	if a.tag() != tagText || a.p != b.p || a.hasMeta() || (a.x^b.x)&^entryPlaceMask != 0 {
		return false
	}
	pa := a.pos()
	return pa.off+pa.n == b.pos().off
}

// entryUpdate returns what updateLocked does, taking a plain text chunk's
// update from us, the batch's updatesLocked; no lock is needed.
func entryUpdate(e *entry, us []schema.Update, i int) (schema.Update, *ToolCallState) {
	if e.tag() == tagText {
		return us[i], nil
	}
	return updateLocked(e)
}

// event makes the public form of the entry with sequence number seq, of
// update u and tool call tc (see entryUpdate). The outcome fields of an end
// entry are final once it is logged.
func (t *Turn) event(seq uint64, e *entry, u schema.Update, tc *ToolCallState) Event {
	ev := Event{Seq: seq, Update: u, ToolCall: tc, Turn: t}
	ev.Kind, ev.Origin = entryKind(e.kind())
	if e.hasMeta() {
		t.s.mu.Lock()
		ev.Meta = t.metas[seq]
		t.s.mu.Unlock()
	}
	if e.kind() == entEnd {
		end := t.life.out
		ev.End = &end
	}
	return ev
}

// markLocked marks a tool call of a cancelled turn cancelled, as an event
// of its own. s.mu is held.
func (t *Turn) markLocked(id string) {
	mk, tc := t.foldMarkLocked(id)
	t.logLocked(entLocal, mk, tc)
}

// markIfCancelledLocked applies the cancellation policy (toolTable.toMark)
// after an event that changed tc (nil: no tool call changed). O(1). s.mu is
// held.
func (t *Turn) markIfCancelledLocked(tc *ToolCallState) {
	if tc == nil {
		return
	}
	for _, id := range t.fold.tools.toMark(t.life.cancelled, tc) {
		t.markLocked(id)
	}
}

// markAllLocked applies the cancellation policy at the cancel itself: every
// unfinished tool call is marked. s.mu is held.
func (t *Turn) markAllLocked() {
	for _, id := range t.fold.tools.toMark(t.life.cancelled, nil) {
		t.markLocked(id)
	}
}

// patchLocked applies a permission request's toolCall and returns the
// sequence number of its event. s.mu is held.
func (t *Turn) patchLocked(p *schema.ToolCallUpdate) uint64 {
	patch := keepTitle(&t.fold.tools, p)
	t.fold.visits++
	tc := t.fold.tools.update(patch)
	t.logLocked(entPermission, patch, tc)
	seq := t.log.seq
	t.markIfCancelledLocked(tc)
	return seq
}

// Events returns an iterator over the turn's events with a sequence number
// greater than after: Events(ctx, 0) replays them all, Events(ctx, seq)
// resumes after the last one a reader saw (or after the seq of a
// [Turn.Snapshot]). It yields events already applied, then follows new ones
// as they are applied, in order, and stops after the EventEnd, when ctx ends
// or when the consumer stops. Any number of goroutines may range over it at
// once, each at its own pace: the reader goroutine never waits for them.
//
// A turn's log is not released (Limits.TurnLogs, [Turn.Release]) while an
// iteration reads it, so a reader that started never misses an event. One
// that starts later and asks for released events gets a single
// EventReleased, whose State is the turn's state as of its Seq, and stops.
func (t *Turn) Events(ctx context.Context, after uint64) iter.Seq[Event] {
	return func(yield func(Event) bool) {
		r := textReuse{sliceOnly: true} // the chunks new, the slice reused
		t.events(ctx, after, &r, yield)
	}
}

// EventsReused is Events for a reader that keeps no plain text chunk past
// the yield that gave it, as a renderer that writes each chunk out and
// forgets it. Such a chunk's *AgentMessageChunk, *AgentThoughtChunk or
// *UserMessageChunk, and its *TextContent, are made again for later
// chunks of the same iteration once yield returns: copy the values to
// keep them. The Text string itself stays valid, as does every other
// update, field and tool call, as Events gives them.
//
// Events makes each logged text chunk anew for each reader (the log keeps
// only its place in the message's text), about 100 bytes a chunk, which
// on a long turn is most of what the process allocates; EventsReused
// makes a batch's chunks into one iteration's values instead, so a reader
// that ranges over a turn of any length allocates a bounded amount. Each
// iteration has values of its own: any number may run at once, as with
// Events.
func (t *Turn) EventsReused(ctx context.Context, after uint64) iter.Seq[Event] {
	return func(yield func(Event) bool) {
		var r textReuse
		t.events(ctx, after, &r, yield)
	}
}

// EventsMerged is EventsReused for a reader that shows a message's text
// rather than each chunk of it, as a terminal or an editor's pane does: the
// plain text chunks of one message that follow one another in the log come
// as one event, its Update a chunk of their texts joined, its Seq the last
// one's and its Joined how many it joined. A reader that keeps up gets
// about the events Events gives; one that fell behind by a thousand chunks
// catches up in a few events instead of a thousand. Only chunks that
// fold as one join: of one message (messageId) and kind, from the agent,
// none with a notification _meta of its own. Folding the merged events
// (TurnFold) gives the state folding every event gives. The values are
// reused as EventsReused's are.
func (t *Turn) EventsMerged(ctx context.Context, after uint64) iter.Seq[Event] {
	return func(yield func(Event) bool) {
		r := textReuse{merge: true}
		t.events(ctx, after, &r, yield)
	}
}

// events is one iteration of Events (r.sliceOnly), EventsReused or
// EventsMerged (r.merge).
func (t *Turn) events(ctx context.Context, after uint64, r *textReuse, yield func(Event) bool) {
	s := t.s
	s.mu.Lock()
	t.log.enter()
	s.mu.Unlock()
	defer t.leave()
	next := after + 1
	var scratch []entry // a run's entries (turnlog.go)
	for {
		s.mu.Lock()
		if t.log.released && next <= t.log.seq {
			st := t.stateLocked()
			seq := t.log.seq
			s.mu.Unlock()
			yield(Event{Seq: seq, Kind: EventReleased, State: &st, Turn: t})
			return
		}
		batch := t.log.from(next, &scratch)
		us := updatesLocked(batch, r)
		ended := t.life.ended
		var wait chan struct{}
		if len(batch) == 0 && !ended {
			wait = t.updated.wait()
			clear(r.us) // a waiting reader holds none of its chunks
		}
		s.mu.Unlock()
		for i := 0; i < len(batch); {
			u, tc := entryUpdate(&batch[i], us, i)
			n := 1
			if r.merge && batch[i].tag() == tagText {
				n = r.spans[i]
			}
			ev := t.event(next+uint64(n-1), &batch[i], u, tc)
			if n > 1 {
				ev.Joined = n
			}
			if !yield(ev) {
				return
			}
			next += uint64(n)
			i += n
		}
		if len(batch) == 0 {
			if ended {
				return
			}
			select {
			case <-wait:
			case <-ctx.Done():
				return
			}
		}
	}
}

// WaitFor returns the first of the turn's events, replayed from the first
// and then followed, for which match reports true. It returns an error
// wrapping ErrTurnEnded if the turn ended with no match, and ctx's error if
// ctx ended first. match runs on the caller's goroutine, without locks; it
// sees each event's merged ToolCall, so waiting for a tool call to finish
// costs no snapshot:
//
//	ev, err := turn.WaitFor(ctx, func(ev acp.Event) bool {
//		return ev.ToolCall != nil && ev.ToolCall.ToolCallID == id && ev.ToolCall.Finished()
//	})
func (t *Turn) WaitFor(ctx context.Context, match func(Event) bool) (Event, error) {
	for ev := range t.Events(ctx, 0) {
		if match(ev) {
			return ev, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return Event{}, err
	}
	return Event{}, ErrTurnEnded
}

// TurnFold folds a turn's events into its state, with the client's merge
// rules: a reader that applies every event from the first (or from an
// EventReleased) in order gets exactly what [Turn.State] returns after the
// last of them. It is for readers on the other side of a process boundary
// (the events of `acp --json`) and for tests; in-process UIs usually need
// only each event's ToolCall. The zero value is an empty turn. A TurnFold is
// not safe for concurrent use.
type TurnFold struct {
	f        fold
	seq      uint64
	cancel   bool
	end      *TurnEnd
	released *TurnState
}

// Apply folds one event. An EventUpdate without an Origin counts as the
// agent's; events of the session's feed only (EventSetup,
// EventTurnStart, EventOutsideTrimmed, EventTurnReleased,
// EventSubagentReleased...) are ignored.
func (tf *TurnFold) Apply(ev Event) {
	tf.seq = ev.Seq
	switch ev.Kind {
	case EventUpdate:
		if ev.Update == nil {
			return
		}
		if ev.Origin == OriginAgent || ev.Origin == "" {
			tf.f.apply(ev.Update)
		} else if u, ok := ev.Update.(*schema.ToolCallUpdate); ok {
			tf.f.tools.update(u)
		}
	case EventCancel:
		tf.cancel = true
	case EventEnd:
		tf.end = ev.End
	case EventReleased:
		tf.released = ev.State
	}
}

// Seq returns the sequence number of the last event applied.
func (tf *TurnFold) Seq() uint64 { return tf.seq }

// State returns the folded state.
func (tf *TurnFold) State() TurnState {
	if tf.released != nil {
		return *tf.released
	}
	st := tf.f.state()
	st.Cancelled = tf.cancel
	if e := tf.end; e != nil {
		st.StopReason, st.Usage, st.Meta, st.AgentStopReason, st.AgentError = e.StopReason, e.Usage, e.Meta, e.AgentStopReason, e.AgentError
	}
	return st
}
