package schema

import (
	"encoding/json"
	"unsafe"

	"github.com/acpclient/acp/internal/jsonscan"
	"github.com/acpclient/acp/internal/wirejson"
)

// The one-pass decoders of the tool call events agents send most, without
// _meta: a tool_call_update that changes a known call's status, title,
// kind or name, perhaps with its content, locations and raw input or
// output (in v2, an upsert that announces the call); and a tool_call. They
// find the members in one walk (no reflection), and make the event, its
// optional fields and all its strings in one allocation (two when the
// strings are long); a content item of one text block and a location of
// the usual shape are read here, any other item by the generated decoder,
// the raw values copied. Any other shape (a member it does not
// take, a key escaped, repeated or differing from a known one only by
// case, a toolCallId or a tool_call's title that is not a string) is left
// to the generated decoder; the result is then the same as that
// decoder's (FuzzDecodeNotification and TestToolCallFastPath hold the two
// paths equal).

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

// toolFields is what one walk of a tool call event found: its string
// members as literals (nil: absent or not a string), its content, raw
// input and output and locations as written, and its strings decoded.
type toolFields struct {
	lit                         [5][]byte
	content, rawIn, rawOut, loc []byte
	str                         [5]string
	// loose: the walk met a member it does not keep (an unknown one, or a
	// string member whose value is not a string).
	loose bool
}

// The string members of toolFields.
const (
	fID = iota
	fTitle
	fName
	fKind
	fStatus
)

// walkTool walks validated data, an update whose sessionUpdate is kind
// as written, for the members of a tool call event; locations only when
// withLoc. ok is false for any other update and any shape it does not
// take.
func walkTool(data []byte, kind string, withLoc bool) (t toolFields, ok bool) {
	var seen uint16
	isKind := false
	s := jsonscan.NewObj(data, false)
	for {
		key, plain, val, more := s.Next()
		if !more {
			break
		}
		if !plain {
			return t, false
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
		case "locations":
			if !withLoc {
				return t, false
			}
			f = 8
		case "sessionUpdate":
			if isKind || len(val) != len(kind)+2 || string(val[1:len(val)-1]) != kind || val[0] != '"' {
				return t, false
			}
			isKind = true
			continue
		default:
			for _, k := range [...]string{"toolCallId", "title", "name", "kind", "status", "content", "rawInput", "rawOutput", "locations", "_meta"} {
				if string(key) == k || jsonscan.FoldsLike(key, k) {
					return t, false // a member of the general path's
				}
			}
			t.loose = true
			continue // unknown members are ignored, as there
		}
		if seen&(1<<f) != 0 {
			return t, false
		}
		seen |= 1 << f
		switch {
		case f == 5:
			t.content = val
		case f == 6:
			t.rawIn = val
		case f == 7:
			t.rawOut = val
		case f == 8:
			t.loc = val
		case len(val) > 0 && val[0] == '"':
			t.lit[f] = val
		default:
			t.loose = true // a string member of any other value reads as not sent, as wirejson.Str reads it
		}
	}
	if s.Bad() || !isKind || t.lit[fID] == nil {
		return t, false
	}
	return t, true
}

// strings decodes t's string members into one buffer, into (when they
// fit) box, a part of the allocation that will hold the event: plain
// literals are copied, escaped ones decoded. The buffer is never written
// after, so the strings may alias it (and keep the event).
func (t *toolFields) strings(box []byte) bool {
	n := 0
	for _, l := range t.lit {
		n += len(l)
	}
	var buf []byte
	if n <= len(box) {
		buf = box[:0:n]
	} else {
		buf = make([]byte, 0, n)
	}
	for f, l := range t.lit {
		if l == nil {
			continue
		}
		start := len(buf)
		if in, ok := jsonscan.Plain(l); ok {
			buf = append(buf, in...)
		} else {
			u, ok := jsonscan.Unquote(l)
			if !ok {
				return false
			}
			if len(buf)+len(u) > cap(buf) {
				t.str[f] = u // longer once decoded (U+FFFD for a bad byte): its own string
				continue
			}
			buf = append(buf, u...)
		}
		if len(buf) > start {
			t.str[f] = unsafe.String(&buf[start], len(buf)-start)
		}
	}
	return true
}

// decodeToolCallUpdate decodes validated data, an update whose
// sessionUpdate is "tool_call_update" as written, as above; ok is false
// for any other update and any shape it does not take.
func decodeToolCallUpdate(data []byte) (Update, bool) {
	t, ok := walkTool(data, "tool_call_update", true)
	if !ok {
		return nil, false
	}
	return t.toolCallUpdate()
}

// readsAsV1 reports, from the walk alone, that fastUpsert holds for the
// update walked: every member a kept string member, and no l or f in
// their values (null and capabilities have an l, diff an f). The keys it
// keeps and the kind hold none of those words, and no word spans two
// members. False says nothing: fastUpsert then reads the bytes.
func (t *toolFields) readsAsV1() bool {
	if t.loose || t.content != nil || t.rawIn != nil || t.rawOut != nil || t.loc != nil {
		return false
	}
	for _, l := range t.lit {
		for _, c := range l {
			if c == 'l' || c == 'f' {
				return false
			}
		}
	}
	return true
}

// toolCallUpdate makes the tool_call_update t walked, as
// decodeToolCallUpdate.
func (t *toolFields) toolCallUpdate() (Update, bool) {
	var ok bool
	b := &toolUpdateBox{}
	if !t.strings(b.strs[:]) {
		return nil, false
	}
	b.u.ToolCallID = t.str[fID]
	if t.content != nil {
		if b.u.Content, ok = toolContentList(t.content); !ok {
			return nil, false
		}
	}
	if t.loc != nil {
		if b.u.Locations, ok = toolLocations(t.loc); !ok {
			return nil, false
		}
	}
	t.raws(&b.u.RawInput, &b.u.RawOutput)
	if t.lit[fTitle] != nil {
		b.title = t.str[fTitle]
		b.u.Title = &b.title
	}
	if t.lit[fName] != nil {
		b.name = t.str[fName]
		b.u.Name = &b.name
	}
	if t.lit[fKind] != nil {
		b.kind = ToolKind(t.str[fKind])
		b.u.Kind = &b.kind
	}
	if t.lit[fStatus] != nil {
		b.status = ToolCallStatus(t.str[fStatus])
		b.u.Status = &b.status
	}
	return &b.u, true
}

// toolCallBox holds a tool_call and, when they fit, the bytes of its
// strings (the box fills its size class, 256 bytes).
type toolCallBox struct {
	u    ToolCall
	strs [48]byte
}

// decodeToolCall decodes validated data, an update whose sessionUpdate
// is "tool_call" as written, as decodeToolCallUpdate does an update; its
// title is required, as toolCallId is.
func decodeToolCall(data []byte) (Update, bool) {
	t, ok := walkTool(data, "tool_call", true)
	if !ok || t.lit[fTitle] == nil {
		return nil, false
	}
	b := &toolCallBox{}
	if !t.strings(b.strs[:]) {
		return nil, false
	}
	b.u.ToolCallID, b.u.Title, b.u.Name = t.str[fID], t.str[fTitle], t.str[fName]
	b.u.Kind, b.u.Status = ToolKind(t.str[fKind]), ToolCallStatus(t.str[fStatus])
	if t.content != nil {
		if b.u.Content, ok = toolContentList(t.content); !ok {
			return nil, false
		}
	}
	if t.loc != nil {
		if b.u.Locations, ok = toolLocations(t.loc); !ok {
			return nil, false
		}
	}
	t.raws(&b.u.RawInput, &b.u.RawOutput)
	return &b.u, true
}

// raws sets in and out to t's raw input and output as wirejson.RawValue
// reads them (nil when absent, as it reads nil too).
func (t *toolFields) raws(in, out *json.RawMessage) {
	if t.rawIn != nil {
		*in = wirejson.RawValue(t.rawIn)
	}
	if t.rawOut != nil {
		*out = wirejson.RawValue(t.rawOut)
	}
}

// toolLocations decodes a validated locations member as
// wirejson.List[ToolCallLocation] does: an array's items that decode, in
// order (null and invalid ones dropped), as a non-nil slice; any other
// value as absent. An item of the usual shape, a plain path and perhaps a
// line written as digits, is read here; any other is left to the
// generated decoder. ok is false for an array it cannot walk.
func toolLocations(val []byte) ([]ToolCallLocation, bool) {
	return decodeItems(val, plainLocation, func(it []byte) (ToolCallLocation, error) {
		var l ToolCallLocation
		return l, l.UnmarshalJSON(it)
	})
}

// plainLocation reads {"path":"…"[,"line":digits]} (any member order,
// unknown members ignored) as ToolCallLocation's decoder does; ok is
// false for any other shape.
func plainLocation(data []byte) (ToolCallLocation, bool) {
	var path, line []byte
	s := jsonscan.NewObj(data, false)
	for {
		key, plain, val, more := s.Next()
		if !more {
			break
		}
		if !plain {
			return ToolCallLocation{}, false
		}
		var slot *[]byte
		switch string(key) {
		case "path":
			slot = &path
		case "line":
			slot = &line
		default:
			for _, k := range [...]string{"path", "line", "_meta"} {
				if string(key) == k || jsonscan.FoldsLike(key, k) {
					return ToolCallLocation{}, false
				}
			}
			continue
		}
		if *slot != nil {
			return ToolCallLocation{}, false
		}
		*slot = val
	}
	if s.Bad() || path == nil {
		return ToolCallLocation{}, false
	}
	p, ok := jsonscan.Plain(path)
	if !ok {
		return ToolCallLocation{}, false
	}
	l := ToolCallLocation{Path: string(p)}
	if line != nil {
		n, ok := plainUint32(line)
		if !ok {
			return ToolCallLocation{}, false
		}
		l.Line = &n
	}
	return l, true
}

// plainUint32 reads digits with no sign, fraction, exponent or leading
// zero, within uint32: the numbers encoding/json reads into a uint32
// alike, whatever else it accepts.
func plainUint32(b []byte) (uint32, bool) {
	if len(b) == 0 || len(b) > 10 || (b[0] == '0' && len(b) > 1) {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if n > 1<<32-1 {
		return 0, false
	}
	return uint32(n), true
}

// toolContentList decodes a validated content member as wirejson.List
// does: an array's items that decode, in order (null and invalid ones
// dropped), as a non-nil slice; any other value as absent. ok is false
// for an array it cannot walk, left to the general path.
func toolContentList(val []byte) ([]ToolCallContent, bool) {
	return decodeItems(val, plainToolText, unmarshalToolCallContent)
}

// decodeItems is the walk of toolLocations and toolContentList: the
// items of a validated array, each read by plain when it has the usual
// shape and by general otherwise, nulls and items general refuses
// dropped, as a non-nil slice; any other value is absent. ok is false
// for an array it cannot walk. The item spans go into a four-item array
// on the stack: the common few need no allocation of their own.
func decodeItems[T any](val []byte, plain func([]byte) (T, bool), general func([]byte) (T, error)) ([]T, bool) {
	if len(val) == 0 || val[0] != '[' {
		return nil, true
	}
	var items [4][]byte
	list, ok := arrayItems(val, items[:0])
	if !ok {
		return nil, false
	}
	out := make([]T, 0, len(list))
	for _, it := range list {
		if wirejson.IsNull(it) {
			continue
		}
		if v, ok := plain(it); ok {
			out = append(out, v)
			continue
		}
		if v, err := general(it); err == nil {
			out = append(out, v)
		}
	}
	return out, true
}

// toolTextBox is a content item of one text block, allocated as one.
type toolTextBox struct {
	c ToolContent
	t TextContent
}

// plainToolText reads {"type":"content","content":<a bare text block>}
// (any member order, unknown members ignored) as the generated decoder
// does; ok is false for any other item.
func plainToolText(data []byte) (ToolCallContent, bool) {
	var typ, content []byte
	s := jsonscan.NewObj(data, false)
	for {
		key, plain, val, more := s.Next()
		if !more {
			break
		}
		if !plain {
			return nil, false
		}
		var slot *[]byte
		switch string(key) {
		case "type":
			slot = &typ
		case "content":
			slot = &content
		default:
			for _, k := range [...]string{"type", "content", "_meta"} {
				if string(key) == k || jsonscan.FoldsLike(key, k) {
					return nil, false
				}
			}
			continue
		}
		if *slot != nil {
			return nil, false
		}
		*slot = val
	}
	if s.Bad() || string(typ) != `"content"` {
		return nil, false
	}
	lit, ok := jsonscan.BareText(content)
	if !ok {
		return nil, false
	}
	text, ok := jsonscan.Unquote(lit)
	if !ok {
		return nil, false
	}
	b := &toolTextBox{t: TextContent{Text: text}}
	b.c.Content = &b.t
	return &b.c, true
}

// arrayItems appends to list the spans of the items of val, a validated
// JSON array, and returns it; ok is false where an item does not skip.
// The caller's list is usually a small array on its stack: the common
// few items need no allocation.
func arrayItems(val []byte, list [][]byte) ([][]byte, bool) {
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
	return list, true
}
