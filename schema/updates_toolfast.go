package schema

import (
	"unsafe"

	"github.com/acpclient/acp/internal/jsonscan"
)

// The one-pass decoder of the tool_call_update agents send most: a status,
// title, kind or name change of a known call, with no content, locations,
// raw input or output and no _meta. It finds the members in one walk (no
// reflection), and makes the update, its optional fields and all its
// strings in two allocations. Any other shape (a member it does not take,
// a key escaped, repeated or differing from a known one only by case, a
// toolCallId that is not a string) is left to the generated decoder; its
// result is then the same as that decoder's (FuzzDecodeNotification holds
// the two paths equal).

// toolUpdateBox holds a tool_call_update and the values its pointer fields
// point to, allocated as one.
type toolUpdateBox struct {
	u           ToolCallUpdate
	title, name string
	kind        ToolKind
	status      ToolCallStatus
}

// decodeToolCallUpdate decodes validated data, an update whose
// sessionUpdate is "tool_call_update" as written, as above; ok is false
// for any other update and any shape it does not take.
func decodeToolCallUpdate(data []byte) (Update, bool) {
	const (
		fID = iota
		fTitle
		fName
		fKind
		fStatus
	)
	var lit [5][]byte
	var seen uint8
	isKind := false
	s := jsonscan.NewObj(data, false)
	for {
		key, plain, val, more := s.Next()
		if !more {
			break
		}
		if !plain {
			return nil, false
		}
		f := -1
		switch string(key) {
		case "toolCallId":
			f = fID
		case "title":
			f = fTitle
		case "name":
			f = fName
		case "kind":
			f = fKind
		case "status":
			f = fStatus
		case "sessionUpdate":
			if isKind || string(val) != `"tool_call_update"` {
				return nil, false
			}
			isKind = true
			continue
		default:
			for _, k := range [...]string{"toolCallId", "title", "name", "kind", "status", "content", "locations", "rawInput", "rawOutput", "_meta"} {
				if string(key) == k || jsonscan.FoldsLike(key, k) {
					return nil, false // a member of the general path's
				}
			}
			continue // unknown members are ignored, as there
		}
		if seen&(1<<f) != 0 {
			return nil, false
		}
		seen |= 1 << f
		if len(val) > 0 && val[0] == '"' {
			lit[f] = val
		} // any other value reads as not sent, as wirejson.Str reads it
	}
	if s.Bad() || !isKind || lit[fID] == nil {
		return nil, false
	}
	// All the strings in one buffer: plain literals are copied, escaped
	// ones decoded. The buffer is never written after, so strings may
	// alias it.
	n := 0
	for _, l := range lit {
		n += len(l)
	}
	buf := make([]byte, 0, n)
	var str [5]string
	for f, l := range lit {
		if l == nil {
			continue
		}
		start := len(buf)
		if in, ok := jsonscan.Plain(l); ok {
			buf = append(buf, in...)
		} else {
			u, ok := jsonscan.Unquote(l)
			if !ok {
				return nil, false
			}
			if len(buf)+len(u) > cap(buf) {
				str[f] = u // longer once decoded (U+FFFD for a bad byte): its own string
				continue
			}
			buf = append(buf, u...)
		}
		if len(buf) > start {
			str[f] = unsafe.String(&buf[start], len(buf)-start)
		}
	}
	b := &toolUpdateBox{}
	b.u.ToolCallID = str[fID]
	if lit[fTitle] != nil {
		b.title = str[fTitle]
		b.u.Title = &b.title
	}
	if lit[fName] != nil {
		b.name = str[fName]
		b.u.Name = &b.name
	}
	if lit[fKind] != nil {
		b.kind = ToolKind(str[fKind])
		b.u.Kind = &b.kind
	}
	if lit[fStatus] != nil {
		b.status = ToolCallStatus(str[fStatus])
		b.u.Status = &b.status
	}
	return &b.u, true
}
