package acp

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// Rule: a v2 diff (changes, optional patch) maps onto DiffContent's
// Changes and Patch, through tool_call_content_chunk and tool_call_update
// alike: invalid changes are dropped, a malformed patch reads as none, a
// diff without changes is invalid (dropped from the list), a v1-shaped
// diff still reads as v1's; Unified gives the patch text; the item
// marshals back in v2's shape and reads back the same.
func TestV2DiffContent(t *testing.T) {
	_, a, _, turn, _ := startTurnV2(t, nil)
	patch := "diff --git /a.txt /a.txt\n--- /a.txt\n+++ /a.txt\n@@ -1 +1 @@\n-x\n+y\n"
	a.update("s1", state("running"))
	a.update("s1", map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "Edit"})
	a.update("s1", map[string]any{"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c1", "content": map[string]any{
		"type": "diff",
		"changes": []any{
			map[string]any{"operation": "modify", "path": "/a.txt", "fileType": "text", "mimeType": "text/plain"},
			map[string]any{"operation": "move", "oldPath": "/b.txt", "path": "/c.txt", "fileType": 7},
			map[string]any{"operation": "move", "path": "/no-old-path"}, // invalid: dropped
			map[string]any{"path": "/no-operation"},                     // invalid: dropped
			"not an object",                                             // invalid: dropped
			map[string]any{"operation": "_chmod", "_meta": map[string]any{"mode": "0755"}},
		},
		"patch": map[string]any{"format": "git_patch", "text": patch},
	}})
	a.update("s1", map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "c2", "content": []any{
		map[string]any{"type": "diff", "changes": []any{map[string]any{"operation": "delete", "path": "/d.txt"}}, "patch": "malformed"},
		map[string]any{"type": "diff", "patch": map[string]any{"format": "git_patch", "text": "x"}}, // no changes: dropped
		map[string]any{"type": "diff", "path": "/v1.txt", "newText": "v1"},
	}})
	syncRaw(t, a, 900)
	tcs := turn.State().ToolCalls
	if len(tcs) != 2 || len(tcs[0].Content) != 1 || len(tcs[1].Content) != 2 {
		t.Fatalf("tool calls %+v", tcs)
	}
	d, ok := tcs[0].Content[0].(*schema.DiffContent)
	if !ok {
		t.Fatalf("content %T, want *DiffContent", tcs[0].Content[0])
	}
	want := &schema.DiffContent{
		Path: "/a.txt",
		Changes: []schema.DiffChange{
			{Operation: "modify", Path: "/a.txt", FileType: "text", MimeType: "text/plain"},
			{Operation: "move", OldPath: "/b.txt", Path: "/c.txt"},
			{Operation: "_chmod", Meta: json.RawMessage(`{"mode":"0755"}`)},
		},
		Patch: &schema.DiffPatch{Format: "git_patch", Text: patch},
	}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Fatalf("diff (-want +got):\n%s", diff)
	}
	if d.Unified(3) != patch {
		t.Errorf("Unified = %q", d.Unified(3))
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(`newText`)) {
		t.Errorf("a v2 diff marshals v1 fields: %s", b)
	}
	// Back through the v2 decoder, as the content of an upsert.
	n, err := schema.DecodeNotification(2, []byte(`{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"x","content":[`+string(b)+`]}}`))
	if err != nil {
		t.Fatal(err)
	}
	up, ok := n.Update.(*schema.ToolCallUpdate)
	if !ok || len(up.Content) != 1 {
		t.Fatalf("decoded %#v", n.Update)
	}
	back := up.Content[0]
	if diff := cmp.Diff(d, back); diff != "" {
		t.Errorf("round trip of %s (-want +got):\n%s", b, diff)
	}
	del, ok := tcs[1].Content[0].(*schema.DiffContent)
	if !ok || del.Patch != nil || len(del.Changes) != 1 || del.Changes[0].Operation != "delete" || del.Path != "/d.txt" || del.Unified(3) != "" {
		t.Errorf("delete without patch %#v", tcs[1].Content[0])
	}
	if v1, ok := tcs[1].Content[1].(*schema.DiffContent); !ok || v1.Changes != nil || v1.Path != "/v1.txt" || v1.NewText != "v1" {
		t.Errorf("v1-shaped diff %#v", tcs[1].Content[1])
	}
}
