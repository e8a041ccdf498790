package jsonscan

import (
	"encoding/binary"
	"errors"
	"unicode/utf8"
)

// The one JSON-RPC envelope peeker: the engine's reader, the gateway, the
// remote transports, the trace viewer and acptest all route a message by
// what Peek reads of it, so no two of them can read one line two ways.
//
// Peek validates the whole line in one pass and, in the same pass, takes
// what routing needs as slices of it: the top-level members, params' (or
// result's) sessionId, and for a session/update the update object, its
// kind and, for a plain text chunk, the text. Nothing is scanned twice.
//
// It is strict where readers used to differ. Keys are compared exactly,
// after their escapes are decoded ("\u0069d" is "id", as every decoder reads
// it); a routing key written twice, or a key that differs from one only by
// case (encoding/json would match it, a case-sensitive reader would not), makes
// the message ambiguous, and Peek refuses it rather than guess which reading
// its sender meant. A method that is neither a string nor null is refused
// too. Invalid UTF-8 inside strings is accepted and, where Peek decodes a
// string (method, sessionId), read as U+FFFD, as encoding/json reads it.

var (
	// ErrAmbiguous: a routing member (jsonrpc, id, method, params, result,
	// error) is written twice, or a key differs from one only by case.
	ErrAmbiguous = errors.New("ambiguous JSON-RPC message: a routing member is repeated or differs from one only by case")
	// ErrMethod: "method" is neither a string nor null.
	ErrMethod = errors.New("JSON-RPC method is not a string")
)

// Envelope is what Peek reads of one JSON-RPC message. The byte slices
// alias the line passed to Peek (valid as long as it is); nil means the
// member is absent, and a JSON null is the four bytes "null".
type Envelope struct {
	JSONRPC []byte // the raw "jsonrpc" value
	ID      []byte // the raw "id" value
	Method  string // "method", decoded; "" when absent or null
	// HasMethod reports that "method" is present and a string.
	HasMethod bool
	Params    []byte // the raw "params" value
	Result    []byte // the raw "result" value
	Error     []byte // the raw "error" value

	// SessionID is params.sessionId, decoded, when params is an object
	// and that member a string written once under exactly that key
	// (HasSession); ResultSessionID is result.sessionId, likewise.
	SessionID        []byte
	HasSession       bool
	ResultSessionID  []byte
	HasResultSession bool

	// Update is what Peek read of params as a session/update's: filled
	// whenever params is an object, whatever the method (the caller checks
	// Method).
	Update Update
}

// Version2 reports whether the message declares "jsonrpc":"2.0".
func (e *Envelope) Version2() bool { return string(e.JSONRPC) == `"2.0"` }

// Update is a session/update's params as Peek read them.
type Update struct {
	// Exact reports that params has exactly the shape the fast paths
	// handle: a plain (unescaped, valid UTF-8) string sessionId, an update
	// object, no key escaped, repeated or differing from a known one only
	// by case. Otherwise the caller decodes params in full.
	Exact     bool
	SessionID []byte // params.sessionId's inside, when Exact
	Body      []byte // params.update
	Meta      []byte // params._meta when it is an object, else nil
	// Kind is update.sessionUpdate's inside when it is a plain string
	// (nil otherwise).
	Kind []byte
	// Chunk is the kind of a plain text chunk (a message, thought or user
	// chunk whose content is a bare {"type":"text","text":...} block, no
	// annotations, no _meta on either), else ChunkNone. For one, MsgID is
	// its messageId as a JSON string literal (nil when absent or not a
	// string) and Text its text as a JSON string literal; TextPlain
	// reports that Text needs no unescaping (Text[1:len(Text)-1] is it).
	Chunk     Chunk
	MsgID     []byte
	Text      []byte
	TextPlain bool
}

// Peek reads the envelope of the JSON-RPC message line (one JSON object,
// surrounding whitespace allowed). The error is ErrSyntax for anything
// that is not one valid JSON object, ErrAmbiguous or ErrMethod as above;
// on ErrSyntax and ErrAmbiguous the envelope is zero, on ErrMethod it
// holds everything else Peek read. It allocates only to decode an escaped
// key, method or sessionId, or a method name other than the common ones.
func Peek(line []byte) (Envelope, error) {
	var e Envelope
	p := peeker{d: line}
	i := SkipWS(line, 0)
	if i >= len(line) || line[i] != '{' {
		return Envelope{}, ErrSyntax
	}
	var seen uint8
	var amb bool // checked once the whole line is known to be valid
	var method []byte
	var methodEsc bool
	// The notification most lines are, in the member order most agents
	// write, is recognised by its first 52 bytes: the walk resumes at
	// params' value.
	var key []byte
	j := -1
	if i == 0 && len(line) > len(updatePrefix) && string(line[:len(updatePrefix)]) == updatePrefix {
		e.JSONRPC = line[updateVersion : updateVersion+5 : updateVersion+5]
		method = line[updateMethod : updateMethod+len(`"session/update"`)]
		seen = 1 | 4
		key, j = paramsKey, len(updatePrefix)
	} else {
		i = SkipWS(line, i+1)
	}
	if j < 0 && i < len(line) && line[i] == '}' {
		i++
	} else {
		for {
			if j < 0 {
				key, _, j = p.key(i)
			}
			if j < 0 {
				return Envelope{}, ErrSyntax
			}
			var bit uint8
			var end int
			switch string(key) {
			case "jsonrpc":
				bit = 1
				end = ValidValue(line, j, 1)
				e.JSONRPC = span(line, j, end)
			case "id":
				bit = 2
				end = ValidValue(line, j, 1)
				e.ID = span(line, j, end)
			case "method":
				bit = 4
				if j < len(line) && line[j] == '"' {
					var high bool
					end, methodEsc, high = validStringFlags(line, j)
					if end > 0 {
						method = line[j:end]
						methodEsc = methodEsc || (high && !utf8.Valid(method))
					}
				} else {
					end = ValidValue(line, j, 1)
					if end > 0 && string(line[j:end]) != "null" {
						method = line[j:end] // not a string: ErrMethod below
					}
				}
			case "params":
				bit = 8
				if end = p.fastParams(j, &e); end < 0 {
					end = p.params(j, &e, false)
				}
				e.Params = span(line, j, end)
			case "result":
				bit = 16
				end = p.params(j, &e, true)
				e.Result = span(line, j, end)
			case "error":
				bit = 32
				end = ValidValue(line, j, 1)
				e.Error = span(line, j, end)
			default:
				amb = amb || foldsRouting(key)
				end = ValidValue(line, j, 1)
			}
			if end < 0 {
				return Envelope{}, ErrSyntax
			}
			amb = amb || seen&bit != 0
			seen |= bit
			i = SkipWS(line, end)
			if i >= len(line) {
				return Envelope{}, ErrSyntax
			}
			if line[i] == '}' {
				i++
				break
			}
			if line[i] != ',' {
				return Envelope{}, ErrSyntax
			}
			i = SkipWS(line, i+1)
			j = -1
		}
	}
	if SkipWS(line, i) != len(line) {
		return Envelope{}, ErrSyntax
	}
	if amb {
		return Envelope{}, ErrAmbiguous
	}
	e.SessionID, e.HasSession = p.sid[0].decode()
	e.ResultSessionID, e.HasResultSession = p.sid[1].decode()
	if method != nil {
		if method[0] != '"' {
			return e, ErrMethod
		}
		e.HasMethod = true
		if !methodEsc {
			e.Method = internMethod(method[1 : len(method)-1])
		} else {
			e.Method, _ = Unquote(method)
		}
	}
	return e, nil
}

// updatePrefix is how most agents begin a session/update; updateVersion
// and updateMethod are where its "jsonrpc" and "method" values start.
const (
	updatePrefix  = `{"jsonrpc":"2.0","method":"session/update","params":`
	updateVersion = len(`{"jsonrpc":`)
	updateMethod  = len(`{"jsonrpc":"2.0","method":`)
)

var paramsKey = []byte("params")

func span(d []byte, i, end int) []byte {
	if end < 0 {
		return nil
	}
	return d[i:end:end]
}

// foldsRouting reports whether key differs from a routing key only by case.
func foldsRouting(key []byte) bool {
	for _, k := range [...]string{"jsonrpc", "id", "method", "params", "result", "error"} {
		if FoldsLike(key, k) {
			return true
		}
	}
	return false
}

// internMethod returns the method name without allocating for the methods
// peers send most.
func internMethod(m []byte) string {
	for _, k := range [...]string{
		"session/update", "session/request_permission", "fs/read_text_file",
		"fs/write_text_file", "session/prompt", "session/cancel", "$/cancel_request",
		"initialize", "session/new", "session/load", "terminal/create", "terminal/output",
	} {
		if string(m) == k {
			return k
		}
	}
	return string(m)
}

// peeker holds the state of one Peek: the line and what the walks of
// params and result found of their sessionId.
type peeker struct {
	d   []byte
	sid [2]sidSlot // params', result's
}

// sidSlot is what one object's walk found of its sessionId.
type sidSlot struct {
	raw  []byte // the value as written
	seen bool
	esc  bool // it has escapes or invalid UTF-8
	bad  bool // repeated, case-folded, or not a string
}

// key reads the member key at d[i] (a '"' expected) and the colon after
// it, and returns the key decoded, whether it had escapes, and the index
// of the value. j is -1 on a syntax error.
func (p *peeker) key(i int) (key []byte, esc bool, j int) {
	d := p.d
	if i >= len(d) || d[i] != '"' {
		return nil, false, -1
	}
	// Keys are short and plain, and the colon follows at once: one byte
	// loop finds such a key; anything else takes the full string scan.
	k := i + 1
	for k < len(d) && strPlain[d[k]] {
		k++
	}
	if k+1 < len(d) && d[k] == '"' && d[k+1] == ':' {
		return d[i+1 : k], false, SkipWS(d, k+2)
	}
	end, esc, high := validStringFlags(d, i)
	if end < 0 {
		return nil, false, -1
	}
	key = d[i+1 : end-1]
	if esc || (high && !utf8.Valid(key)) {
		// Decoded as encoding/json decodes it; invalid UTF-8 alone (read
		// as U+FFFD) matches no known key, so only escapes count as esc.
		u, _ := Unquote(d[i:end])
		key = []byte(u)
	}
	j = SkipWS(d, end)
	if j >= len(d) || d[j] != ':' {
		return nil, false, -1
	}
	return key, esc, SkipWS(d, j+1)
}

// decode returns the sessionId found, decoded.
func (s *sidSlot) decode() ([]byte, bool) {
	if s.bad || len(s.raw) == 0 || s.raw[0] != '"' {
		return nil, false
	}
	if !s.esc {
		return s.raw[1 : len(s.raw)-1], true
	}
	u, ok := Unquote(s.raw)
	return []byte(u), ok
}

// params validates the value at d[i] (params, or result when result is
// set) and returns the index past it, or -1. When it is an object it notes
// its sessionId and, for params, reads it as a session/update's into e.Update.
func (p *peeker) params(i int, e *Envelope, result bool) int {
	d := p.d
	if i >= len(d) || d[i] != '{' {
		return ValidValue(d, i, 1)
	}
	sid := &p.sid[0]
	if result {
		sid = &p.sid[1]
	}
	*sid = sidSlot{}
	u := &e.Update
	if !result {
		*u = Update{}
	}
	exact := !result
	var seenUpd, seenMeta bool
	i = SkipWS(d, i+1)
	if i < len(d) && d[i] == '}' {
		return i + 1
	}
	for {
		key, esc, j := p.key(i)
		if j < 0 {
			return -1
		}
		if esc {
			exact = false
		}
		var end int
		switch string(key) {
		case "sessionId":
			if sid.seen {
				sid.bad = true
			}
			sid.seen = true
			if j < len(d) && d[j] == '"' {
				var sesc, high bool
				end, sesc, high = validStringFlags(d, j)
				if end > 0 {
					sid.raw = d[j:end]
					sid.esc = sesc || (high && !utf8.Valid(sid.raw[1:end-j-1]))
				}
			} else {
				end = ValidValue(d, j, 2)
				sid.bad = true
			}
			if esc || sid.esc || sid.bad {
				exact = false
			}
		case "update":
			if seenUpd {
				exact = false
			}
			seenUpd = true
			if result {
				end = ValidValue(d, j, 2)
				break
			}
			end = p.update(j, u)
			u.Body = span(d, j, end)
		case "_meta":
			if seenMeta {
				exact = false
			}
			seenMeta = true
			end = ValidValue(d, j, 2)
			if !result && end > 0 && d[j] == '{' {
				u.Meta = d[j:end:end]
			}
		default:
			if FoldsLike(key, "sessionId") {
				sid.bad = true
				exact = false
			} else if FoldsLike(key, "update") || FoldsLike(key, "_meta") {
				exact = false
			}
			end = ValidValue(d, j, 2)
		}
		if end < 0 {
			return -1
		}
		i = SkipWS(d, end)
		if i >= len(d) {
			return -1
		}
		if d[i] == '}' {
			break
		}
		if d[i] != ',' {
			return -1
		}
		i = SkipWS(d, i+1)
	}
	if result {
		return i + 1
	}
	if !exact || !sid.seen || sid.bad || len(u.Body) == 0 || u.Body[0] != '{' {
		*u = Update{}
	} else {
		u.Exact, u.SessionID = true, sid.raw[1:len(sid.raw)-1]
	}
	return i + 1
}

// update validates params.update at d[i] and, when it is an object, notes
// its kind and whether it is a plain text chunk.
func (p *peeker) update(i int, u *Update) int {
	d := p.d
	if i >= len(d) || d[i] != '{' {
		return ValidValue(d, i, 2)
	}
	u.Kind, u.Chunk, u.MsgID, u.Text, u.TextPlain = nil, ChunkNone, nil, nil, false
	var kind, content, msgID []byte // kind: its inside, when plain
	var text []byte
	var textPlain bool
	chunkOK := true
	var seenKind, seenContent, seenID bool
	i = SkipWS(d, i+1)
	if i < len(d) && d[i] == '}' {
		return i + 1
	}
	for {
		key, esc, j := p.key(i)
		if j < 0 {
			return -1
		}
		if esc {
			chunkOK = false
		}
		var end int
		switch string(key) {
		case "sessionUpdate":
			if seenKind {
				chunkOK = false
				kind = nil
			}
			if j < len(d) && d[j] == '"' {
				// Read as Plain would read it, in the walk that
				// validates it: a kind with escapes or invalid UTF-8
				// is not plain.
				var kesc, high bool
				end, kesc, high = validStringFlags(d, j)
				if !seenKind && end > 0 && !kesc && (!high || utf8.Valid(d[j+1:end-1])) {
					kind = d[j+1 : end-1]
				}
			} else {
				end = ValidValue(d, j, 3)
			}
			seenKind = true
		case "content":
			if seenContent {
				chunkOK = false
			}
			seenContent = true
			var ok bool
			end, text, textPlain, ok = p.content(j)
			if !ok {
				chunkOK = false
			}
			content = span(d, j, end)
		case "messageId":
			if seenID {
				chunkOK = false
			}
			seenID = true
			end = ValidValue(d, j, 3)
			if end > 0 {
				msgID = d[j:end]
			}
		case "_meta":
			chunkOK = false
			end = ValidValue(d, j, 3)
		default:
			if FoldsLike(key, "sessionUpdate") {
				chunkOK = false
				kind = nil
			} else if FoldsLike(key, "content") || FoldsLike(key, "messageId") || FoldsLike(key, "_meta") {
				chunkOK = false
			}
			end = ValidValue(d, j, 3)
		}
		if end < 0 {
			return -1
		}
		i = SkipWS(d, end)
		if i >= len(d) {
			return -1
		}
		if d[i] == '}' {
			break
		}
		if d[i] != ',' {
			return -1
		}
		i = SkipWS(d, i+1)
	}
	u.Kind = kind
	if chunkOK && content != nil && u.Kind != nil {
		switch string(u.Kind) {
		case "agent_message_chunk":
			u.Chunk = ChunkMessage
		case "agent_thought_chunk":
			u.Chunk = ChunkThought
		case "user_message_chunk":
			u.Chunk = ChunkUser
		}
		if u.Chunk != ChunkNone {
			if len(msgID) == 0 || msgID[0] != '"' {
				msgID = nil
			}
			u.MsgID, u.Text, u.TextPlain = msgID, text, textPlain
		}
	}
	return i + 1
}

// content validates update.content at d[i] and, when it is a bare text
// block, returns its text (ok).
func (p *peeker) content(i int) (end int, text []byte, plain, ok bool) {
	d := p.d
	if i >= len(d) || d[i] != '{' {
		return ValidValue(d, i, 3), nil, false, false
	}
	var typ []byte
	ok = true
	i = SkipWS(d, i+1)
	if i < len(d) && d[i] == '}' {
		return i + 1, nil, false, false
	}
	for {
		key, esc, j := p.key(i)
		if j < 0 {
			return -1, nil, false, false
		}
		if esc {
			ok = false
		}
		switch string(key) {
		case "type":
			if typ != nil {
				ok = false
			}
			end = ValidValue(d, j, 4)
			if end > 0 {
				typ = d[j:end]
			}
		case "text":
			if text != nil {
				ok = false
			}
			if j < len(d) && d[j] == '"' {
				var esc, high bool
				end, esc, high = validStringFlags(d, j)
				if end > 0 {
					text = d[j:end]
					plain = !esc && (!high || utf8.Valid(text[1:len(text)-1]))
				}
			} else {
				ok = false
				end = ValidValue(d, j, 4)
			}
		case "annotations", "_meta":
			ok = false
			end = ValidValue(d, j, 4)
		default:
			if FoldsLike(key, "type") || FoldsLike(key, "text") || FoldsLike(key, "annotations") || FoldsLike(key, "_meta") {
				ok = false
			}
			end = ValidValue(d, j, 4)
		}
		if end < 0 {
			return -1, nil, false, false
		}
		i = SkipWS(d, end)
		if i >= len(d) {
			return -1, nil, false, false
		}
		if d[i] == '}' {
			break
		}
		if d[i] != ',' {
			return -1, nil, false, false
		}
		i = SkipWS(d, i+1)
	}
	if !ok || string(typ) != `"text"` || text == nil {
		return i + 1, nil, false, false
	}
	return i + 1, text, plain, true
}

// strPlain marks the bytes a string scan steps over without a look: not a
// quote, a backslash, a control byte or a non-ASCII byte.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// wordNeedsLook reports whether any of the eight bytes of x is a quote, a
// backslash, a control byte or past ASCII (the classic SWAR tests: a byte
// below n sets its high bit in (x - n*lo) &^ x).
func wordNeedsLook(x uint64) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	q, bs := x^(lo*'"'), x^(lo*'\\')
	return ((x-lo*0x20)&^x|(q-lo)&^q|(bs-lo)&^bs|x)&hi != 0
}

// validStringFlags is ValidString that also reports whether the string has
// escapes (esc) or bytes past ASCII (high), in the same pass.
func validStringFlags(data []byte, i int) (end int, esc, high bool) {
	j := i + 1
	for {
		// Eight bytes at a time while none of them needs a look (a text
		// chunk's text is most of a line), then byte by byte.
		for j+8 <= len(data) && !wordNeedsLook(binary.LittleEndian.Uint64(data[j:])) {
			j += 8
		}
		for j < len(data) && strPlain[data[j]] {
			j++
		}
		if j >= len(data) {
			return -1, false, false
		}
		switch c := data[j]; {
		case c == '"':
			return j + 1, esc, high
		case c == '\\':
			esc = true
			j++
			if j >= len(data) {
				return -1, false, false
			}
			switch data[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(data)-j < 5 {
					return -1, false, false
				}
				for _, h := range data[j+1 : j+5] {
					if !isHex(h) {
						return -1, false, false
					}
				}
				j += 4
			default:
				return -1, false, false
			}
			j++
		case c < 0x20:
			return -1, false, false
		default:
			high = true
			j++
		}
	}
}
