package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/acpclient/acp/internal/scantest"
)

// Peek is checked against encoding/json, the reference every reader of the
// wire agreed with before it: whenever encoding/json reads a line as one
// object with unambiguous routing keys, Peek's fields are what encoding/json
// reads; whenever it does not, Peek says why. Its session/update reading is
// checked against SplitNotification and TextChunk, the params-level scans
// the decoders use (themselves checked against encoding/json in schema).

var peekSeeds = append([]string{
	`{"jsonrpc":"2.0","\u0069d":5,"result":{"session\u0049d":"s5"}}`,
	`{"id":1,"id":2,"result":{}}`,
	`{"method":7,"id":[1],"params":"x"}`,
	`{"method":null,"id":1,"result":null}`,
	`{"result":{"sessionId":"a\nb"},"id":3}`,
	`{"id":1,"Result":{}}`,
	`{"jsonrpc":"2.0","id":3,"method":"fs/read_text_file","params":{"sessionId":"s\u0031","path":"/x"}}`,
	`{"params":{"sessionId":"s1","SessionId":"s2"}}`,
	`{"params":{"sessionId":"s1","sessionId":"s2","update":{}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\u00e9 caf` + "\xc3\xa9" + `"}}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","_meta":{"a":1},"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","_meta":[],"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}`,
	`{"method":"session/update","params":{"update":{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"completed"},"sessionId":"s1"}}`,
	`{"method":"a` + "\xff" + `b"}`, `{"method":"\ud800"}`, ` {"id":1} `, `{"id":1}{}`,
	// The short cut's shape (envelope_fast.go) and its near misses.
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_thought_chunk","messageId":"m\u0031","content":{"type":"text","text":"a\nb"}}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"caf` + "\xc3\xa9\xff" + `"},"messageId":"m1"}},"id":null}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"x"},"messageId":"m2"}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}},"_meta":{"a":1}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}},"params":{}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s\u0031","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"} }}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x","text":"y"}}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":7,"content":{"type":"text","text":"x"}}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress","title":"Edit a.go"}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","content":[{"type":"content","content":{"type":"text","text":"a\nb"}}],"rawOutput":{"n":[1,null]}}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","sessionupdate":"plan"}}}`,
}, scantest.Seeds...)

func TestPeekSeeds(t *testing.T) {
	for _, s := range peekSeeds {
		checkPeek(t, []byte(s))
	}
}

func FuzzPeek(f *testing.F) {
	for _, s := range peekSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkPeek)
}

// TestPeekStrict pins the choices Peek makes where the old readers
// differed.
func TestPeekStrict(t *testing.T) {
	for _, tc := range []struct {
		line string
		err  error
	}{
		{`{"id":1,"id":2,"result":{}}`, ErrAmbiguous},
		{`{"ID":1,"result":{}}`, ErrAmbiguous},
		{`{"id":1,"Method":"x"}`, ErrAmbiguous},
		{`{"method":7,"id":1}`, ErrMethod},
		{`{"method":"x"} x`, ErrSyntax},
		{`[{"id":1}]`, ErrSyntax},
		{`{"\u0069d":1,"result":{}}`, nil},
		{`{"id":1,"result":{},"extra":{"id":2}}`, nil},
	} {
		_, err := Peek([]byte(tc.line))
		if !errors.Is(err, tc.err) {
			t.Errorf("Peek(%s): %v, want %v", tc.line, err, tc.err)
		}
	}
	e, _ := Peek([]byte(`{"\u0069d":1,"result":{}}`))
	if string(e.ID) != "1" {
		t.Errorf("an escaped key: id %q, want 1", e.ID)
	}
	e, _ = Peek([]byte(`{"params":{"sessionId":"a","SessionId":"b"}}`))
	if e.HasSession {
		t.Errorf("a case-folded twin of sessionId: session %q read, want none", e.SessionID)
	}
}

func checkPeek(t *testing.T, line []byte) {
	e, err := Peek(line)
	i := SkipWS(line, 0)
	isObj := json.Valid(line) && i < len(line) && line[i] == '{'
	if isObj != !errors.Is(err, ErrSyntax) {
		t.Fatalf("Peek(%q): %v; encoding/json reads an object: %v", line, err, isObj)
	}
	if !isObj {
		return
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(line, &top) != nil {
		t.Fatalf("encoding/json rejects %q as a map", line)
	}
	ambiguous := !uniqueFolded(line, "jsonrpc", "id", "method", "params", "result", "error")
	if ambiguous != errors.Is(err, ErrAmbiguous) {
		t.Fatalf("Peek(%q): %v; ambiguous keys: %v", line, err, ambiguous)
	}
	if ambiguous {
		return
	}
	// With no routing key repeated or case-folded, the map and a struct
	// decode read the same members.
	var ref struct {
		JSONRPC json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
		Params  json.RawMessage `json:"params"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	serr := json.Unmarshal(line, &ref)
	rawMethod, hasMethod := top["method"]
	badMethod := hasMethod && string(rawMethod) != "null" && rawMethod[0] != '"'
	if badMethod != errors.Is(err, ErrMethod) || (serr != nil) != badMethod {
		t.Fatalf("Peek(%q): %v; encoding/json: %v", line, err, serr)
	}
	for _, m := range []struct {
		name     string
		got, ref []byte
	}{{"jsonrpc", e.JSONRPC, top["jsonrpc"]}, {"id", e.ID, top["id"]}, {"params", e.Params, top["params"]}, {"result", e.Result, top["result"]}, {"error", e.Error, top["error"]}} {
		if !bytes.Equal(m.got, m.ref) || (m.got == nil) != (m.ref == nil) {
			t.Fatalf("Peek(%q): %s %q, encoding/json %q", line, m.name, m.got, m.ref)
		}
	}
	if badMethod {
		return
	}
	if (ref.Method != nil) != e.HasMethod || (ref.Method != nil && *ref.Method != e.Method) {
		t.Fatalf("Peek(%q): method %q (%v), encoding/json %v", line, e.Method, e.HasMethod, ref.Method)
	}
	checkSession(t, line, "params", top["params"], e.SessionID, e.HasSession)
	checkSession(t, line, "result", top["result"], e.ResultSessionID, e.HasResultSession)
	checkUpdate(t, line, &e)
	checkFastParams(t, e.Params)
}

// checkSession: the sessionId of obj is read when obj is an object holding
// it once, exactly, as a string.
func checkSession(t *testing.T, line []byte, name string, obj json.RawMessage, sid []byte, has bool) {
	t.Helper()
	want, ok := "", false
	if len(obj) > 0 && obj[0] == '{' && uniqueFolded(obj, "sessionId") {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(obj, &m)
		if v, found := m["sessionId"]; found && v[0] == '"' {
			ok = json.Unmarshal(v, &want) == nil
		}
	}
	if ok != has || string(sid) != want {
		t.Fatalf("Peek(%q): %s.sessionId %q (%v), encoding/json %q (%v)", line, name, sid, has, want, ok)
	}
}

// checkUpdate: Peek's session/update reading is SplitNotification's and
// TextChunk's.
func checkUpdate(t *testing.T, line []byte, e *Envelope) {
	t.Helper()
	u := &e.Update
	sid, upd, meta, ok := SplitNotification(e.Params)
	if len(e.Params) == 0 || e.Params[0] != '{' {
		ok = false
	}
	if ok != u.Exact {
		t.Fatalf("Peek(%q): exact %v, SplitNotification %v", line, u.Exact, ok)
	}
	if !ok {
		return
	}
	if !bytes.Equal(sid, e.SessionID) || !bytes.Equal(sid, u.SessionID) || !bytes.Equal(upd, u.Body) || !bytes.Equal(meta, u.Meta) {
		t.Fatalf("Peek(%q): %q %q %q, SplitNotification %q %q %q", line, e.SessionID, u.Body, u.Meta, sid, upd, meta)
	}
	k, msgID, text, ok := TextChunk(upd)
	if !ok {
		k = ChunkNone
	}
	if k != u.Chunk || !bytes.Equal(msgID, u.MsgID) || !bytes.Equal(text, u.Text) {
		t.Fatalf("Peek(%q): chunk %v %q %q, TextChunk %v %q %q", line, u.Chunk, u.MsgID, u.Text, k, msgID, text)
	}
	if ok {
		in, plain := Plain(text)
		if plain != u.TextPlain || (plain && !bytes.Equal(in, u.Text[1:len(u.Text)-1])) {
			t.Fatalf("Peek(%q): text plain %v, Plain %v", line, u.TextPlain, plain)
		}
	}
	var d struct {
		Kind *string `json:"sessionUpdate"`
	}
	var m map[string]json.RawMessage
	_ = json.Unmarshal(upd, &m)
	if uniqueFolded(upd, "sessionUpdate") && json.Unmarshal(m["sessionUpdate"], &d.Kind) == nil && d.Kind != nil {
		if in, plain := Plain(m["sessionUpdate"]); plain && string(in) != string(u.Kind) {
			t.Fatalf("Peek(%q): kind %q, encoding/json %q", line, u.Kind, *d.Kind)
		}
	}
}

// checkFastParams: where the short cut for the common text chunk
// (fastParams) takes params, it reads them exactly as the general walk
// does, to the byte and the nil. It reports whether it took them.
func checkFastParams(t *testing.T, params []byte) bool {
	t.Helper()
	if params == nil {
		return false
	}
	pf, pg := peeker{d: params}, peeker{d: params}
	var ef, eg Envelope
	endF := pf.fastParams(0, &ef)
	if endF < 0 {
		return false
	}
	endG := pg.params(0, &eg, false)
	if endF != endG || !reflect.DeepEqual(ef.Update, eg.Update) || !reflect.DeepEqual(pf.sid, pg.sid) {
		t.Fatalf("fastParams(%q) = %d, %+v, %+v; the walk %d, %+v, %+v", params, endF, ef.Update, pf.sid, endG, eg.Update, pg.sid)
	}
	return true
}

// The short cut takes the shapes it is for, and only those.
func TestFastParamsShapes(t *testing.T) {
	for _, tc := range []struct {
		params string
		fast   bool
	}{
		{`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}`, true},
		{`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"h\u00e9"}}}`, true},
		{`{"sessionId":"s1","update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"hi"},"messageId":"m"}}`, true},
		{`{"sessionId":"s1","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":""}}}`, true},
		// Another kind: its members are validated, the kind kept.
		{`{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","content":{"type":"text","text":"hi"}}}`, true},
		{`{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress","title":"Edit a.go"}}`, true},
		{`{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c\u0031","title":"café ` + "\xff" + `","rawOutput":{"a":[1,null,true]},"x":-1.5e3}}`, true},
		{`{"sessionId":"s1","update":{"sessionUpdate":"plan"}}`, true},
		{`{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","sessionUpdate":"plan"}}`, false},
		{`{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","SessionUPDATE":"plan"}}`, false},
		{`{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","session\u0055pdate":"plan"}}`, false},
		{`{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","tool` + "\xc3\xa9" + `":"c1"}}`, false},
		{`{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId": "c1"}}`, false},
		{`{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1"} }}`, false},
		{`{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1"},"_meta":{}}`, false},
		{`{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1",}}`, false},
		{`{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1"`, false},
		{`{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1"}`, false},
		{`{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","rawInput":{"a":}}}`, false},
		{`{"sessionId":"s1","update":{"sessionUpdate":"tool\u005fcall_update","toolCallId":"c1"}}`, false},
		{`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"hi"},"messageId":"m"}}`, false},
		{`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi","annotations":{}}}}`, false},
		{`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}},"_meta":{}}`, false},
		{`{"sessionId":"s\u0031","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}`, false},
		{`{"sessionId":"s1", "update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}`, false},
		{`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}`, false},
		{`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi`, false},
	} {
		if got := checkFastParams(t, []byte(tc.params)); got != tc.fast {
			t.Errorf("fastParams(%s) took it: %v, want %v", tc.params, got, tc.fast)
		}
	}
}

// uniqueFolded reports whether no key of the object data that folds to one
// of names occurs twice or differs from it only by case.
func uniqueFolded(data []byte, names ...string) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		k := tok.(string)
		for _, n := range names {
			if strings.EqualFold(k, n) {
				if k != n || seen[n] {
					return false
				}
				seen[n] = true
			}
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return false
		}
	}
	return true
}

// BenchmarkPeek reads the envelope of the line the client reads most, a
// text chunk with a messageId, and of a tool_call_update.
//
//	go test -run '^$' -bench Peek -benchmem ./internal/jsonscan/
func BenchmarkPeek(b *testing.B) {
	for _, tc := range []struct{ name, line string }{
		{"chunk", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"Hello, this is a streamed token or two of the answer"}}}}`},
		{"tool", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress","title":"Edit a.go"}}}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			line := []byte(tc.line)
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				if _, err := Peek(line); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkThreeScans is what the reader did before Peek, for the
// comparison in bench/README.md: a validating walk of the line, then
// SplitNotification over params and TextChunk over the update.
func BenchmarkThreeScans(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"Hello, this is a streamed token or two of the answer"}}}}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		s := NewObj(line, true)
		var params []byte
		for {
			k, _, v, ok := s.Next()
			if !ok {
				break
			}
			if string(k) == "params" {
				params = v
			}
		}
		_, upd, _, ok := SplitNotification(params)
		if !ok {
			b.Fatal("split")
		}
		if _, _, text, ok := TextChunk(upd); !ok {
			b.Fatal("chunk")
		} else if _, ok := Plain(text); !ok {
			b.Fatal("plain")
		}
	}
}
