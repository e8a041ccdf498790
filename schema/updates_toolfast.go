package schema

import (
	"unsafe"

	"github.com/acpclient/acp/internal/jsonscan"
	"github.com/acpclient/acp/internal/wirejson"
)

// The one-pass decoder of the tool_call_update agents send most: a status,
// title, kind or name change of a known call, perhaps with its content and
// raw input or output, without locations or _meta. It finds the members in
// one walk (no reflection), and makes the update, its optional fields and
// all its strings in one allocation (two when they are long); each content item is decoded alone
// by the generated decoder, the raw values copied. Any other shape (a
// member it does not take,
// a key escaped, repeated or differing from a known one only by case, a
// toolCallId that is not a string) is left to the generated decoder; its
// result is then the same as that decoder's (FuzzDecodeNotification holds
// the two paths equal).

// toolUpdateBox holds a tool_call_update, the values its pointer fields
// point to and, when they fit, the bytes of its strings, allocated as one.
// strs is sized so the box fills its size class (288 bytes): an id and a
// status fit, and most titles with them.
type toolUpdateBox struct {
	u           ToolCallUpdate
	title, name string
	kind        ToolKind
	status      ToolCallStatus
	strs        [48]byte
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
	var content, rawIn, rawOut []byte
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
		case "content":
			f = 5
		case "rawInput":
			f = 6
		case "rawOutput":
			f = 7
		case "sessionUpdate":
			if isKind || string(val) != `"tool_call_update"` {
				return nil, false
			}
			isKind = true
			continue
		default:
			for _, k := range [...]string{"toolCallId", "title", "name", "kind", "status", "content", "rawInput", "rawOutput", "locations", "_meta"} {
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
		switch {
		case f == 5:
			content = val
		case f == 6:
			rawIn = val
		case f == 7:
			rawOut = val
		case len(val) > 0 && val[0] == '"':
			lit[f] = val
		} // a string member of any other value reads as not sent, as wirejson.Str reads it
	}
	if s.Bad() || !isKind || lit[fID] == nil {
		return nil, false
	}
	// All the strings in one buffer, the box's own when they fit: plain
	// literals are copied, escaped ones decoded. The buffer is never
	// written after, so strings may alias it (and keep the box).
	n := 0
	for _, l := range lit {
		n += len(l)
	}
	b := &toolUpdateBox{}
	var buf []byte
	if n <= len(b.strs) {
		buf = b.strs[:0:n]
	} else {
		buf = make([]byte, 0, n)
	}
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
	b.u.ToolCallID = str[fID]
	if content != nil {
		var ok bool
		if b.u.Content, ok = toolContentList(content); !ok {
			return nil, false
		}
	}
	b.u.RawInput, b.u.RawOutput = wirejson.RawValue(rawIn), wirejson.RawValue(rawOut)
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

// toolContentList decodes a validated content member as wirejson.List
// does: an array's items that decode, in order (null and invalid ones
// dropped), as a non-nil slice; any other value as absent. ok is false
// for an array it cannot walk, left to the general path.
func toolContentList(val []byte) ([]ToolCallContent, bool) {
	if len(val) == 0 || val[0] != '[' {
		return nil, true
	}
	var items [4][]byte // the common few without a second allocation
	list := items[:0]
	for i := jsonscan.SkipWS(val, 1); i < len(val) && val[i] != ']'; {
		end := jsonscan.Skip(val, i)
		if end < 0 {
			return nil, false
		}
		list = append(list, val[i:end])
		i = jsonscan.SkipWS(val, end)
		if i < len(val) && val[i] == ',' {
			i = jsonscan.SkipWS(val, i+1)
		}
	}
	out := make([]ToolCallContent, 0, len(list))
	for _, it := range list {
		if wirejson.IsNull(it) {
			continue
		}
		if c, err := unmarshalToolCallContent(it); err == nil {
			out = append(out, c)
		}
	}
	return out, true
}
