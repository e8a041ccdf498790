package acp

import (
	"github.com/acpclient/acp/schema"
	"strings"
)

// How a restart's replay is reconciled with what the session has folded:
// the agent replays the whole conversation (session/load, or v2's
// session/resume from the start), and the client already holds most of
// it, in History and in its turns. The reconciler sits in front of the
// fold (Session.apply) for the replay, on the reader goroutine, and drops
// what the session has already:
//
//   - a message chunk or whole message with a messageId the session has
//     seen (in any of its folds) — the session keeps its own copy, even
//     when the agent's is longer: that is the interrupted turn's tail;
//   - a tool call update, of any kind, with a toolCallId the session has;
//   - an id-less message chunk by position: the session's id-less text of
//     each kind (agent, thought, user — the user's including the prompts
//     the client sent, which a v1 agent replays as user chunks) is one
//     string, and the replay of that kind walks it. A chunk that matches
//     the text at the cursor is dropped; one that runs past the end of the
//     known text, or continues (no other kind in between) a message that
//     ended there, is the interrupted turn's unsent tail: dropped too. A
//     chunk after a boundary past the end is new. A chunk that disagrees
//     with the known text ends the walk: from there on the replay is new.
//
// Everything else (the session-level kinds — commands, mode, config
// options, plan, usage — and what is new) is folded as any replay is:
// into History, marked Replay. Each filter is O(1) in the session's size
// beyond the chunk's own text (map lookups, a prefix compare); building
// the reconciler is O(the session's folded text), once per restart.
type reconciler struct {
	msgIDs  map[string]bool
	toolIDs map[string]bool
	text    [4]string // known id-less text by kind (textMessage, textThought, textUser)
	pos     [4]int    // the replay's cursor in it
	blocks  [4]int    // known id-less non-text blocks by kind
	seen    [4]int    // non-text blocks the replay has matched
	cut     [4]bool   // the known text ended at (or in) the last chunk of this kind
	last    string    // the kind of the previous replayed update
}

// newReconciler snapshots what s has folded. s.mu is held.
func newReconciler(s *Session) *reconciler {
	r := &reconciler{msgIDs: map[string]bool{}, toolIDs: map[string]bool{}}
	var sb [4]strings.Builder
	add := func(f *fold, prompt string, promptBlocks int) {
		for k, l := range map[uint8]*msgList{textMessage: &f.messages, textThought: &f.thoughts, textUser: &f.user} {
			for _, m := range l.l {
				if m.id != "" {
					r.msgIDs[m.id] = true
					continue
				}
				sb[k].WriteString(m.text())
				r.blocks[k] += len(m.content)
			}
		}
		if len(f.user.l) == 0 {
			sb[textUser].WriteString(prompt)
			r.blocks[textUser] += promptBlocks
		}
		for _, tc := range f.tools.calls {
			r.toolIDs[tc.ToolCallID] = true
		}
	}
	add(&s.history, "", 0)
	for _, t := range s.turns {
		add(&t.fold, t.prompt, t.promptBlocks)
	}
	for k := range sb {
		r.text[k] = sb[k].String()
	}
	return r
}

// keep reports whether the replayed u is new to the session.
func (r *reconciler) keep(u schema.Update) bool {
	kind := u.UpdateKind()
	boundary := kind != r.last
	r.last = kind
	var k uint8
	var id string
	var block schema.ContentBlock
	switch u := u.(type) {
	case *schema.AgentMessageChunk:
		k, id, block = textMessage, u.MessageID, u.Content
	case *schema.AgentThoughtChunk:
		k, id, block = textThought, u.MessageID, u.Content
	case *schema.UserMessageChunk:
		k, id, block = textUser, u.MessageID, u.Content
	case *schema.AgentMessage:
		return !r.msgIDs[u.MessageID]
	case *schema.AgentThought:
		return !r.msgIDs[u.MessageID]
	case *schema.UserMessage:
		return !r.msgIDs[u.MessageID]
	case *schema.ToolCall:
		return !r.toolIDs[u.ToolCallID]
	case *schema.ToolCallUpdate:
		return !r.toolIDs[u.ToolCallID]
	case *schema.ToolCallContentChunk:
		return !r.toolIDs[u.ToolCallID]
	default:
		return true
	}
	if id != "" {
		return !r.msgIDs[id]
	}
	tb, isText := block.(*schema.TextContent)
	if !isText {
		if r.seen[k] < r.blocks[k] {
			r.seen[k]++
			return false
		}
		return r.past(k, boundary)
	}
	rem := r.text[k][r.pos[k]:]
	switch {
	case rem == "":
		return r.past(k, boundary)
	case strings.HasPrefix(rem, tb.Text):
		r.pos[k] += len(tb.Text)
		r.cut[k] = r.pos[k] == len(r.text[k])
		return false
	case strings.HasPrefix(tb.Text, rem):
		// The known text ends inside this chunk: the rest of it is the
		// interrupted turn's, which the client never had.
		r.pos[k] = len(r.text[k])
		r.cut[k] = true
		return false
	}
	// The replay disagrees with what the session holds: from here on,
	// nothing of this kind can be matched by position.
	r.pos[k] = len(r.text[k])
	r.cut[k] = false
	return true
}

// past decides a chunk of kind k past the known text: the tail of the
// message the known text ended in (no boundary since), or new.
func (r *reconciler) past(k uint8, boundary bool) bool {
	if r.cut[k] && !boundary {
		return false
	}
	r.cut[k] = false
	return true
}

// promptText returns the text of a prompt's text blocks, and how many
// other blocks it has: what a v1 agent replays as the user's message.
func promptText(blocks []schema.ContentBlock) (string, int) {
	var sb strings.Builder
	n := 0
	for _, b := range blocks {
		if t, ok := b.(*schema.TextContent); ok {
			sb.WriteString(t.Text)
		} else {
			n++
		}
	}
	return sb.String(), n
}
