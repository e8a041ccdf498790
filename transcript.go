package acp

// ItemKind says what an [Item] of a transcript is.
type ItemKind string

const (
	ItemUserMessage ItemKind = "user_message"
	ItemMessage     ItemKind = "message"
	ItemThought     ItemKind = "thought"
	ItemToolCall    ItemKind = "tool_call"
	// ItemSessionMessage is a message between sessions (SessionMessage set).
	ItemSessionMessage ItemKind = "session_message"
)

// Item is one entry of a state's transcript: a message, thought or user
// message (Message set), a tool call (ToolCall set), or a message between
// sessions (SessionMessage set). It points into the
// state it came from and is read-only.
type Item struct {
	Kind           ItemKind
	Message        *Message
	ToolCall       *ToolCallState
	SessionMessage *InterSessionMessage
}

// Order is the item's Order (see [Message].Order).
func (it Item) Order() int {
	if it.ToolCall != nil {
		return it.ToolCall.Order
	}
	if it.Message != nil {
		return it.Message.Order
	}
	if it.SessionMessage != nil {
		return it.SessionMessage.Order
	}
	return 0
}

// Items returns the state's user messages, messages, thoughts, tool calls
// and messages between sessions as one transcript, in the order each started (by Order): what a
// chat view renders, for a turn or for a session's History. Each list is in
// that order already, so this is a merge, linear in the number of items.
func (st TurnState) Items() []Item {
	lists := [5][]Item{}
	for i := range st.UserMessages {
		lists[0] = append(lists[0], Item{Kind: ItemUserMessage, Message: &st.UserMessages[i]})
	}
	for i := range st.Messages {
		lists[1] = append(lists[1], Item{Kind: ItemMessage, Message: &st.Messages[i]})
	}
	for i := range st.Thoughts {
		lists[2] = append(lists[2], Item{Kind: ItemThought, Message: &st.Thoughts[i]})
	}
	for i := range st.ToolCalls {
		lists[3] = append(lists[3], Item{Kind: ItemToolCall, ToolCall: &st.ToolCalls[i]})
	}
	for i := range st.SessionMessages {
		lists[4] = append(lists[4], Item{Kind: ItemSessionMessage, SessionMessage: &st.SessionMessages[i]})
	}
	out := make([]Item, 0, len(lists[0])+len(lists[1])+len(lists[2])+len(lists[3])+len(lists[4]))
	var next [5]int
	for {
		best := -1
		for l := range lists {
			if next[l] < len(lists[l]) && (best < 0 || lists[l][next[l]].Order() < lists[best][next[best]].Order()) {
				best = l
			}
		}
		if best < 0 {
			return out
		}
		out = append(out, lists[best][next[best]])
		next[best]++
	}
}
