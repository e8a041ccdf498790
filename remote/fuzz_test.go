package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/acpclient/acp/internal/jsonscan"
)

// refSSE is the SSE rules readSSE documents, written the plain way: split
// into lines (LF, or CRLF), join the data: lines of an event with a space,
// end the event at a blank line or the end of input, drop one that is
// only spaces and tabs unless it is over max (that one was already passed
// on as it arrived), and let no line break into a message.
func refSSE(in []byte, max int) []byte {
	var out, d []byte
	has := false
	emit := func() {
		if !isBlank(d) || len(d) > max {
			out = append(append(out, d...), '\n')
		}
		d, has = d[:0], false
	}
	for len(in) > 0 {
		line := in
		i := bytes.IndexByte(in, '\n')
		whole := i >= 0
		if whole {
			line, in = in[:i], in[i+1:]
			line = bytes.TrimSuffix(line, []byte{'\r'})
		} else {
			in = nil
		}
		if whole && len(line) == 0 {
			if has {
				emit()
			}
			continue
		}
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			v = bytes.TrimPrefix(v, []byte{' '})
			if has {
				d = append(d, ' ')
			}
			has = true
			for _, c := range v { // bytes, not runes: the data need not be UTF-8
				if c == '\r' {
					c = ' '
				}
				d = append(d, c)
			}
		}
	}
	if has {
		emit()
	}
	return out
}

// FuzzSSE checks readSSE against refSSE: what reaches the client is the
// events' data, one line each, whatever the input; each message held
// whole is inspected as it is passed on; nothing is left charged to the
// budget.
func FuzzSSE(f *testing.F) {
	for _, s := range []string{
		"data: {\"a\":1}\n\n",
		"data: a\r\ndata: b\r\n\r\n",
		": keep-alive\n\nevent: message\nid: 7\nretry: 10\ndata: x\n\n",
		"data:\n\ndata: \t \n\n",
		"data: no blank line at the end",
		"data: cr\rinside\n\n",
		"field-without-colon\n\ndata",
		"data: " + strings.Repeat("long", 40) + "\n\n",
		"id: " + strings.Repeat("9", 300) + "\nretry: -1\ndata: after a huge id\n\n",
		"\r\n\r\n\n\ndata:x\n\r\ndata:y",
	} {
		f.Add([]byte(s), uint8(16))
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, in []byte, max8 uint8) {
		max := int(max8) + 1
		want := refSSE(bytes.Clone(in), max)
		inb := newInbox()
		got := make(chan []byte, 1)
		go func() {
			b, _ := io.ReadAll(inb)
			got <- b
		}()
		b := &budget{max: 1 << 20}
		var inspected [][]byte
		m := newMessage(inb, max, b)
		err := readSSE(bytes.NewReader(in), m, func(msg []byte) { inspected = append(inspected, bytes.Clone(msg)) })
		if err != nil {
			t.Fatalf("readSSE: %v", err)
		}
		inb.fail(io.EOF)
		out := <-got
		if !bytes.Equal(out, want) {
			t.Fatalf("readSSE passed on\n%q\nwant\n%q", out, want)
		}
		for _, msg := range inspected {
			if len(msg) > max || bytes.ContainsAny(msg, "\r\n") || !bytes.Contains(out, msg) {
				t.Fatalf("inspected %q: over max %d, a line break, or not passed on", msg, max)
			}
		}
		if b.used != 0 {
			t.Fatalf("%d bytes left charged to the budget", b.used)
		}
	})
}

// uniqueKeys reports whether the JSON object data has no key twice at its
// top level, nor two keys that differ only by case (peek refuses a message
// with a routing member written so as ambiguous, and reads no sessionId
// written so; the comparison below is for the unambiguous case).
func uniqueKeys(data []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		return false
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		for _, k := range keys {
			if strings.EqualFold(k, tok.(string)) {
				return false
			}
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return false
		}
	}
	return true
}

// FuzzEnvelope checks peek against encoding/json on every object whose
// keys are unambiguous: the id, method, result and sessionId routing
// reads are the ones the client decodes. On anything else peek must only
// not panic.
func FuzzEnvelope(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`,
		`{"jsonrpc":"2.0","id":"a","method":"session/new","params":{"cwd":"/"}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{}}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"x"}}`,
		`{"jsonrpc":"2.0","\u0069d":5,"result":{"session\u0049d":"s5"}}`,
		`{"id":1,"id":2,"result":{}}`,
		`{"method":7,"id":[1],"params":"x"}`,
		`{"result":{"sessionId":"a\nb"},"id":3}`,
		`[{"id":1}]`, `{"id":1`, `{`, ``, `null`, `{"id" 1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		env := peek(msg)
		if !json.Valid(msg) || !uniqueKeys(msg) {
			return
		}
		var top map[string]json.RawMessage
		if json.Unmarshal(msg, &top) != nil {
			return
		}
		// A routing member spelled with other cases ("pArAms"), which
		// encoding/json would read as the member, is refused by the
		// peeker (jsonscan.Peek's rule): the line routes nowhere.
		for k := range top {
			for _, name := range []string{"jsonrpc", "id", "method", "params", "result", "error"} {
				if k != name && jsonscan.FoldsLike([]byte(k), name) {
					if env.method != "" || env.id != nil || env.hasResult {
						t.Fatalf("peek routed a line with the member %q (%q): %+v", k, name, env)
					}
					return
				}
			}
		}
		id, hasID := top["id"]
		if hasID && string(id) == "null" {
			hasID = false
		}
		if hasID != (env.id != nil) {
			t.Fatalf("peek: id %q, encoding/json: %q", env.id, id)
		}
		if hasID && !jsonEqual(id, env.id) {
			t.Fatalf("peek: id %q, encoding/json: %q", env.id, id)
		}
		var method string
		if raw, ok := top["method"]; ok && json.Unmarshal(raw, &method) == nil && method != env.method {
			t.Fatalf("peek: method %q, encoding/json: %q", env.method, method)
		}
		if _, ok := top["result"]; ok != env.hasResult {
			t.Fatalf("peek: hasResult %v, encoding/json: %v", env.hasResult, ok)
		}
		src := top["params"]
		if env.method == "" {
			src = top["result"]
		}
		var inner struct {
			SessionID *string `json:"sessionId"`
		}
		if len(src) == 0 || !uniqueKeys(src) || json.Unmarshal(src, &inner) != nil || inner.SessionID == nil {
			return
		}
		var obj map[string]json.RawMessage
		_ = json.Unmarshal(src, &obj)
		if _, exact := obj["sessionId"]; !exact {
			return // encoding/json matched the key case-insensitively; the wire is case-sensitive
		}
		if *inner.SessionID != env.sessionID {
			t.Fatalf("peek: sessionId %q, encoding/json: %q", env.sessionID, *inner.SessionID)
		}
	})
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if errors.Join(json.Unmarshal(a, &x), json.Unmarshal(b, &y)) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
