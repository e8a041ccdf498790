package acp

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/acpclient/acp/schema"
)

// Tests of the costs updateCost computes without reflection: each must be
// what heapCost, the reference, finds by walking the value.

func TestToolCallUpdateCostIsHeapCost(t *testing.T) {
	s := func(v string) *string { return &v }
	kind, status, yes := schema.ToolKindEdit, schema.ToolCallStatusInProgress, true
	for _, u := range []*schema.ToolCallUpdate{
		{},
		{ToolCallID: "c1"},
		{ToolCallID: "c1", Title: s("Edit a.go"), Status: &status},
		{ToolCallID: "toolu_01ABCDEFGHIJKLMNOPQRSTUVWXYZ", Title: s(""), Name: s("edit"), Kind: &kind, Status: &status, Cancellable: &yes},
		{ToolCallID: "c1", RawInput: json.RawMessage(`{"path":"/a"}`), RawOutput: make(json.RawMessage, 3, 40), Meta: json.RawMessage{}},
	} {
		if got, want := updateCost(u), heapCost(reflect.ValueOf(u)); got != want {
			t.Errorf("updateCost(%+v) = %d, heapCost %d", u, got, want)
		}
	}
	n, err := schema.DecodeNotification(1, []byte(`{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress","title":"Edit a.go","rawOutput":{"bytes":31}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := updateCost(n.Update), heapCost(reflect.ValueOf(n.Update)); got != want {
		t.Errorf("updateCost of a decoded update = %d, heapCost %d", got, want)
	}
}
