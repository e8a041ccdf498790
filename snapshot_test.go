package acp

import (
	"context"
	"testing"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// WithoutLog drops the raw logs only: a session's state with updates
// outside turns (so Outside and History are filled) compares with a
// hand-written one, and the snapshot it was taken from keeps its logs.
func TestWithoutLog(t *testing.T) {
	c, a := connectRaw(t, nil, nil)
	s := newSessionRaw(t, c, a)
	a.update("s1", map[string]any{"sessionUpdate": "agent_message_chunk", "messageId": "m0", "content": map[string]any{"type": "text", "text": "hello"}})
	var st SessionState
	for range s.Changes(context.Background()) {
		if st = s.State(); len(st.Outside) == 1 {
			break
		}
	}
	want := SessionState{
		SessionID: "s1",
		Cwd:       "/tmp",
		History:   TurnState{Messages: []Message{{MessageID: "m0", Text: "hello"}}},
	}
	if diff := cmp.Diff(want, st.WithoutLog()); diff != "" {
		t.Errorf("SessionState.WithoutLog (-want +got):\n%s", diff)
	}
	if len(st.Outside) != 1 {
		t.Errorf("WithoutLog changed the snapshot it was called on: Outside %v", st.Outside)
	}

	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	p := a.expect(schema.MethodSessionPrompt)
	a.update("s1", chunk("done"))
	a.reply(p, map[string]any{"stopReason": "end_turn"})
	turn.Wait()
	ts := turn.State()
	wantTurn := TurnState{StopReason: schema.StopReasonEndTurn, Messages: []Message{{Text: "done"}}}
	if diff := cmp.Diff(wantTurn, ts); diff != "" {
		t.Errorf("TurnState (-want +got):\n%s", diff)
	}
}
