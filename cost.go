package acp

import (
	"encoding/json"
	"github.com/acpclient/acp/schema"
	"reflect"
	"unsafe"
)

// What an update costs to keep. Limits.MaxTurnBytes bounds what a turn (or
// the time outside turns) retains, so each update is charged the larger of
// its notification's length and an estimate of the heap it holds once
// folded: the decoded update (its structs, strings and lists, with
// allocation rounding), its log entry, and what it makes the fold create —
// a message, a tool call and its index entry, the tool call's merged state
// the event keeps, the message's text. A turn's plain text chunk keeps no
// decoded update, only its log entry and its text in its message. Charging the wire
// length alone let an agent make ~1 KB of state out of a 110-byte
// tool_call_update with a new id, 19 times the limit in all. The estimate
// is an upper bound in the common cases and within a small factor of the
// measured heap in every case BenchmarkTurnRetainedDensest sends.

// Fixed costs, from the sizes of what the client allocates.
var (
	// costEntry is a turn's log entry (the log grows by chunks, never
	// copied).
	costEntry = int64(unsafe.Sizeof(entry{}))
	// costBoxed is the update an entry points to, other than a plain text
	// chunk's or a tool call event's.
	costBoxed = allocSize(int64(unsafe.Sizeof(schema.Update(nil))))
	// costToolEntry is what the log entry of an event that changed a tool
	// call points to.
	costToolEntry = allocSize(int64(unsafe.Sizeof(tcEntry{})))
	// costMetaEntry is a notification _meta's entry in Turn.metas, whose
	// table is at most 7/8 full and grows by doubling.
	costMetaEntry = 2 * int64(unsafe.Sizeof(uint64(0))+unsafe.Sizeof(json.RawMessage(nil))+1)
	// costSessionEntry is a session's log entry (Session.Events), grown
	// and trimmed in batches.
	costSessionEntry = int64(unsafe.Sizeof(sentry{})) * 3 / 2
	// costOutside is an entry of SessionState.Outside, trimmed in batches.
	costOutside = int64(unsafe.Sizeof(OutsideUpdate{})) * 3 / 2
	// costToolState is the merged ToolCallState every tool call event
	// keeps (Event.ToolCall); the one the fold holds is the last of them.
	costToolState = allocSize(int64(unsafe.Sizeof(ToolCallState{})))
	// costNewItem is a new item of a fold (a message or tool call): its
	// slot in the fold's list and its entry in the index by id, whose
	// table is at most 7/8 full and grows by doubling.
	costNewItem = int64(unsafe.Sizeof(uintptr(0)))*3/2 + 3*int64(unsafe.Sizeof("")+unsafe.Sizeof(0))
	// costMessage is a new message's accumulator.
	costMessage = allocSize(int64(unsafe.Sizeof(msgAcc{})))
	// costMark is the local update that marks a tool call cancelled: the
	// update, its status, the merged state and the log entry.
	costMark = allocSize(int64(unsafe.Sizeof(schema.ToolCallUpdate{}))) + allocSize(int64(unsafe.Sizeof(schema.ToolCallStatus("")))) + costToolState + costEntry + costToolEntry
)

// allocSize rounds an allocation of n bytes up the way the Go allocator
// does, about: to 16 bytes for small objects, by at most 1/8 beyond.
func allocSize(n int64) int64 {
	if n <= 0 {
		return 0
	}
	if n <= 512 {
		return (n + 15) &^ 15
	}
	return n + n/8
}

// metaCost is what keeping a notification's _meta costs.
func metaCost(meta json.RawMessage) int64 {
	if meta == nil {
		return 0
	}
	return allocSize(int64(unsafe.Sizeof(meta))) + allocSize(int64(cap(meta)))
}

// updateCost estimates the heap a decoded update holds. Text chunks, the
// bulk of every turn, are costed directly; the rest by walking the value.
func updateCost(u schema.Update) int64 {
	switch u := u.(type) {
	case *schema.AgentMessageChunk:
		if n, ok := textChunkCost(u.Content, u.MessageID, u.Meta); ok {
			return n
		}
	case *schema.AgentThoughtChunk:
		if n, ok := textChunkCost(u.Content, u.MessageID, u.Meta); ok {
			return n
		}
	case *schema.UserMessageChunk:
		if n, ok := textChunkCost(u.Content, u.MessageID, u.Meta); ok {
			return n
		}
	case *schema.ToolCallUpdate:
		if u != nil && u.Content == nil && u.Locations == nil {
			return toolCallUpdateCost(u)
		}
	case nil:
		return 0
	}
	return heapCost(reflect.ValueOf(u))
}

// toolCallUpdateSize is the size of the struct of a tool_call_update.
var toolCallUpdateSize = allocSize(int64(unsafe.Sizeof(schema.ToolCallUpdate{})))

// toolCallUpdateCost is heapCost of a tool_call_update with no content
// and no locations (a status or title change, the most common tool call
// event), without reflection: TestToolCallUpdateCostIsHeapCost holds the
// two equal.
func toolCallUpdateCost(u *schema.ToolCallUpdate) int64 {
	n := toolCallUpdateSize + allocSize(int64(len(u.ToolCallID)))
	strPtr := func(p *string) int64 {
		if p == nil {
			return 0
		}
		return allocSize(int64(unsafe.Sizeof(""))) + allocSize(int64(len(*p)))
	}
	n += strPtr(u.Title) + strPtr(u.Name)
	if u.Kind != nil {
		n += allocSize(int64(unsafe.Sizeof(""))) + allocSize(int64(len(*u.Kind)))
	}
	if u.Status != nil {
		n += allocSize(int64(unsafe.Sizeof(""))) + allocSize(int64(len(*u.Status)))
	}
	for _, raw := range [...]json.RawMessage{u.RawInput, u.RawOutput, u.Meta} {
		if raw != nil {
			n += allocSize(int64(cap(raw)))
		}
	}
	if u.Cancellable != nil {
		n += allocSize(int64(unsafe.Sizeof(false)))
	}
	return n
}

// textChunkSize is the size of a chunk and its text block.
var textChunkSize = allocSize(int64(unsafe.Sizeof(schema.AgentMessageChunk{}) + unsafe.Sizeof(schema.TextContent{})))

func textChunkCost(b schema.ContentBlock, id string, meta json.RawMessage) (int64, bool) {
	t, ok := b.(*schema.TextContent)
	if !ok || t.Annotations != nil || t.Meta != nil || meta != nil {
		return 0, false
	}
	return textChunkSize + allocSize(int64(len(t.Text))) + allocSize(int64(len(id))), true
}

// heapCost is the bytes of the allocations v points to (not v itself),
// followed through pointers, interfaces, slices, strings and maps. Decoded
// values share nothing and hold no cycles.
func heapCost(v reflect.Value) int64 {
	switch v.Kind() {
	case reflect.String:
		return allocSize(int64(v.Len()))
	case reflect.Pointer:
		if v.IsNil() {
			return 0
		}
		e := v.Elem()
		return allocSize(int64(e.Type().Size())) + heapCost(e)
	case reflect.Interface:
		if v.IsNil() {
			return 0
		}
		e := v.Elem()
		if e.Kind() == reflect.Pointer {
			return heapCost(e)
		}
		return allocSize(int64(e.Type().Size())) + heapCost(e) // boxed
	case reflect.Slice:
		if v.IsNil() {
			return 0
		}
		n := allocSize(int64(v.Cap()) * int64(v.Type().Elem().Size()))
		if hasPointers(v.Type().Elem()) {
			for i := range v.Len() {
				n += heapCost(v.Index(i))
			}
		}
		return n
	case reflect.Struct:
		var n int64
		for i := range v.NumField() {
			n += heapCost(v.Field(i))
		}
		return n
	case reflect.Array:
		var n int64
		for i := range v.Len() {
			n += heapCost(v.Index(i))
		}
		return n
	case reflect.Map:
		if v.IsNil() {
			return 0
		}
		t := v.Type()
		n := 2 * int64(v.Len()) * int64(t.Key().Size()+t.Elem().Size()+1)
		for it := v.MapRange(); it.Next(); {
			n += heapCost(it.Key()) + heapCost(it.Value())
		}
		return n
	}
	return 0
}

// hasPointers reports whether values of t can point to the heap.
func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
		return false
	}
	return true
}

// foldCost is what folding u adds to f beyond the update itself: a new
// message or tool call, a chunk's text in its message, the merged state a
// tool call event keeps. It looks, and changes
// nothing: the caller decides from it whether u is folded.
func (f *fold) foldCost(u schema.Update) int64 {
	switch u := u.(type) {
	case *schema.AgentMessageChunk:
		return f.chunkCost(&f.messages, u.UpdateKind(), u.MessageID, u.Content)
	case *schema.AgentThoughtChunk:
		return f.chunkCost(&f.thoughts, u.UpdateKind(), u.MessageID, u.Content)
	case *schema.UserMessageChunk:
		return f.chunkCost(&f.user, u.UpdateKind(), u.MessageID, u.Content)
	case *schema.ToolCall:
		return f.tools.cost(u.ToolCallID) + agentTerminalCost(u.Meta)
	case *schema.ToolCallUpdate:
		return f.tools.cost(u.ToolCallID) + agentTerminalCost(u.Meta)
	case *schema.SessionMessage:
		return f.smsgs.cost(u.MessageID)
	case *schema.SessionMessageChunk:
		return f.smsgs.cost(u.MessageID)
	}
	return 0
}

func (f *fold) chunkCost(list *msgList, kind, id string, b schema.ContentBlock) int64 {
	isNew := f.target(list, kind, id) == nil
	if t, ok := b.(*schema.TextContent); ok {
		return textCost(isNew, len(id), len(t.Text))
	}
	return textCost(isNew, len(id), 0) + int64(unsafe.Sizeof(b))*3/2
}

// textCost is what a chunk's text of n bytes adds to a fold, with a new
// message of an id of idLen bytes if isNew: the text is kept twice, in the
// message's blocks and in the copy a snapshot joins (see msgAcc).
func textCost(isNew bool, idLen, n int) int64 {
	var c int64
	if isNew {
		c = costMessage + costNewItem + allocSize(int64(idLen))
	}
	return c + int64(n)*2
}

// cost is what a tool call event for id adds to the table and the log.
func (tt *toolTable) cost(id string) int64 {
	if _, ok := tt.index[id]; ok {
		return costToolState
	}
	return costToolState + costNewItem
}

// patchCostLocked estimates what folding a permission request's toolCall
// into t (nil: the history outside turns) keeps: the patch, a copy of p
// sharing its fields, its log entry, and the tool call it changes or
// creates. s.mu is held.
func (s *Session) patchCostLocked(t *Turn, p *schema.ToolCallUpdate) int64 {
	n := updateCost(p) + agentTerminalCost(p.Meta)
	if t == nil {
		return n + costSessionEntry + s.history.tools.cost(p.ToolCallID)
	}
	return n + costEntry + costToolEntry + t.fold.tools.cost(p.ToolCallID)
}
