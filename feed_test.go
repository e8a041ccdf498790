package acp

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// randomStep returns one random thing an agent does in a turn, over a small
// set of ids so that messages continue and tool calls are updated.
func randomStep(r *rand.Rand) map[string]any {
	text := func() map[string]any {
		return map[string]any{"type": "text", "text": fmt.Sprint("w", r.IntN(100), " ")}
	}
	id := func(prefix string, n int) string { return fmt.Sprint(prefix, r.IntN(n)) }
	statuses := []string{"pending", "in_progress", "completed", "failed"}
	switch r.IntN(17) {
	case 0, 1:
		u := map[string]any{"sessionUpdate": "agent_message_chunk", "content": text()}
		if r.IntN(2) == 0 {
			u["messageId"] = id("m", 3)
		}
		return u
	case 2:
		u := map[string]any{"sessionUpdate": "agent_thought_chunk", "content": text()}
		if r.IntN(2) == 0 {
			u["messageId"] = id("t", 2)
		}
		return u
	case 3:
		return map[string]any{"sessionUpdate": "user_message_chunk", "content": text()}
	case 4:
		u := map[string]any{"sessionUpdate": "tool_call", "toolCallId": id("tc", 4), "title": id("Tool ", 10), "kind": "edit"}
		if r.IntN(2) == 0 {
			u["name"] = id("tool_", 3)
		}
		if r.IntN(2) == 0 {
			u["status"] = statuses[r.IntN(len(statuses))]
		}
		return u
	case 5, 6:
		u := map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": id("tc", 5)}
		if r.IntN(2) == 0 {
			u["status"] = statuses[r.IntN(len(statuses))]
		}
		if r.IntN(3) == 0 {
			u["title"] = id("Retitled ", 10)
		}
		if r.IntN(3) == 0 {
			u["content"] = []any{map[string]any{"type": "content", "content": text()}}
		}
		return u
	case 7:
		return map[string]any{"sessionUpdate": "plan", "entries": []any{map[string]any{"content": id("step ", 5), "priority": "high", "status": "pending"}}}
	// The unstable kinds.
	case 9:
		if r.IntN(2) == 0 {
			return map[string]any{"sessionUpdate": "plan_update", "plan": map[string]any{"type": "markdown", "planId": id("p", 2), "content": id("# plan ", 5)}}
		}
		return map[string]any{"sessionUpdate": "plan_update", "plan": map[string]any{"type": "items", "planId": id("p", 2),
			"entries": []any{map[string]any{"content": id("step ", 5), "priority": "low", "status": "pending"}}}}
	case 10:
		return map[string]any{"sessionUpdate": "plan_removed", "planId": id("p", 2)}
	case 11:
		return map[string]any{"sessionUpdate": "notice", "severity": "warning", "title": id("notice ", 5)}
	case 12:
		u := map[string]any{"sessionUpdate": "compaction_update", "compactionId": id("c", 2), "status": statuses[r.IntN(len(statuses))]}
		if r.IntN(2) == 0 {
			u["summary"] = []any{text()}
		}
		return u
	case 13:
		return map[string]any{"sessionUpdate": "compaction_summary_chunk", "compactionId": id("c", 2), "content": text()}
	// Child sessions and messages between sessions (the client sets
	// ClientOptions.Subagents).
	case 14:
		u := map[string]any{"sessionUpdate": "subagent_update", "sessionId": id("k", 3)}
		for _, f := range []string{"title", "description"} {
			switch r.IntN(3) {
			case 0:
				u[f] = id(f+" ", 5)
			case 1:
				u[f] = nil
			}
		}
		switch r.IntN(4) {
		case 0:
			u["state"] = map[string]any{"state": "running"}
		case 1:
			u["state"] = map[string]any{"state": "idle", "stopReason": "end_turn"}
		case 2:
			u["state"] = nil
		}
		if r.IntN(3) == 0 {
			u["_meta"] = map[string]any{id("key", 3): r.IntN(10)}
		}
		return u
	case 15:
		u := map[string]any{"sessionUpdate": "session_message", "messageId": id("sm", 3)}
		if r.IntN(2) == 0 {
			u["senderSessionId"] = "s1"
		}
		if r.IntN(3) == 0 {
			u["recipientMessageId"] = nil
		}
		switch r.IntN(3) {
		case 0:
			u["content"] = []any{text()}
		case 1:
			u["content"] = []any{}
		}
		return u
	case 16:
		return map[string]any{"sessionUpdate": "session_message_chunk", "messageId": id("sm", 3), "content": text()}
	default:
		return map[string]any{"sessionUpdate": "current_mode_update", "currentModeId": id("mode", 3)}
	}
}

// foldEvents folds events with a TurnFold and checks, on the way, that each
// event's ToolCall is the tool call as merged after it.
func foldEvents(t *testing.T, events []Event) TurnState {
	t.Helper()
	var tf TurnFold
	for i, ev := range events {
		if ev.Seq != uint64(i+1) && ev.Kind != EventReleased {
			t.Fatalf("event %d has seq %d", i, ev.Seq)
		}
		tf.Apply(ev)
		if ev.ToolCall != nil {
			got, ok := tf.f.tools.get(ev.ToolCall.ToolCallID)
			if !ok || !cmp.Equal(*got, *ev.ToolCall) {
				t.Fatalf("event %d: ToolCall %+v, folded %+v", ev.Seq, *ev.ToolCall, got)
			}
		}
	}
	return tf.State()
}

// The feed is the state: for random scripts of updates, permission
// requests (answered or not) and a cancel at a random point, folding the
// turn's events — read live while the turn runs, or replayed after it
// ended — reproduces State exactly, Updates included.
func TestFeedReproducesState(t *testing.T) {
	for seed := range 60 {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(seed), 7))
			opts := &ClientOptions{Subagents: true, Restart: &RestartPolicy{after: noBackoff}, Permission: func(ctx context.Context, req *PermissionRequest) (schema.PermissionOutcome, error) {
				if r := req.Seq % 3; r == 0 {
					<-ctx.Done() // left pending until the cancel, or the end
					return CancelledOutcome(), nil
				}
				return AllowAll(ctx, req)
			}}
			_, a, _, turn, p := startTurn(t, opts)
			live := make(chan []Event, 1)
			go func() {
				var evs []Event
				for ev := range turn.Events(context.Background(), 0) {
					evs = append(evs, ev)
				}
				live <- evs
			}()
			steps := 20 + r.IntN(60)
			cancelAt, restartAt := -1, -1
			if r.IntN(2) == 0 {
				cancelAt = r.IntN(steps)
			}
			if r.IntN(3) == 0 {
				restartAt = r.IntN(steps)
			}
			restarted := false
			for i := range steps {
				if i == cancelAt {
					turn.Cancel()
				}
				if i == restartAt {
					// The agent dies mid-turn: the turn ends there with
					// ErrAgentRestarted and what it had folded.
					a = a.restart(nil)
					a.reply(expectCall(a, "session/resume"), map[string]any{})
					restarted = true
					break
				}
				if r.IntN(8) == 0 {
					params := permParams(fmt.Sprint("tc", r.IntN(5)), "allow_once", "reject_once")
					tc := params["toolCall"].(map[string]any)
					if r.IntN(2) == 0 {
						tc["title"] = "Allow this?"
					}
					if r.IntN(2) == 0 {
						tc["status"] = "pending"
					}
					a.send(map[string]any{"jsonrpc": "2.0", "id": 1000 + i, "method": "session/request_permission", "params": params})
					continue
				}
				a.update("s1", randomStep(r))
			}
			if !restarted {
				a.reply(p, map[string]any{"stopReason": "end_turn"})
			}
			if _, err := turn.Wait(); restarted && !errors.Is(err, ErrAgentRestarted) {
				t.Fatalf("the turn the agent died in: %v", err)
			}
			want := turn.State()
			if diff := cmp.Diff(want, foldEvents(t, <-live)); diff != "" {
				t.Errorf("live events fold differently from State (-State +fold):\n%s", diff)
			}
			var replay []Event
			for ev := range turn.Events(context.Background(), 0) {
				replay = append(replay, ev)
			}
			if diff := cmp.Diff(want, foldEvents(t, replay)); diff != "" {
				t.Errorf("replayed events fold differently from State (-State +fold):\n%s", diff)
			}
			if last := replay[len(replay)-1]; last.Kind != EventEnd || last.End.StopReason != want.StopReason {
				t.Errorf("last event %+v", last)
			}
		})
	}
}

// The example: a permission request retitles the tool call and a
// cancel marks it, and neither used to be an update — a renderer fed by the
// stream showed "Edit a.go — pending" while State said cancelled. Now both
// are events, the tool keeps its title, and the request says where it
// stands in the stream.
func TestFeedCarriesPermissionPatchAndCancelMarks(t *testing.T) {
	reqs := make(chan *PermissionRequest, 1)
	opts := &ClientOptions{Permission: func(ctx context.Context, req *PermissionRequest) (schema.PermissionOutcome, error) {
		reqs <- req
		<-ctx.Done()
		return CancelledOutcome(), nil
	}}
	_, a, _, turn, p := startTurn(t, opts)
	a.update("s1", chunk("editing"))
	a.update("s1", map[string]any{"sessionUpdate": "tool_call", "toolCallId": "e1", "title": "Edit a.go", "kind": "edit", "status": "pending"})
	params := permParams("e1", "allow_once")
	params["toolCall"] = map[string]any{"toolCallId": "e1", "title": "Allow editing a.go?",
		"content": []any{map[string]any{"type": "diff", "path": "/w/a.go", "newText": "x"}}}
	a.send(map[string]any{"jsonrpc": "2.0", "id": 5, "method": "session/request_permission", "params": params})
	req := <-reqs
	if req.Turn != turn || req.Title != "Allow editing a.go?" || req.ToolCall.Title != "Edit a.go" {
		t.Fatalf("request: turn %p (want %p), title %q, tool call %+v", req.Turn, turn, req.Title, req.ToolCall)
	}
	var upTo []Event
	for ev := range turn.Events(context.Background(), 0) {
		upTo = append(upTo, ev)
		if ev.Seq == req.Seq {
			break
		}
	}
	last := upTo[len(upTo)-1]
	if last.Origin != OriginPermission || last.ToolCall == nil || len(last.ToolCall.Content) != 1 || last.ToolCall.Title != "Edit a.go" {
		t.Fatalf("event %d (the request's Seq) is %+v", req.Seq, last)
	}
	if upTo[len(upTo)-2].Update.UpdateKind() != "tool_call" {
		t.Errorf("the tool call's card is not before the request in the feed")
	}

	turn.Cancel()
	a.reply(p, map[string]any{"stopReason": "cancelled"})
	turn.Wait()
	var evs []Event
	for ev := range turn.Events(context.Background(), 0) {
		evs = append(evs, ev)
	}
	var kinds []string
	for _, ev := range evs {
		k := string(ev.Kind)
		if ev.Origin != "" {
			k += "/" + string(ev.Origin)
		}
		kinds = append(kinds, k)
	}
	want := []string{"update/agent", "update/agent", "update/permission", "cancel", "update/local", "end"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	mark := evs[4]
	if mark.ToolCall.Status != schema.ToolCallStatusCancelled || mark.ToolCall.Title != "Edit a.go" {
		t.Errorf("the cancel mark's tool call is %+v", mark.ToolCall)
	}
	if diff := cmp.Diff(turn.State(), foldEvents(t, evs)); diff != "" {
		t.Errorf("fold differs from State (-State +fold):\n%s", diff)
	}
}

// Resuming: Snapshot's seq is where Events picks up; events a policy
// released are replaced by one EventReleased holding the state.
func TestEventsResumeAndReleased(t *testing.T) {
	c, a := connectRaw(t, &ClientOptions{Limits: Limits{TurnLogs: -1}}, nil)
	s := newSessionRaw(t, c, a)
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	p := a.expect("session/prompt")
	a.update("s1", chunk("one "))
	a.update("s1", map[string]any{"sessionUpdate": "tool_call", "toolCallId": "x", "title": "Read"})
	waitUpdates(t, turn, 2)
	st, seq := turn.Snapshot()
	if seq != 2 {
		t.Fatalf("snapshot seq %d after 2 updates", seq)
	}
	next := make(chan Event, 10)
	go func() {
		for ev := range turn.Events(context.Background(), seq) {
			next <- ev
		}
		close(next)
	}()
	a.update("s1", chunk("two"))
	if ev := <-next; ev.Seq != 3 || ev.Update.(*schema.AgentMessageChunk).Content.(*schema.TextContent).Text != "two" {
		t.Fatalf("resumed at %+v", ev)
	}
	a.reply(p, map[string]any{"stopReason": "end_turn"})
	if ev := <-next; ev.Kind != EventEnd {
		t.Fatalf("then %+v", ev)
	}
	if _, ok := <-next; ok {
		t.Fatal("an event after the end")
	}
	// TurnLogs < 0: the log went with the end.
	var tf TurnFold
	tf.Apply(Event{Seq: seq, Kind: EventReleased, State: &st})
	var got []Event
	for ev := range turn.Events(context.Background(), seq) {
		got = append(got, ev)
		tf.Apply(ev)
	}
	if len(got) != 1 || got[0].Kind != EventReleased || got[0].Seq != 4 {
		t.Fatalf("resuming from a released seq gave %+v", got)
	}
	if diff := cmp.Diff(turn.State(), tf.State()); diff != "" {
		t.Errorf("the released event's state (-State +event):\n%s", diff)
	}
	if textOf(tf.State()) != "one two" {
		t.Errorf("text %q", textOf(tf.State()))
	}
	for ev := range turn.Events(context.Background(), 4) {
		t.Errorf("resuming after the last event yielded %+v", ev)
	}
	// Release drops the fold too; the outcome stays.
	turn.Release()
	if st := turn.State(); len(st.Messages) != 0 || st.StopReason != schema.StopReasonEndTurn {
		t.Errorf("released turn: %+v", st)
	}
	if len(s.Turns()) != 0 || s.State().Turns != 1 {
		t.Errorf("Turns() %d, State().Turns %d", len(s.Turns()), s.State().Turns)
	}
}

// Events stops when its ctx ends, even while the turn runs.
func TestEventsStopsWithContext(t *testing.T) {
	_, a, _, turn, p := startTurn(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		n := 0
		for range turn.Events(ctx, 0) {
			n++
		}
		done <- n
	}()
	a.update("s1", chunk("x"))
	waitUpdates(t, turn, 1)
	cancel()
	<-done
	a.reply(p, map[string]any{"stopReason": "end_turn"})
	turn.Wait()
}

// WaitFor returns the first matching event (replayed or new), ErrTurnEnded
// when the turn ends without one, and ctx's error.
func TestWaitFor(t *testing.T) {
	_, a, s, turn, p := startTurn(t, nil)
	if s.CurrentTurn() != turn {
		t.Error("CurrentTurn is not the running turn")
	}
	finished := func(id string) func(Event) bool {
		return func(ev Event) bool {
			return ev.ToolCall != nil && ev.ToolCall.ToolCallID == id && ev.ToolCall.Finished()
		}
	}
	got := make(chan Event, 1)
	go func() {
		ev, err := turn.WaitFor(context.Background(), finished("x"))
		if err != nil {
			t.Error(err)
		}
		got <- ev
	}()
	a.update("s1", toolCall("x", "pending"))
	a.update("s1", map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "x", "status": "in_progress"})
	a.update("s1", map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "x", "status": "completed"})
	if ev := <-got; ev.Seq != 3 || ev.ToolCall.Status != schema.ToolCallStatusCompleted {
		t.Errorf("WaitFor returned %+v", ev)
	}
	// Already happened: found in the replay.
	if ev, err := turn.WaitFor(context.Background(), finished("x")); err != nil || ev.Seq != 3 {
		t.Errorf("WaitFor on the past: %+v %v", ev, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if _, err := turn.WaitFor(ctx, finished("never")); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitFor with an ended ctx: %v", err)
	}
	if tc, ok := turn.ToolCall("x"); !ok || tc.Status != schema.ToolCallStatusCompleted {
		t.Errorf("ToolCall(x) = %+v, %v", tc, ok)
	}
	if _, ok := turn.ToolCall("nope"); ok {
		t.Error("ToolCall of an unknown id")
	}
	a.update("s1", map[string]any{"sessionUpdate": "agent_message_chunk", "messageId": "a", "content": map[string]any{"type": "text", "text": "first"}})
	a.update("s1", map[string]any{"sessionUpdate": "agent_message_chunk", "messageId": "b", "content": map[string]any{"type": "text", "text": "sec"}})
	a.update("s1", map[string]any{"sessionUpdate": "agent_message_chunk", "messageId": "b", "content": map[string]any{"type": "text", "text": "ond"}})
	waitUpdates(t, turn, 6)
	if m, ok := turn.LastMessage(); !ok || m.MessageID != "b" || m.Text != "second" {
		t.Errorf("LastMessage = %+v, %v", m, ok)
	}
	a.reply(p, map[string]any{"stopReason": "end_turn"})
	if _, err := turn.WaitFor(context.Background(), finished("never")); !errors.Is(err, ErrTurnEnded) {
		t.Errorf("WaitFor past the end: %v, want ErrTurnEnded", err)
	}
	if s.CurrentTurn() != nil {
		t.Error("CurrentTurn after the end")
	}
}

// A UI that renders every tool-call change from the events allocates no
// more than twice what following the bare updates does (a State per update
// allocated over 20× that).
func TestUILoopAllocations(t *testing.T) {
	base := uiLoopAlloc(t, 20_000, uiLoops["updates"])
	feed := uiLoopAlloc(t, 20_000, uiLoops["events"])
	t.Logf("20 000 tool updates: %d bytes following Updates, %d following Events", base, feed)
	if feed > 2*base {
		t.Errorf("rendering from Events allocated %d bytes, over 2× the %d of the bare updates", feed, base)
	}
}

// An elicitation request with a session says which turn it came in and
// after which event.
func TestElicitationPlacedInStream(t *testing.T) {
	got := make(chan *ElicitationRequest, 1)
	opts := &ClientOptions{Elicitation: &ElicitationHandlers{Form: true,
		Create: func(_ context.Context, r *ElicitationRequest) (*schema.CreateElicitationResponse, error) {
			got <- r
			return &schema.CreateElicitationResponse{Action: schema.ElicitationDecline}, nil
		}}}
	_, a, _, turn, p := startTurn(t, opts)
	a.update("s1", chunk("let me ask"))
	a.update("s1", toolCall("x", "in_progress"))
	a.send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": map[string]any{"sessionId": "s1", "toolCallId": "x", "mode": "form", "message": "Name?", "requestedSchema": map[string]any{"type": "object"}}})
	r := <-got
	if r.Turn != turn || r.Seq != 2 {
		t.Errorf("placed in turn %p (want %p) after event %d (want 2)", r.Turn, turn, r.Seq)
	}
	// The placement is the client's: the request as received is the
	// wire's alone.
	if r.SessionID != "s1" || r.ToolCallID != "x" || r.Message != "Name?" {
		t.Errorf("request as received: %+v", r.CreateElicitationRequest)
	}
	a.reply(p, map[string]any{"stopReason": "end_turn"})
	turn.Wait()
}

// A turn longer than several log chunks reads back whole and in order, live
// and replayed, and from any resume point.
func TestEventsAcrossLogChunks(t *testing.T) {
	_, a, _, turn, p := startTurn(t, &ClientOptions{Subagents: true})
	live := make(chan []Event, 1)
	go func() {
		var evs []Event
		for ev := range turn.Events(context.Background(), 0) {
			evs = append(evs, ev)
		}
		live <- evs
	}()
	const n = 5*logChunk + 7
	r := rand.New(rand.NewPCG(1, 2))
	for range n {
		a.update("s1", randomStep(r))
	}
	a.reply(p, map[string]any{"stopReason": "end_turn"})
	turn.Wait()
	want := turn.State()
	if diff := cmp.Diff(want, foldEvents(t, <-live)); diff != "" {
		t.Errorf("live (-State +fold):\n%s", diff)
	}
	for _, from := range []uint64{0, logChunk - 1, logChunk, logChunk + 1, 3*logChunk + 5, n} {
		seq := from
		for ev := range turn.Events(context.Background(), from) {
			if ev.Seq != seq+1 {
				t.Fatalf("from %d: event %d after %d", from, ev.Seq, seq)
			}
			seq = ev.Seq
		}
		if seq != n+1 {
			t.Errorf("from %d: ended at %d, want %d", from, seq, n+1)
		}
	}
}
