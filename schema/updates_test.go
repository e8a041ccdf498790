package schema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ptr[T any](v T) *T { return &v }

func TestDecodeUpdate(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Update
	}{
		{
			"agent chunk",
			`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"},"messageId":"m1","_meta":{"k":1}}`,
			&AgentMessageChunk{Content: Text("hi"), MessageID: "m1", Meta: json.RawMessage(`{"k":1}`)},
		},
		{
			"bad messageId reads as none",
			`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"hi"},"messageId":42}`,
			&UserMessageChunk{Content: Text("hi")},
		},
		{
			"thought with unknown content type",
			`{"sessionUpdate":"agent_thought_chunk","content":{"type":"hologram","x":1}}`,
			&AgentThoughtChunk{Content: &UnknownContent{Type: "hologram", Raw: json.RawMessage(`{"type":"hologram","x":1}`)}},
		},
		{
			"tool_call with lenient fields",
			`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Read","kind":7,"status":"queued",` +
				`"content":[{"type":"content","content":{"type":"text","text":"a"}},{"type":"diff"},{"type":"text","text":"unwrapped"}],` +
				`"locations":[{"path":"/a","line":-1},{"line":3}],"rawInput":{"n":12345678901234567890}}`,
			&ToolCall{
				ToolCallID: "t1", Title: "Read", Kind: "", Status: "queued",
				Content: []ToolCallContent{
					&ToolContent{Content: Text("a")},
					&UnknownToolCallContent{Type: "text", Raw: json.RawMessage(`{"type":"text","text":"unwrapped"}`)},
				},
				Locations: []ToolCallLocation{{Path: "/a"}},
				RawInput:  json.RawMessage(`{"n":12345678901234567890}`),
			},
		},
		{
			"tool_call_update nulls are unchanged",
			`{"sessionUpdate":"tool_call_update","toolCallId":"t1","title":null,"kind":null,"status":null,"content":null,"locations":null,"rawOutput":null}`,
			&ToolCallUpdate{ToolCallID: "t1"},
		},
		{
			"tool_call_update values",
			`{"sessionUpdate":"tool_call_update","toolCallId":"t1","title":"T","kind":"switch_mode","status":"completed","content":[],"locations":[{"path":"/x","line":4}],"rawOutput":"ok"}`,
			&ToolCallUpdate{ToolCallID: "t1", Title: ptr("T"), Kind: ptr(ToolKindSwitchMode), Status: ptr(ToolCallStatusCompleted),
				Content: []ToolCallContent{}, Locations: []ToolCallLocation{{Path: "/x", Line: ptr(uint32(4))}}, RawOutput: json.RawMessage(`"ok"`)},
		},
		{
			"plan drops invalid entries, keeps unknown enums",
			`{"sessionUpdate":"plan","entries":[{"content":"a","priority":"urgent","status":"pending"},{"content":"b"}]}`,
			&Plan{Entries: []PlanEntry{{Content: "a", Priority: "urgent", Status: PlanEntryStatusPending}}},
		},
		{
			"plan with malformed entries reads as empty",
			`{"sessionUpdate":"plan","entries":{}}`,
			&Plan{Entries: []PlanEntry{}},
		},
		{
			"commands",
			`{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"web","description":"search","input":{"hint":"q"}},{"name":"x","description":"d","input":{"nohint":1}},{"name":"broken"}]}`,
			&AvailableCommandsUpdate{AvailableCommands: []AvailableCommand{
				{Name: "web", Description: "search", Input: &AvailableCommandInput{Hint: "q"}},
				{Name: "x", Description: "d"},
			}},
		},
		{
			"current mode",
			`{"sessionUpdate":"current_mode_update","currentModeId":"code"}`,
			&CurrentModeUpdate{CurrentModeID: "code"},
		},
		{
			"current mode from the doc's modeId",
			`{"sessionUpdate":"current_mode_update","modeId":"plan"}`,
			&CurrentModeUpdate{CurrentModeID: "plan"},
		},
		{
			"config options",
			`{"sessionUpdate":"config_option_update","configOptions":[{"type":"boolean","id":"b","name":"B","currentValue":true},{"type":"slider","id":"s","name":"S"},{"type":"select","id":"bad","name":"no current value","options":[]},{"id":"untyped","name":"U"}]}`,
			&ConfigOptionUpdate{ConfigOptions: []SessionConfigOption{
				&BooleanConfigOption{ID: "b", Name: "B", CurrentValue: true},
				&UnknownConfigOption{Type: "slider", ID: "s", Raw: json.RawMessage(`{"type":"slider","id":"s","name":"S"}`)},
			}},
		},
		{
			"session info three states",
			`{"sessionUpdate":"session_info_update","title":null,"updatedAt":"2026-01-01T00:00:00Z"}`,
			&SessionInfoUpdate{Title: NullField[string](), UpdatedAt: SetField("2026-01-01T00:00:00Z")},
		},
		{
			"session info malformed value reads as absent",
			`{"sessionUpdate":"session_info_update","title":5}`,
			&SessionInfoUpdate{},
		},
		{
			"usage with bad cost",
			`{"sessionUpdate":"usage_update","used":10,"size":100,"cost":{"amount":"1"}}`,
			&UsageUpdate{Used: 10, Size: 100},
		},
		{
			"usage with cost",
			`{"sessionUpdate":"usage_update","used":10,"size":100,"cost":{"amount":0.25,"currency":"USD"}}`,
			&UsageUpdate{Used: 10, Size: 100, Cost: &Cost{Amount: 0.25, Currency: "USD"}},
		},
		{
			"unknown kind",
			`{"sessionUpdate":"weather_report","severity":"info","title":"hi"}`,
			&UnknownUpdate{Kind: "weather_report", Raw: json.RawMessage(`{"sessionUpdate":"weather_report","severity":"info","title":"hi"}`)},
		},
		{
			"unknown fields ignored",
			`{"sessionUpdate":"current_mode_update","currentModeId":"a","futureField":{"x":[1,2]}}`,
			&CurrentModeUpdate{CurrentModeID: "a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeUpdate([]byte(tt.in))
			if err != nil {
				t.Fatalf("decodeUpdate: %v", err)
			}
			if d := cmp.Diff(tt.want, got, rawCmp); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if got.UpdateKind() != tt.want.UpdateKind() {
				t.Errorf("UpdateKind %q, want %q", got.UpdateKind(), tt.want.UpdateKind())
			}
		})
	}
}

// A known kind that is malformed is an error, never another variant; the
// raw update still comes back as unknown so the caller can keep it.
func TestDecodeUpdateMalformedKnownKind(t *testing.T) {
	tests := []string{
		`{"sessionUpdate":"agent_message_chunk"}`,
		`{"sessionUpdate":"agent_message_chunk","content":null}`,
		`{"sessionUpdate":"agent_message_chunk","content":"hi"}`,
		`{"sessionUpdate":"agent_message_chunk","content":{"text":"no type"}}`,
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"text"}}`,
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":5}}`,
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"image","data":"AA=="}}`,
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"resource","resource":{"uri":"u","text":5}}}`,
		`{"sessionUpdate":"tool_call","toolCallId":"t"}`,
		`{"sessionUpdate":"tool_call","title":"x"}`,
		`{"sessionUpdate":"tool_call_update","toolCallId":5}`,
		`{"sessionUpdate":"plan"}`,
		`{"sessionUpdate":"current_mode_update"}`,
		`{"sessionUpdate":"usage_update","used":-1,"size":3}`,
		`{"sessionUpdate":"usage_update","used":1.5,"size":3}`,
		`{"sessionUpdate":"usage_update","used":1}`,
		`{"sessionUpdate":"config_option_update"}`,
		`{"sessionUpdate":"available_commands_update"}`,
		`{"sessionUpdate":5}`,
		`{"no":"kind"}`,
	}
	for _, in := range tests {
		got, err := decodeUpdate([]byte(in))
		if err == nil {
			t.Errorf("%s: no error, got %#v", in, got)
			continue
		}
		u, ok := got.(*UnknownUpdate)
		if !ok {
			t.Errorf("%s: want *UnknownUpdate with the error, got %T", in, got)
			continue
		}
		if string(u.Raw) != in {
			t.Errorf("%s: raw %s", in, u.Raw)
		}
	}
	for _, in := range []string{``, `null`, `[]`, `"x"`, `{"sessionUpdate":"x"`, `{"sessionUpdate":"notice"} trailing`} {
		got, err := decodeUpdate([]byte(in))
		if err == nil || got != nil {
			t.Errorf("%q: got (%v, %v), want (nil, error)", in, got, err)
		}
	}
}

// content "[]" replaces with nothing; absent and null leave it unchanged.
func TestToolCallUpdateContentAbsentNullEmpty(t *testing.T) {
	tests := []struct {
		in        string
		nilList   bool
		reEncoded string
	}{
		{`{"sessionUpdate":"tool_call_update","toolCallId":"t"}`, true, `{"sessionUpdate":"tool_call_update","toolCallId":"t"}`},
		{`{"sessionUpdate":"tool_call_update","toolCallId":"t","content":null,"locations":null}`, true, `{"sessionUpdate":"tool_call_update","toolCallId":"t"}`},
		{`{"sessionUpdate":"tool_call_update","toolCallId":"t","content":"junk","locations":7}`, true, `{"sessionUpdate":"tool_call_update","toolCallId":"t"}`},
		{`{"sessionUpdate":"tool_call_update","toolCallId":"t","content":[],"locations":[]}`, false, `{"sessionUpdate":"tool_call_update","toolCallId":"t","content":[],"locations":[]}`},
	}
	for _, tt := range tests {
		u, err := decodeUpdate([]byte(tt.in))
		if err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		tc := u.(*ToolCallUpdate)
		if (tc.Content == nil) != tt.nilList || (tc.Locations == nil) != tt.nilList {
			t.Errorf("%s: Content nil=%v Locations nil=%v, want nil=%v", tt.in, tc.Content == nil, tc.Locations == nil, tt.nilList)
		}
		if out := mustMarshal(t, u); string(out) != tt.reEncoded {
			t.Errorf("%s: re-encoded %s, want %s", tt.in, out, tt.reEncoded)
		}
	}
}

func TestSessionInfoUpdateEncoding(t *testing.T) {
	tests := []struct {
		u    SessionInfoUpdate
		want string
	}{
		{SessionInfoUpdate{}, `{"sessionUpdate":"session_info_update"}`},
		{SessionInfoUpdate{Title: NullField[string]()}, `{"sessionUpdate":"session_info_update","title":null}`},
		{SessionInfoUpdate{Title: SetField("T"), UpdatedAt: NullField[string]()}, `{"sessionUpdate":"session_info_update","title":"T","updatedAt":null}`},
	}
	for _, tt := range tests {
		if got := mustMarshal(t, &tt.u); string(got) != tt.want {
			t.Errorf("got %s want %s", got, tt.want)
		}
		back, err := decodeUpdate([]byte(tt.want))
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(&tt.u, back); d != "" {
			t.Errorf("round trip (-want +got):\n%s", d)
		}
	}
}

func TestSessionNotification(t *testing.T) {
	var n SessionNotification
	in := `{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}},"_meta":{"traceparent":"00-1"}}`
	if err := json.Unmarshal([]byte(in), &n); err != nil {
		t.Fatal(err)
	}
	want := SessionNotification{SessionID: "s1", Update: &AgentMessageChunk{Content: Text("x")}, Meta: json.RawMessage(`{"traceparent":"00-1"}`)}
	if d := cmp.Diff(want, n, rawCmp); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if out := mustMarshal(t, n); !jsonEqual(out, []byte(in)) {
		t.Errorf("re-encoded %s", out)
	}

	// A malformed known update: error, yet the notification is usable.
	n = SessionNotification{}
	err := json.Unmarshal([]byte(`{"sessionId":"s1","update":{"sessionUpdate":"tool_call"}}`), &n)
	if err == nil {
		t.Fatal("no error for a tool_call without toolCallId")
	}
	if u, ok := n.Update.(*UnknownUpdate); !ok || u.Kind != "tool_call" || n.SessionID != "s1" {
		t.Errorf("got %+v", n)
	}

	for _, in := range []string{`{"update":{"sessionUpdate":"plan","entries":[]}}`, `{"sessionId":"s"}`, `{"sessionId":"s","update":null}`} {
		if err := json.Unmarshal([]byte(in), new(SessionNotification)); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
}

func TestUnknownUpdateReEncodedByteForByte(t *testing.T) {
	in := `{"sessionUpdate":"weather_report", "plan" : {"type":"items","planId":"p","entries":[]},"n":1.0e3}`
	u, err := decodeUpdate([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	got, err := u.(*UnknownUpdate).MarshalJSON()
	if err != nil || string(got) != in {
		t.Errorf("got %s, %v", got, err)
	}
	// The raw bytes are a copy: the read buffer may be reused.
	buf := []byte(in)
	u, _ = decodeUpdate(buf)
	for i := range buf {
		buf[i] = ' '
	}
	if string(u.(*UnknownUpdate).Raw) != in {
		t.Error("UnknownUpdate.Raw aliases the input buffer")
	}
}

func TestUpdateMarshalWritesDiscriminator(t *testing.T) {
	all := []Update{
		&UserMessageChunk{Content: Text("a")},
		&AgentMessageChunk{Content: Text("a")},
		&AgentThoughtChunk{Content: Text("a")},
		&ToolCall{ToolCallID: "t", Title: "x"},
		&ToolCallUpdate{ToolCallID: "t"},
		&Plan{},
		&AvailableCommandsUpdate{},
		&CurrentModeUpdate{CurrentModeID: "m"},
		&ConfigOptionUpdate{},
		&SessionInfoUpdate{},
		&UsageUpdate{Used: 1, Size: 2},
		&UnknownUpdate{Kind: "future"},
	}
	for _, u := range all {
		b := mustMarshal(t, u)
		k, _, err := jsonDiscriminator(b, "sessionUpdate")
		if err != nil || string(k) != u.UpdateKind() {
			t.Errorf("%T encoded as %s", u, b)
		}
		back, err := decodeUpdate(b)
		if err != nil {
			t.Errorf("%T: %s does not decode: %v", u, b, err)
			continue
		}
		if d := cmp.Diff(u, back, rawCmp); d != "" && !strings.HasPrefix(u.UpdateKind(), "future") {
			// Required lists come back as [] rather than nil.
			if !jsonEqual(mustMarshal(t, back), b) {
				t.Errorf("%T round trip (-want +got):\n%s", u, d)
			}
		}
	}
	// Values encode the same as pointers.
	if a, b := mustMarshal(t, AgentMessageChunk{Content: Text("v")}), mustMarshal(t, &AgentMessageChunk{Content: Text("v")}); string(a) != string(b) {
		t.Errorf("value %s vs pointer %s", a, b)
	}
	if _, err := json.Marshal(&AgentMessageChunk{}); err == nil {
		t.Error("a chunk without content encoded")
	}
}

var benchChunk = []byte(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hello, this is a streamed token or two of the answer"},"messageId":"msg_01HZX3"}`)

func BenchmarkDecodeAgentMessageChunk(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchChunk)))
	for b.Loop() {
		u, err := decodeUpdate(benchChunk)
		if err != nil || u == nil {
			b.Fatal(err)
		}
	}
}

func FuzzDecodeUpdate(f *testing.F) {
	files, _ := filepath.Glob("testdata/golden/*.json")
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		var g goldenFile
		if err := json.Unmarshal(data, &g); err == nil && g.Type == "Update" {
			f.Add([]byte(g.Input))
		}
	}
	f.Add(benchChunk)
	f.Add([]byte(`{"sessionUpdate":"tool_call_update","toolCallId":"t","content":[],"kind":null}`))
	f.Add([]byte(`{"sessionUpdate":"session_info_update","title":null}`))
	f.Add([]byte(`{"sessionUpdate":"config_option_update","configOptions":[{"type":"select","id":"m","name":"M","currentValue":"a","options":[{"group":"g","name":"G","options":[{"value":"a","name":"A"}]}]}]}`))
	f.Add([]byte(`{"sessionUpdate":"agent_message_chunk","content":{"type":"resource","resource":{"uri":"f","blob":"AA=="}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		u, err := decodeUpdate(data)
		if err != nil {
			return
		}
		out, err := json.Marshal(u)
		if err != nil {
			t.Fatalf("re-encode %T: %v", u, err)
		}
		u2, err := decodeUpdate(out)
		if err != nil {
			t.Fatalf("decode of re-encoded %s: %v", out, err)
		}
		if d := cmp.Diff(u, u2, rawCmp); d != "" {
			t.Fatalf("round trip of %s via %s (-first +second):\n%s", data, out, d)
		}
	})
}
