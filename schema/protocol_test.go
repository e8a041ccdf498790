package schema

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestSetSessionConfigOptionRequestEncoding(t *testing.T) {
	tests := []struct {
		r    SetSessionConfigOptionRequest
		want string
	}{
		{SetSessionConfigOptionRequest{SessionID: "s", ConfigID: "model", Value: "smart"},
			`{"sessionId":"s","configId":"model","value":"smart"}`},
		{SetSessionConfigOptionRequest{SessionID: "s", ConfigID: "think", Boolean: ptr(false), Value: "ignored"},
			`{"sessionId":"s","configId":"think","type":"boolean","value":false}`},
		{SetSessionConfigOptionRequest{SessionID: "s", ConfigID: "think", Boolean: ptr(true), Meta: json.RawMessage(`{"a":1}`)},
			`{"sessionId":"s","configId":"think","type":"boolean","value":true,"_meta":{"a":1}}`},
	}
	for _, tt := range tests {
		got := mustMarshal(t, tt.r)
		if string(got) != tt.want {
			t.Errorf("got %s\nwant %s", got, tt.want)
		}
		var back SetSessionConfigOptionRequest
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatal(err)
		}
		want := tt.r
		if want.Boolean != nil {
			want.Value = ""
		}
		if d := cmp.Diff(want, back, rawCmp); d != "" {
			t.Errorf("round trip (-want +got):\n%s", d)
		}
	}
	for _, in := range []string{
		`{"sessionId":"s","configId":"c","type":"boolean","value":"true"}`,
		`{"sessionId":"s","configId":"c","value":true}`,
		`{"sessionId":"s","configId":"c"}`,
		`{"sessionId":"s","value":"v"}`,
	} {
		if err := json.Unmarshal([]byte(in), new(SetSessionConfigOptionRequest)); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
}

func TestRequestsAlwaysSendRequiredArrays(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{NewSessionRequest{Cwd: "/p"}, `{"cwd":"/p","mcpServers":[]}`},
		{LoadSessionRequest{SessionID: "s", Cwd: "/p"}, `{"sessionId":"s","cwd":"/p","mcpServers":[]}`},
		{ResumeSessionRequest{SessionID: "s", Cwd: "/p"}, `{"sessionId":"s","cwd":"/p","mcpServers":[]}`},
		{NewSessionRequest{Cwd: "/p", AdditionalDirectories: []string{}}, `{"cwd":"/p","mcpServers":[]}`},
		{NewSessionRequest{Cwd: "/p", MCPServers: []MCPServer{
			&MCPServerStdio{Name: "a", Command: "/bin/a"},
			&MCPServerHTTP{Name: "h", URL: "https://h"},
			&MCPServerSSE{Name: "s", URL: "https://s"},
		}}, `{"cwd":"/p","mcpServers":[{"name":"a","command":"/bin/a","args":[],"env":[]},{"type":"http","name":"h","url":"https://h","headers":[]},{"type":"sse","name":"s","url":"https://s","headers":[]}]}`},
		{PromptRequest{SessionID: "s"}, `{"sessionId":"s","prompt":[]}`},
		{PromptRequest{SessionID: "s", Prompt: []ContentBlock{Text("hi")}}, `{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}`},
		{ListSessionsRequest{}, `{}`},
		{ListSessionsRequest{Cwd: "/p", Cursor: "c"}, `{"cwd":"/p","cursor":"c"}`},
		{CancelNotification{SessionID: "s"}, `{"sessionId":"s"}`},
		{CancelRequestNotification{RequestID: json.RawMessage(`3`)}, `{"requestId":3}`},
		{CancelRequestNotification{}, `{"requestId":null}`},
		{AuthenticateRequest{MethodID: "m"}, `{"methodId":"m"}`},
		{LogoutRequest{}, `{}`},
		{SetSessionModeRequest{SessionID: "s", ModeID: "m"}, `{"sessionId":"s","modeId":"m"}`},
		{InitializeRequest{ProtocolVersion: 1}, `{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false,"auth":{"terminal":false}}}`},
		{InitializeRequest{ProtocolVersion: 1, ClientCapabilities: ClientCapabilities{
			Session:     &ClientSessionCapabilities{ConfigOptions: &SessionConfigOptionsCapabilities{Boolean: &Capability{}}},
			Elicitation: &ElicitationCapabilities{Form: &Capability{}},
		}, ClientInfo: &Implementation{Name: "n", Version: "1"}},
			`{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false,"session":{"configOptions":{"boolean":{}}},"auth":{"terminal":false},"elicitation":{"form":{}}},"clientInfo":{"name":"n","version":"1"}}`},
		{RequestPermissionResponse{Outcome: PermissionOutcome{Kind: OutcomeSelected, OptionID: "allow"}},
			`{"outcome":{"outcome":"selected","optionId":"allow"}}`},
		{RequestPermissionResponse{Outcome: PermissionOutcome{Kind: OutcomeCancelled}}, `{"outcome":{"outcome":"cancelled"}}`},
		{CreateElicitationResponse{Action: ElicitationDecline}, `{"action":"decline"}`},
		{CreateElicitationResponse{Action: ElicitationAccept, Content: json.RawMessage(`{"a":1}`)}, `{"action":"accept","content":{"a":1}}`},
		{RequestPermissionRequest{SessionID: "s", ToolCall: ToolCallUpdate{ToolCallID: "t"}},
			`{"sessionId":"s","toolCall":{"toolCallId":"t"},"options":[]}`},
	}
	for _, tt := range tests {
		if got := mustMarshal(t, tt.v); string(got) != tt.want {
			t.Errorf("%T:\n got %s\nwant %s", tt.v, got, tt.want)
		}
	}
	if _, err := json.Marshal(PromptRequest{Prompt: []ContentBlock{nil}}); err == nil {
		t.Error("nil prompt block encoded")
	}
}

// Each case would fail to decode (or decode wrongly) without the leniency
// rule it names.
func TestCapabilitiesLeniency(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want AgentCapabilities
	}{
		{"bool of wrong type", `{"loadSession":"true"}`, AgentCapabilities{}},
		{"nested object of wrong type", `{"promptCapabilities":true,"mcpCapabilities":{"http":1,"sse":true}}`,
			AgentCapabilities{MCPCapabilities: MCPCapabilities{SSE: true}}},
		{"marker of wrong type reads as absent", `{"sessionCapabilities":{"list":true,"resume":{},"close":"yes","delete":null}}`,
			AgentCapabilities{SessionCapabilities: SessionCapabilities{Resume: &Capability{}}}},
		{"marker keeps its _meta", `{"auth":{"logout":{"_meta":{"v":2}}}}`,
			AgentCapabilities{Auth: AgentAuthCapabilities{Logout: &Capability{Meta: json.RawMessage(`{"v":2}`)}}}},
		{"bad _meta dropped", `{"_meta":"x","loadSession":true}`, AgentCapabilities{LoadSession: true}},
		{"unknown members ignored", `{"loadSession":true,"teleport":{},"sessionCapabilities":{"teleport":{}},"mcpCapabilities":{"teleport":true}}`,
			AgentCapabilities{LoadSession: true}},
	}
	for _, tt := range tests {
		var got AgentCapabilities
		if err := json.Unmarshal([]byte(tt.in), &got); err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if d := cmp.Diff(tt.want, got, rawCmp); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, d)
		}
	}

	var r InitializeResponse
	if err := json.Unmarshal([]byte(`{"protocolVersion":1,"agentCapabilities":[],"agentInfo":5,"authMethods":"x"}`), &r); err != nil {
		t.Fatalf("malformed optional members failed the response: %v", err)
	}
	if r.AgentInfo != nil || r.AuthMethods != nil {
		t.Errorf("got %+v", r)
	}
	for _, in := range []string{`{}`, `{"protocolVersion":"1"}`, `{"protocolVersion":70000}`, `{"protocolVersion":1.5}`} {
		if err := json.Unmarshal([]byte(in), new(InitializeResponse)); err == nil {
			t.Errorf("%s: no error for a bad protocolVersion", in)
		}
	}

	var c ClientCapabilities
	if err := json.Unmarshal([]byte(`{"fs":{"readTextFile":true,"writeTextFile":"yes"},"terminal":1,"elicitation":{"form":{},"url":false},"session":7}`), &c); err != nil {
		t.Fatal(err)
	}
	want := ClientCapabilities{FS: FileSystemCapabilities{ReadTextFile: true}, Elicitation: &ElicitationCapabilities{Form: &Capability{}}}
	if d := cmp.Diff(want, c, rawCmp); d != "" {
		t.Errorf("client capabilities (-want +got):\n%s", d)
	}
}

func TestAuthMethods(t *testing.T) {
	in := `{"protocolVersion":1,"authMethods":[
		{"id":"a","name":"Agent"},
		{"type":"terminal","id":"t","name":"Terminal","args":["--login"],"env":{"K":"V"}},
		{"type":"env_var","id":"e","name":"Env","link":"https://keys","vars":[{"name":"API_KEY","secret":true},{"label":"no name"}]},
		{"type":"oauth","id":"o","name":"OAuth","url":"https://x"},
		{"type":"terminal","id":"missing-name"},
		{"type":"oauth","name":"missing id"},
		{"type":null,"id":"n","name":"Null type"},
		{"type":"agent","id":"g","name":"Named default"},
		{"type":"","id":"e","name":"Empty type"},
		{"type":7,"id":"bad","name":"Type not a string"}
	]}`
	var r InitializeResponse
	if err := json.Unmarshal([]byte(in), &r); err != nil {
		t.Fatal(err)
	}
	want := []AuthMethod{
		&AgentAuthMethod{ID: "a", Name: "Agent"},
		&TerminalAuthMethod{ID: "t", Name: "Terminal", Args: []string{"--login"}, Env: map[string]string{"K": "V"}},
		&EnvVarAuthMethod{ID: "e", Name: "Env", Link: "https://keys", Vars: []EnvVarSpec{{Name: "API_KEY", Secret: ptr(true)}}},
		&UnknownAuthMethod{Type: "oauth", ID: "o", Name: "OAuth", Raw: json.RawMessage(`{"type":"oauth","id":"o","name":"OAuth","url":"https://x"}`)},
		// An absent or null "type" is the schema's default variant, which
		// its title names.
		&AgentAuthMethod{ID: "n", Name: "Null type"},
		&AgentAuthMethod{ID: "g", Name: "Named default"},
		&AgentAuthMethod{ID: "e", Name: "Empty type"},
	}
	if d := cmp.Diff(want, r.AuthMethods, rawCmp); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	for _, m := range r.AuthMethods {
		if m.MethodID() == "" || m.MethodName() == "" {
			t.Errorf("%T: empty id or name", m)
		}
	}
	// An unknown type must not pass for a callable agent method.
	if _, ok := r.AuthMethods[3].(*AgentAuthMethod); ok {
		t.Error("unknown auth type decoded as an agent method")
	}
	if got := mustMarshal(t, r.AuthMethods[3]); string(got) != `{"type":"oauth","id":"o","name":"OAuth","url":"https://x"}` {
		t.Errorf("unknown auth method re-encoded as %s", got)
	}
}

func TestSelectConfigOption(t *testing.T) {
	flat := `{"type":"select","id":"m","name":"M","currentValue":"a","options":[{"value":"a","name":"A"},{"value":"b","name":"B"}]}`
	grouped := `{"type":"select","id":"m","name":"M","currentValue":"a","options":[{"group":"g1","name":"G1","options":[{"value":"a","name":"A"}]},{"group":"g2","name":"G2","options":[{"value":"b","name":"B"}]}]}`
	for _, in := range []string{flat, grouped} {
		o, err := unmarshalConfigOption([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		s := o.(*SelectConfigOption)
		if (s.Options == nil) == (s.Groups == nil) {
			t.Errorf("%s: want exactly one of Options/Groups, got %+v", in, s)
		}
		want := []SelectOption{{Value: "a", Name: "A"}, {Value: "b", Name: "B"}}
		if d := cmp.Diff(want, s.Values()); d != "" {
			t.Errorf("Values (-want +got):\n%s", d)
		}
		if out := mustMarshal(t, s); !jsonEqual(out, []byte(in)) {
			t.Errorf("re-encoded %s\nwant %s", out, in)
		}
		if s.OptionID() != "m" {
			t.Errorf("OptionID %q", s.OptionID())
		}
	}
	// options must be an array; an option without it is invalid.
	for _, in := range []string{
		`{"type":"select","id":"m","name":"M","currentValue":"a"}`,
		`{"type":"select","id":"m","name":"M","currentValue":"a","options":{}}`,
		`{"type":"select","id":"m","name":"M","options":[]}`,
		`{"type":"boolean","id":"b","name":"B","currentValue":"true"}`,
		`{"type":"boolean","id":"b","currentValue":true}`,
		`{"id":"untyped","name":"U"}`,
	} {
		if o, err := unmarshalConfigOption([]byte(in)); err == nil {
			t.Errorf("%s: decoded as %#v", in, o)
		}
	}
	if got := mustMarshal(t, &SelectConfigOption{ID: "m", Name: "M", CurrentValue: "a"}); string(got) != `{"type":"select","id":"m","name":"M","currentValue":"a","options":[]}` {
		t.Errorf("empty select encoded as %s", got)
	}
}

func TestMCPServerDecode(t *testing.T) {
	tests := []struct {
		in   string
		want MCPServer
	}{
		{`{"name":"a","command":"/a","args":[],"env":[]}`, &MCPServerStdio{Name: "a", Command: "/a", Args: []string{}, Env: []EnvVariable{}}},
		{`{"type":null,"name":"a","command":"/a","args":[],"env":[]}`, &MCPServerStdio{Name: "a", Command: "/a", Args: []string{}, Env: []EnvVariable{}}},
		{`{"type":"","name":"a","command":"/a","args":[],"env":[]}`, &MCPServerStdio{Name: "a", Command: "/a", Args: []string{}, Env: []EnvVariable{}}},
		{`{"type":"stdio","name":"a","command":"/a","args":["x"],"env":[{"name":"K","value":"V"}]}`,
			&MCPServerStdio{Name: "a", Command: "/a", Args: []string{"x"}, Env: []EnvVariable{{Name: "K", Value: "V"}}}},
		{`{"type":"http","name":"h","url":"u","headers":[]}`, &MCPServerHTTP{Name: "h", URL: "u", Headers: []HTTPHeader{}}},
		{`{"type":"sse","name":"s","url":"u","headers":[{"name":"A","value":"B"}]}`, &MCPServerSSE{Name: "s", URL: "u", Headers: []HTTPHeader{{Name: "A", Value: "B"}}}},
		{`{"type":"acp","name":"x","serverId":"1"}`, &MCPServerACP{Name: "x", ServerID: "1"}},
		{`{"type":"ws","name":"x","url":"u"}`, &UnknownMCPServer{Type: "ws", Raw: json.RawMessage(`{"type":"ws","name":"x","url":"u"}`)}},
	}
	for _, in := range []string{`{"type":1,"name":"a","command":"/a","args":[],"env":[]}`, `[]`, `null`} {
		if got, err := unmarshalMCPServer([]byte(in)); err == nil {
			t.Errorf("%s: decoded as %#v, want an error", in, got)
		}
	}
	for _, tt := range tests {
		got, err := unmarshalMCPServer([]byte(tt.in))
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if d := cmp.Diff(tt.want, got, rawCmp); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.in, d)
		}
	}
	// Since schema 1.25.0 the list is strict: one malformed server fails
	// the request (the agent would act on it), with the server named; a
	// null list or null args read as empty.
	var r NewSessionRequest
	err := json.Unmarshal([]byte(`{"cwd":"/p","mcpServers":[{"name":"a","command":"/a"},{"name":"ok","command":"/b","args":[],"env":[]}]}`), &r)
	if err == nil || !strings.Contains(err.Error(), `"args"`) {
		t.Errorf("a server without args: %v, want an error naming args", err)
	}
	r = NewSessionRequest{}
	if err := json.Unmarshal([]byte(`{"cwd":"/p","mcpServers":null}`), &r); err != nil || r.MCPServers == nil || len(r.MCPServers) != 0 {
		t.Errorf("null mcpServers: %v, %#v; want an empty list", err, r.MCPServers)
	}
	if err := json.Unmarshal([]byte(`{"cwd":"/p"}`), &r); err == nil {
		t.Error("absent mcpServers decoded; want an error")
	}
	got, err := unmarshalMCPServer([]byte(`{"name":"a","command":"/a","args":null,"env":null}`))
	if s, ok := got.(*MCPServerStdio); err != nil || !ok || s.Args == nil || s.Env == nil {
		t.Errorf("null args and env: %#v, %v; want empty lists", got, err)
	}
}

func TestEmptyResultsAcceptNull(t *testing.T) {
	for _, in := range []string{`null`, `{}`, `{"_meta":null}`, `{"unknown":1}`} {
		for _, v := range []any{new(LoadSessionResponse), new(ResumeSessionResponse), new(AuthenticateResponse),
			new(LogoutResponse), new(CloseSessionResponse), new(DeleteSessionResponse), new(SetSessionModeResponse)} {
			if err := json.Unmarshal([]byte(in), v); err != nil {
				t.Errorf("%T from %s: %v", v, in, err)
			}
		}
	}
}

func TestPermissionDecode(t *testing.T) {
	var r RequestPermissionRequest
	in := `{"sessionId":"s","toolCall":{"toolCallId":"t","title":"rm","content":[{"type":"text","text":"bare"}]},"options":[{"optionId":"o","name":"Allow","kind":"allow_once"}]}`
	if err := json.Unmarshal([]byte(in), &r); err != nil {
		t.Fatal(err)
	}
	if r.ToolCall.ToolCallID != "t" || *r.ToolCall.Title != "rm" || len(r.ToolCall.Content) != 1 || len(r.Options) != 1 {
		t.Errorf("got %+v", r)
	}
	if out := mustMarshal(t, r); !jsonEqual(out, []byte(in)) {
		t.Errorf("re-encoded %s", out)
	}
	for _, in := range []string{
		`{"sessionId":"s","toolCall":{"toolCallId":"t"}}`,
		`{"sessionId":"s","toolCall":{},"options":[]}`,
		`{"sessionId":"s","options":[]}`,
		`{"sessionId":"s","toolCall":{"toolCallId":"t"},"options":[{"optionId":"o","name":"n"}]}`,
		`{"toolCall":{"toolCallId":"t"},"options":[]}`,
	} {
		if err := json.Unmarshal([]byte(in), new(RequestPermissionRequest)); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
	for _, in := range []string{`{"outcome":{"outcome":"selected"}}`, `{"outcome":{}}`, `{}`} {
		if err := json.Unmarshal([]byte(in), new(RequestPermissionResponse)); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
}

func TestElicitationDecode(t *testing.T) {
	for _, in := range []string{
		`{"message":"m","mode":"form","sessionId":"s"}`,
		`{"message":"m","mode":"form","sessionId":"s","requestedSchema":"x"}`,
		`{"message":"m","mode":"url","sessionId":"s","url":"https://x"}`,
		`{"mode":"url","sessionId":"s","url":"https://x","elicitationId":"e"}`,
		`{"message":"m","sessionId":"s"}`,
	} {
		if err := json.Unmarshal([]byte(in), new(CreateElicitationRequest)); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
	var r CreateElicitationRequest
	if err := json.Unmarshal([]byte(`{"message":"m","mode":"url","requestId":"r-1","url":"https://x","elicitationId":"e"}`), &r); err != nil {
		t.Fatal(err)
	}
	if string(r.RequestID) != `"r-1"` || r.URL != "https://x" || r.ElicitationID != "e" {
		t.Errorf("got %+v", r)
	}
}

// A field with no x-deserialize-default-on-error mark is strict even when it
// is optional: a value of the wrong type fails the decode, null reads as
// unset. ListSessionsRequest's cwd and cursor carry no mark in the schema.
func TestUnmarkedOptionalFieldsAreStrict(t *testing.T) {
	var r ListSessionsRequest
	if err := json.Unmarshal([]byte(`{"cwd":"/p","cursor":null}`), &r); err != nil || r.Cwd != "/p" || r.Cursor != "" {
		t.Errorf("got %+v, %v", r, err)
	}
	for _, in := range []string{`{"cwd":5}`, `{"cursor":{}}`} {
		err := json.Unmarshal([]byte(in), new(ListSessionsRequest))
		if err == nil || !strings.Contains(err.Error(), "list sessions request") {
			t.Errorf("%s: got error %v, want one naming the type", in, err)
		}
	}
}

// A required field whose value is malformed is reported with the field's
// name and the value's own error.
func TestRequiredFieldErrorNamesField(t *testing.T) {
	err := json.Unmarshal([]byte(`{"sessionId":"s","toolCall":{"toolCallId":"t"},"options":[{"optionId":"o","name":"n"}]}`),
		new(RequestPermissionRequest))
	if err == nil || !strings.Contains(err.Error(), `"options"`) || !strings.Contains(err.Error(), `"kind"`) {
		t.Errorf("got %v, want an error naming options and kind", err)
	}
}

// BenchmarkDecodeInitializeResponse decodes a full initialize result: nested
// capabilities, a list of auth methods (a union) and agent info.
func BenchmarkDecodeInitializeResponse(b *testing.B) {
	in := []byte(`{"protocolVersion":1,"agentCapabilities":{"loadSession":true,` +
		`"promptCapabilities":{"image":true,"audio":false,"embeddedContext":true},"mcpCapabilities":{"http":true,"sse":false},` +
		`"sessionCapabilities":{"list":{},"resume":{},"close":{}},"auth":{"logout":{}}},` +
		`"authMethods":[{"id":"a","name":"Agent","description":"log in"},{"type":"terminal","id":"t","name":"T","args":["--login"],"env":{"K":"V"}}],` +
		`"agentInfo":{"name":"agent","title":"Agent","version":"1.0.0"}}`)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		var r InitializeResponse
		if err := json.Unmarshal(in, &r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeNewSessionResponse decodes a session/new result with modes
// and config options.
func BenchmarkDecodeNewSessionResponse(b *testing.B) {
	in := []byte(`{"sessionId":"sess-1","modes":{"currentModeId":"ask","availableModes":[{"id":"ask","name":"Ask"},{"id":"code","name":"Code","description":"writes"}]},` +
		`"configOptions":[{"type":"select","id":"model","name":"Model","currentValue":"a","options":[{"value":"a","name":"A"},{"value":"b","name":"B"}]},` +
		`{"type":"boolean","id":"fast","name":"Fast","currentValue":true}]}`)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		var r NewSessionResponse
		if err := json.Unmarshal(in, &r); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzUnionRoundTrip decodes any input as each generated union that a
// client re-sends (auth methods, MCP servers, config options): a value that
// decodes must encode, and its encoding must decode to the same value, so
// what the client keeps and re-sends is what it read.
func FuzzUnionRoundTrip(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","name":"A"}`,
		`{"type":"terminal","id":"t","name":"T","args":["--login"],"env":{"K":"V"}}`,
		`{"type":"env_var","id":"e","name":"E","link":"l","vars":[{"name":"K","secret":true}]}`,
		`{"type":"oauth","id":"o","name":"O","url":"u"}`,
		`{"id":"c","name":"C","_meta":{"terminal-auth":{"command":"x","args":["a"]}}}`,
		`{"type":null,"name":"s","command":"/s","args":[],"env":[]}`,
		`{"type":"http","name":"h","url":"u","headers":[{"name":"A","value":"B"}]}`,
		`{"type":"ws","name":"w"}`,
		`{"type":"select","id":"m","name":"M","currentValue":"a","options":[{"value":"a","name":"A"}]}`,
		`{"type":"boolean","id":"b","name":"B","currentValue":true}`,
		`{"type":"slider","id":"s","name":"S"}`,
	} {
		f.Add([]byte(s))
	}
	decoders := []func([]byte) (any, error){
		func(b []byte) (any, error) { return unmarshalAuthMethod(b) },
		func(b []byte) (any, error) { return unmarshalMCPServer(b) },
		func(b []byte) (any, error) { return unmarshalConfigOption(b) },
	}
	// An empty list and an absent one encode alike (omitempty); raw JSON
	// has its own comparer.
	equateEmptyLists := cmp.FilterPath(func(p cmp.Path) bool {
		return p.Last().Type() != reflect.TypeFor[json.RawMessage]()
	}, cmpopts.EquateEmpty())
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, decode := range decoders {
			v, err := decode(in)
			if err != nil {
				continue
			}
			out, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("%T from %s does not encode: %v", v, in, err)
			}
			again, err := decode(out)
			if err != nil {
				t.Fatalf("%T from %s encodes as %s, which does not decode: %v", v, in, out, err)
			}
			if d := cmp.Diff(v, again, rawCmp, equateEmptyLists); d != "" {
				t.Fatalf("%s → %s changes the value (-first +again):\n%s", in, out, d)
			}
		}
	})
}
