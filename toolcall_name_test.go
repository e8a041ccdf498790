package acp

import (
	"encoding/json"
	"github.com/acpclient/acp/schema"
	"testing"
)

// The unstable tool call name is kept on the update and folded into the
// tool call; an update without it leaves it alone, a malformed one reads
// as absent.
func TestToolCallNameKept(t *testing.T) {
	var f fold
	for _, line := range []string{
		`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Read a.go","name":"read_file"}`,
		`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}`,
		`{"sessionUpdate":"tool_call_update","toolCallId":"t1","name":7}`,
		`{"sessionUpdate":"tool_call_update","toolCallId":"t2","name":"grep"}`,
	} {
		u, err := testDecodeUpdate([]byte(line))
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		f.apply(u)
	}
	st := f.state()
	if len(st.ToolCalls) != 2 || st.ToolCalls[0].Name != "read_file" || st.ToolCalls[1].Name != "grep" {
		t.Fatalf("tool calls = %+v", st.ToolCalls)
	}
	b, _ := json.Marshal(&schema.ToolCall{ToolCallID: "t", Title: "x", Name: "n"})
	var back schema.ToolCall
	if err := json.Unmarshal(b, &back); err != nil || back.Name != "n" {
		t.Fatalf("round trip: %s → %+v, %v", b, back, err)
	}
}
