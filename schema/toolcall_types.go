package schema

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aymanbagabas/go-udiff"
)

// ToolKind is the category of a tool call, a presentation hint (icons).
// Unknown values are kept; decoding never fails (a non-string reads as "").
// On a [ToolCall] "" means the agent sent none; treat it as ToolKindOther.
type ToolKind string

const (
	ToolKindRead       ToolKind = "read"
	ToolKindEdit       ToolKind = "edit"
	ToolKindDelete     ToolKind = "delete"
	ToolKindMove       ToolKind = "move"
	ToolKindSearch     ToolKind = "search"
	ToolKindExecute    ToolKind = "execute"
	ToolKindThink      ToolKind = "think"
	ToolKindFetch      ToolKind = "fetch"
	ToolKindSwitchMode ToolKind = "switch_mode"
	ToolKindOther      ToolKind = "other"
)

// ToolCallStatus is where a tool call stands. Unknown values are kept;
// decoding never fails. On a [ToolCall] "" means the agent sent none; treat
// it as ToolCallStatusPending.
type ToolCallStatus string

const (
	ToolCallStatusPending    ToolCallStatus = "pending"
	ToolCallStatusInProgress ToolCallStatus = "in_progress"
	ToolCallStatusCompleted  ToolCallStatus = "completed"
	ToolCallStatusFailed     ToolCallStatus = "failed"

	// ToolCallStatusCancelled is a LOCAL status: ACP v1 has no such value on
	// the wire, and no agent sends it. When a turn is cancelled
	// ([Turn.Cancel], or the end of the Prompt context) the client marks with
	// it every tool call of the turn that has not finished (not completed or
	// failed), and, after that, every tool call the agent announces, reopens
	// or patches to an unfinished status: the client's own account that the
	// tool will not run to its end. Each mark is an [EventUpdate] of origin
	// [OriginLocal] in the turn's feed.
	//
	// The mark is provisional. A status the agent sends later that is not
	// final (pending, in_progress, an unknown value) leaves it in place (the
	// update's other fields are applied). A final status the agent sends
	// later (completed or failed) replaces it: that is the agent's report of
	// what the tool actually did — it may have completed just before the
	// cancel reached the agent, or failed because the agent stopped it — and
	// the agent knows better than the client's guess. So a cancelled turn's
	// final state may show no cancelled tool call at all: agents that wind
	// down properly report failed (the mark then shows only in the feed).
	//
	// A renderer should show this status as "cancelled" (or "stopping")
	// while it stands, show the agent's completed or failed once it comes,
	// and, to say a tool call was cut short by the cancel, read
	// [TurnState.Cancelled] together with a failed status (or look for the
	// tool call's OriginLocal event). Never send it to an agent.
	ToolCallStatusCancelled ToolCallStatus = "cancelled"
)

// ToolCallContent is one item of a tool call's content, told apart by
// "type":
//
//   - *ToolContent ("content": a wrapped [ContentBlock])
//   - *DiffContent ("diff")
//   - *TerminalContent ("terminal": live output of a terminal, the
//     client's or the agent's own)
//   - *UnknownToolCallContent (any other "type", raw JSON kept; this is also
//     where a bare content block lands that an agent forgot to wrap)
//
// A known type with a bad required field fails to decode; in a tool call's
// content list such an item is dropped (skip-invalid-items).
type ToolCallContent interface {
	isToolCallContent()
}

func (*ToolContent) isToolCallContent()            {}
func (*DiffContent) isToolCallContent()            {}
func (*TerminalContent) isToolCallContent()        {}
func (*UnknownToolCallContent) isToolCallContent() {}

// ToolContent is regular content produced by a tool:
// {"type":"content","content":{...}}.
type ToolContent struct {
	Content ContentBlock    `json:"content"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// DiffContent is a file modification. OldText nil means a new file. v1 cannot
// express a deletion.
//
// A v2 agent's diff is a list of file changes instead, with an optional
// patch text: then Changes is non-nil and authoritative (paths and
// operations), Patch is the renderable text when the agent sent one, Path
// is the first change's path, and OldText and NewText are unset (v2 sends
// no file texts). Unified renders Patch for it.
type DiffContent struct {
	Path    string          `json:"path"`
	OldText *string         `json:"oldText,omitempty"`
	NewText string          `json:"newText"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
	// Changes is a v2 diff's file changes, nil for v1's. Unstable: ACP v2
	// is in Preview; may change.
	// (Not from v1's schema: json "-", MarshalJSON writes it.)
	Changes []DiffChange `json:"-"`
	// Patch is a v2 diff's patch text, nil when the agent sent none.
	// Unstable: ACP v2 is in Preview; may change.
	Patch *DiffPatch `json:"-"`
}

// TerminalContent embeds a terminal in a tool call. In the protocol it is
// one the client created with terminal/create, whose output the client
// shows, also after the terminal is released. Agents also name terminals
// of their own here, which the client never created: codex-acp 2.x puts
// every command it runs this way, with the tool call's id as TerminalID,
// also when the client offers no terminal capability, and reports the
// output and exit status in the tool call's _meta, which the fold keeps in
// [ToolCallState].AgentTerminal. Such an item is kept as it came, with no
// diagnostic: it is legitimate, display only (terminal/output on it would
// reach the client's own handler, which does not know the id). The client
// does not track which ids its terminal handlers created, so it cannot
// tell the two apart by id; a renderer shows AgentTerminal when it is set,
// else asks its own terminals.
type TerminalContent struct {
	TerminalID string          `json:"terminalId"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// UnknownToolCallContent is an item of a type this package does not know;
// Raw is the whole item as received and is re-sent byte for byte.
type UnknownToolCallContent struct {
	Type string
	Raw  json.RawMessage
}

// ToolCallLocation is a file (and optionally a 1-based line) a tool call is
// working on, for follow-along UIs. A malformed line reads as absent.
type ToolCallLocation struct {
	Path string          `json:"path"`
	Line *uint32         `json:"line,omitempty"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// Unified returns the change as a unified diff (the format of diff -u and
// git diff) with context unchanged lines around each change (negative means
// 3), headed "--- a/<path>" and "+++ b/<path>". A new file (OldText nil) is
// headed "--- /dev/null". Equal texts give "". The texts come from the
// agent: the work grows with their size (the diff is linear-space, and gives
// up on an optimal diff for very different texts rather than take long).
// For a v2 diff (Changes non-nil) it is the agent's Patch text as sent
// (context is not applied), "" when the agent sent none.
func (d DiffContent) Unified(context int) string {
	if d.Changes != nil {
		if d.Patch == nil {
			return ""
		}
		return d.Patch.Text
	}
	path := strings.TrimPrefix(d.Path, "/")
	old, from := "", "/dev/null"
	if d.OldText != nil {
		old, from = *d.OldText, "a/"+path
	}
	if context < 0 {
		context = udiff.DefaultContextLines
	}
	s, err := udiff.ToUnified(from, "b/"+path, old, udiff.Lines(old, d.NewText), context)
	if err != nil {
		return "" // not reached: the edits are computed from old itself
	}
	return s
}

func (c ToolContent) MarshalJSON() ([]byte, error) {
	if c.Content == nil {
		return nil, fmt.Errorf("acp: tool call content: Content is nil")
	}
	type body ToolContent
	return json.Marshal(struct {
		Type string `json:"type"`
		body
	}{"content", body(c)})
}

func (c DiffContent) MarshalJSON() ([]byte, error) {
	if c.Changes != nil {
		return marshalDiffV2(c)
	}
	type body DiffContent
	return json.Marshal(struct {
		Type string `json:"type"`
		body
	}{"diff", body(c)})
}

func (c TerminalContent) MarshalJSON() ([]byte, error) {
	type body TerminalContent
	return json.Marshal(struct {
		Type string `json:"type"`
		body
	}{"terminal", body(c)})
}

// MarshalJSON returns Raw unchanged (or a bare {"type":...} when Raw is empty).
func (c UnknownToolCallContent) MarshalJSON() ([]byte, error) {
	return marshalRaw(c.Raw, func() ([]byte, error) {
		return json.Marshal(struct {
			Type string `json:"type"`
		}{c.Type})
	})
}
