package acptest_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// A script written with acp's typed constants and content, and the typed
// permission request, reaches the client as the same typed values.
func TestTypedToolCallsAndPermission(t *testing.T) {
	old := "a\n"
	outcomes := make(chan schema.PermissionOutcome, 1)
	c, _ := acptest.Connect(t, &acptest.Options{
		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			t.ToolCall(acptest.ToolCallSpec{ID: "e1", Title: "Edit a", Kind: schema.ToolKindEdit, Status: schema.ToolCallStatusInProgress,
				Content: []any{
					acptest.ToolContent(acptest.Text("editing")),
					&schema.DiffContent{Path: "/w/a", OldText: &old, NewText: "b\n"},
					acptest.Diff("/w/new", nil, "n\n"),
				},
				Locations: []any{schema.ToolCallLocation{Path: "/w/a"}}})
			out, err := t.AskPermission(acptest.ToolCallSpec{ID: "e1"},
				schema.PermissionOption{OptionID: "yes", Name: "Yes", Kind: schema.PermissionAllowAlways},
				schema.PermissionOption{OptionID: "no", Name: "No", Kind: schema.PermissionRejectOnce})
			if err != nil {
				return "", err
			}
			outcomes <- out
			t.UpdateToolCall(acptest.ToolCallSpec{ID: "e1", Status: schema.ToolCallStatusCompleted})
			return schema.StopReasonMaxTokens, nil
		},
	}, &acp.ClientOptions{Permission: acp.AllowAll})
	s, err := c.NewSession(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	stop, err := turn.Wait()
	if err != nil || stop != schema.StopReasonMaxTokens {
		t.Fatalf("Wait = %v, %v; want max_tokens", stop, err)
	}
	if out := <-outcomes; out.Kind != schema.OutcomeSelected || out.OptionID != "yes" {
		t.Errorf("AskPermission = %+v, want selected yes", out)
	}
	tc := turn.State().ToolCalls[0]
	if tc.Kind != schema.ToolKindEdit || tc.Status != schema.ToolCallStatusCompleted || len(tc.Content) != 3 || len(tc.Locations) != 1 {
		t.Fatalf("tool call = %+v", tc)
	}
	if got := schema.TextOf(tc.Content[0].(*schema.ToolContent).Content); got != "editing" {
		t.Errorf("content[0] text = %q", got)
	}
	if d := tc.Content[1].(*schema.DiffContent); d.OldText == nil || *d.OldText != old || d.NewText != "b\n" {
		t.Errorf("content[1] = %+v", d)
	}
	if d := tc.Content[2].(*schema.DiffContent); d.OldText != nil || d.Path != "/w/new" {
		t.Errorf("content[2] = %+v", d)
	}
}

// AskPermission with no options offers DefaultPermissionOptions, and the
// client's cancelled outcome comes back typed.
func TestAskPermissionDefaults(t *testing.T) {
	got := make(chan schema.PermissionOutcome, 1)
	var offered []string
	c, _ := acptest.Connect(t, &acptest.Options{
		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			out, err := t.AskPermission(acptest.ToolCallSpec{ID: "x", Title: "X"})
			if err != nil {
				return "", err
			}
			got <- out
			return "", nil
		},
	}, &acp.ClientOptions{Permission: func(_ context.Context, r *acp.PermissionRequest) (schema.PermissionOutcome, error) {
		for _, o := range r.Options {
			offered = append(offered, o.OptionID+":"+string(o.Kind))
		}
		return acp.CancelledOutcome(), nil
	}})
	s, err := c.NewSession(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	if out := <-got; out.Kind != schema.OutcomeCancelled {
		t.Errorf("outcome = %+v, want cancelled", out)
	}
	if len(offered) != 2 || offered[0] != "allow:allow_once" || offered[1] != "reject:reject_once" {
		t.Errorf("offered %v, want the default options", offered)
	}
}

// A location made by Location is the one the client's state holds, so a
// test writes the locations it expects with the same call that sent them:
// a line, no line, and line 0 (which the schema allows).
func TestLocationIsTheStateLocation(t *testing.T) {
	three, zero := uint32(3), uint32(0)
	locs := []schema.ToolCallLocation{acptest.Location("/w/a.go", &three), acptest.Location("/w", nil), acptest.Location("/w/b.go", &zero)}
	c, _ := acptest.Connect(t, &acptest.Options{
		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			t.ToolCall(acptest.ToolCallSpec{ID: "r1", Title: "Read", Kind: schema.ToolKindRead, Status: schema.ToolCallStatusCompleted,
				Locations: []any{locs[0], locs[1], locs[2]}})
			return schema.StopReasonEndTurn, nil
		},
	}, nil)
	s, err := c.NewSession(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(locs, turn.State().ToolCalls[0].Locations); diff != "" {
		t.Errorf("locations (-sent +state):\n%s", diff)
	}
}
