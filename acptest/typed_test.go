package acptest_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
)

// A script written with acp's typed constants and content, and the typed
// permission request, reaches the client as the same typed values.
func TestTypedToolCallsAndPermission(t *testing.T) {
	old := "a\n"
	outcomes := make(chan acp.PermissionOutcome, 1)
	c, _ := acptest.Connect(t, &acptest.Options{
		OnPrompt: func(t *acptest.Turn) (acptest.StopReason, error) {
			t.ToolCall(acptest.ToolCall{ID: "e1", Title: "Edit a", Kind: acp.ToolKindEdit, Status: acp.ToolCallStatusInProgress,
				Content: []any{
					acptest.ToolContent(acptest.Text("editing")),
					&acp.DiffContent{Path: "/w/a", OldText: &old, NewText: "b\n"},
					acptest.Diff("/w/new", nil, "n\n"),
				},
				Locations: []any{acp.ToolCallLocation{Path: "/w/a"}}})
			out, err := t.AskPermission(acptest.ToolCall{ID: "e1"},
				acptest.PermissionOption{OptionID: "yes", Name: "Yes", Kind: acp.PermissionAllowAlways},
				acptest.PermissionOption{OptionID: "no", Name: "No", Kind: acp.PermissionRejectOnce})
			if err != nil {
				return "", err
			}
			outcomes <- out
			t.UpdateToolCall(acptest.ToolCall{ID: "e1", Status: acp.ToolCallStatusCompleted})
			return acptest.StopReasonMaxTokens, nil
		},
	}, &acp.ClientOptions{Permission: acp.AllowAll})
	s, err := c.NewSession(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(context.Background(), acp.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	stop, err := turn.Wait()
	if err != nil || stop != acp.StopReasonMaxTokens {
		t.Fatalf("Wait = %v, %v; want max_tokens", stop, err)
	}
	if out := <-outcomes; out.Outcome != acp.OutcomeSelected || out.OptionID != "yes" {
		t.Errorf("AskPermission = %+v, want selected yes", out)
	}
	tc := turn.State().ToolCalls[0]
	if tc.Kind != acp.ToolKindEdit || tc.Status != acp.ToolCallStatusCompleted || len(tc.Content) != 3 || len(tc.Locations) != 1 {
		t.Fatalf("tool call = %+v", tc)
	}
	if got := acp.TextOf(tc.Content[0].(*acp.ToolContent).Content); got != "editing" {
		t.Errorf("content[0] text = %q", got)
	}
	if d := tc.Content[1].(*acp.DiffContent); d.OldText == nil || *d.OldText != old || d.NewText != "b\n" {
		t.Errorf("content[1] = %+v", d)
	}
	if d := tc.Content[2].(*acp.DiffContent); d.OldText != nil || d.Path != "/w/new" {
		t.Errorf("content[2] = %+v", d)
	}
}

// AskPermission with no options offers DefaultPermissionOptions, and the
// client's cancelled outcome comes back typed.
func TestAskPermissionDefaults(t *testing.T) {
	got := make(chan acp.PermissionOutcome, 1)
	var offered []string
	c, _ := acptest.Connect(t, &acptest.Options{
		OnPrompt: func(t *acptest.Turn) (acptest.StopReason, error) {
			out, err := t.AskPermission(acptest.ToolCall{ID: "x", Title: "X"})
			if err != nil {
				return "", err
			}
			got <- out
			return "", nil
		},
	}, &acp.ClientOptions{Permission: func(_ context.Context, r *acp.PermissionRequest) (acp.PermissionOutcome, error) {
		for _, o := range r.Options {
			offered = append(offered, o.OptionID+":"+string(o.Kind))
		}
		return acp.CancelledOutcome(), nil
	}})
	s, err := c.NewSession(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(context.Background(), acp.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	if out := <-got; out.Outcome != acp.OutcomeCancelled {
		t.Errorf("outcome = %+v, want cancelled", out)
	}
	if len(offered) != 2 || offered[0] != "allow:allow_once" || offered[1] != "reject:reject_once" {
		t.Errorf("offered %v, want the default options", offered)
	}
}

// The deprecated builders send what their replacements send.
func TestDeprecatedBuilders(t *testing.T) {
	old := "o"
	for _, tc := range []struct{ old, new any }{
		{acptest.TextBlock("x"), acptest.Text("x")},
		{acptest.TextContent("x"), acptest.ToolContent(acptest.Text("x"))},
		{acptest.DiffContent("/p", &old, "n"), acptest.Diff("/p", &old, "n")},
		{acptest.DiffContent("/p", nil, "n"), acptest.Diff("/p", nil, "n")},
	} {
		if !reflect.DeepEqual(tc.old, tc.new) {
			t.Errorf("%v != %v", tc.old, tc.new)
		}
	}
}
