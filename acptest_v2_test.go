package acp_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// acptest scripts a v2 agent with the same scenario API (Options.Version
// 2): text, a permission round, cancel and load, driven by the same client
// code as v1.
func TestAcptestScriptsV2Agent(t *testing.T) {
	ctx := context.Background()
	permAsked := make(chan struct{}, 1)
	a := acptest.New(&acptest.Options{Version: 2, OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
		switch t.PromptText() {
		case "hello":
			t.Say("Hello, ")
			t.Say("world")
			return "", nil
		case "permission":
			t.ToolCall(acptest.ToolCallSpec{ID: "c1", Title: "Edit", Kind: schema.ToolKindEdit})
			out, err := t.RequestPermission("c1", nil)
			if err != nil {
				return "", err
			}
			t.Say(string(out))
			return "", nil
		case "cancel":
			permAsked <- struct{}{}
			<-t.Cancelled()
			return "", nil
		case "fail":
			return "", errors.New("boom")
		}
		return "", nil
	}})
	defer a.Close()
	fromAgent, toAgent := a.Pipe()
	c, err := acp.Connect(ctx, &acp.StreamTransport{Reader: fromAgent, Writer: toAgent}, &acp.ClientOptions{ProtocolVersion: 2, Permission: acp.AllowAll})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.InitializeResponse().ProtocolVersion != 2 {
		t.Fatalf("negotiated %d", c.InitializeResponse().ProtocolVersion)
	}
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	run := func(text string, cancel bool) (*acp.Turn, schema.StopReason, error) {
		turn, err := s.Prompt(ctx, schema.Text(text))
		if err != nil {
			t.Fatal(err)
		}
		if cancel {
			<-permAsked
			turn.Cancel()
		}
		stop, err := turn.Wait()
		return turn, stop, err
	}
	turn, stop, err := run("hello", false)
	if err != nil || stop != schema.StopReasonEndTurn || turn.State().Messages[0].Text != "Hello, world" || turn.MessageID() != "t1-u" {
		t.Fatalf("hello: %q %v %+v", stop, err, turn.State().Messages)
	}
	turn, stop, err = run("permission", false)
	if err != nil || stop != schema.StopReasonEndTurn || !strings.Contains(turn.State().Messages[0].Text, "selected") {
		t.Fatalf("permission: %q %v %+v", stop, err, turn.State().Messages)
	}
	if tc := turn.State().ToolCalls; len(tc) != 1 || tc[0].Unannounced || tc[0].Title != "Edit" {
		t.Fatalf("tool calls %+v", tc)
	}
	if _, stop, err = run("cancel", true); err != nil || stop != schema.StopReasonCancelled {
		t.Fatalf("cancel: %q %v", stop, err)
	}
	turn, stop, err = run("fail", false)
	if stop != schema.StopReasonError || turn.State().AgentError == nil {
		t.Fatalf("fail: %q %v %+v", stop, err, turn.State().AgentError)
	}
	s.Release()
	loaded, err := c.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: s.ID()})
	if err != nil {
		t.Fatal(err)
	}
	if h := loaded.State().History; len(h.UserMessages) != 4 || h.UserMessages[0].Text != "hello" || h.Messages[0].Text != "Hello, world" {
		t.Fatalf("history %+v", h)
	}

	// A v1 client offering only 1 gets -32022 from a v2 agent.
	fromAgent, toAgent = a.Pipe()
	if _, err := acp.Connect(ctx, &acp.StreamTransport{Reader: fromAgent, Writer: toAgent}, nil); !errors.Is(err, schema.ErrUnsupportedVersion) {
		t.Fatalf("v1 offer to a v2 agent: %v", err)
	}
}
