package acp

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// Under load: 100 000 updates, then the response; when Wait returns all of
// them are folded, in order.
func TestTurnBarrierUnderLoad(t *testing.T) {
	const n = 100_000
	c, a := connectRaw(t, nil, nil)
	s := newSessionRaw(t, c, a)
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	p := a.expect("session/prompt")
	go func() {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"%d,"}}}}`+"\n", i)
			if b.Len() > 64<<10 {
				a.write(b.String())
				b.Reset()
			}
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%s,"result":{"stopReason":"end_turn"}}`+"\n", p.ID)
		a.write(b.String())
	}()
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	st := turn.State()
	if got := len(slices.Collect(turn.Updates())); got != n {
		t.Fatalf("folded %d updates, want %d", got, n)
	}
	if len(st.Messages) != 1 {
		t.Fatalf("%d messages", len(st.Messages))
	}
	parts := strings.Split(strings.TrimSuffix(st.Messages[0].Text, ","), ",")
	for i, p := range parts {
		if p != fmt.Sprint(i) {
			t.Fatalf("chunk %d is %q: order lost", i, p)
		}
	}
}

// A consumer of Updates that takes 1 ms per update neither slows the turn
// nor misses anything, and other consumers see everything too.
func TestSlowUpdatesConsumer(t *testing.T) {
	const n = 300
	c, a := connectRaw(t, nil, nil)
	s := newSessionRaw(t, c, a)
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	var slowSeen atomic.Int64
	var wg sync.WaitGroup
	counts := make([]int, 3)
	for i := range counts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range turn.Updates() {
				counts[i]++
				if i == 0 {
					slowSeen.Add(1)
					time.Sleep(time.Millisecond) // the consumer is slow; that is the point
				}
			}
		}()
	}
	p := a.expect("session/prompt")
	for i := range n {
		a.update("s1", chunk(fmt.Sprint(i)))
	}
	a.reply(p, map[string]any{"stopReason": "end_turn"})
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := slowSeen.Load(); got == n {
		t.Logf("the slow consumer had already seen everything when Wait returned")
	}
	if got := len(slices.Collect(turn.Updates())); got != n {
		t.Fatalf("Wait returned with %d of %d updates folded", got, n)
	}
	wg.Wait()
	for i, got := range counts {
		if got != n {
			t.Errorf("consumer %d saw %d updates, want %d", i, got, n)
		}
	}
}

// Updates that arrive before the session/new response (agents send
// available_commands_update first) are applied to the session.
func TestUpdatesBeforeSessionNewResponse(t *testing.T) {
	c, a := connectRaw(t, nil, nil)
	ch := make(chan *Session, 1)
	go func() {
		s, err := c.NewSession(context.Background(), nil)
		if err != nil {
			t.Error(err)
		}
		ch <- s
	}()
	m := a.expect("session/new")
	a.update("s9", map[string]any{"sessionUpdate": "available_commands_update", "availableCommands": []any{map[string]any{"name": "web", "description": "Search"}}})
	a.update("s9", map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": "welcome"}})
	a.reply(m, map[string]any{"sessionId": "s9", "modes": map[string]any{"currentModeId": "ask", "availableModes": []any{map[string]any{"id": "ask", "name": "Ask"}}}})
	s := <-ch
	st := s.State()
	if len(st.Commands) != 1 || st.Commands[0].Name != "web" {
		t.Errorf("commands = %+v", st.Commands)
	}
	if st.Modes == nil || st.Modes.CurrentModeID != "ask" {
		t.Errorf("modes = %+v", st.Modes)
	}
	if len(st.History.Messages) != 1 || st.History.Messages[0].Text != "welcome" {
		t.Errorf("history = %+v", st.History.Messages)
	}
}

// Updates after the turn's response are kept on the session, marked late,
// and never reach the next turn.
func TestLateUpdatesStayOutOfNextTurn(t *testing.T) {
	c, a := connectRaw(t, nil, nil)
	s := newSessionRaw(t, c, a)
	turn, _ := s.Prompt(context.Background(), schema.Text("one"))
	p := a.expect("session/prompt")
	a.update("s1", chunk("in turn"))
	a.reply(p, map[string]any{"stopReason": "end_turn"})
	a.update("s1", chunk("late"))
	turn.Wait()
	// v1 has no acknowledgement of a prompt, so an update written after an
	// answer can only be told from the next turn's once it has been read:
	// wait for it, as a UI would have shown it by then.
	for range s.Changes(context.Background()) {
		if len(s.State().Outside) == 1 {
			break
		}
	}
	turn2, err := s.Prompt(context.Background(), schema.Text("two"))
	if err != nil {
		t.Fatal(err)
	}
	p2 := a.expect("session/prompt")
	a.update("s1", chunk("second"))
	a.reply(p2, map[string]any{"stopReason": "end_turn"})
	turn2.Wait()
	if got := textOf(turn.State()); got != "in turn" {
		t.Errorf("first turn text %q", got)
	}
	if got := textOf(turn2.State()); got != "second" {
		t.Errorf("second turn text %q", got)
	}
	out := s.State().Outside
	if len(out) != 1 || !out[0].Late || out[0].Replay {
		t.Fatalf("outside = %+v", out)
	}
}

func textOf(st TurnState) string {
	var b strings.Builder
	for _, m := range st.Messages {
		b.WriteString(m.Text)
	}
	return b.String()
}

// session/load replay is folded into the session's history before
// LoadSession returns.
func TestLoadReplay(t *testing.T) {
	c, a := connectRaw(t, nil, nil)
	ch := make(chan *Session, 1)
	go func() {
		s, err := c.LoadSession(context.Background(), &schema.LoadSessionRequest{SessionID: "old", Cwd: "/tmp"})
		if err != nil {
			t.Error(err)
		}
		ch <- s
	}()
	m := a.expect("session/load")
	a.update("old", map[string]any{"sessionUpdate": "user_message_chunk", "content": map[string]any{"type": "text", "text": "hi"}})
	a.update("old", chunk("hello"))
	a.update("old", map[string]any{"sessionUpdate": "tool_call", "toolCallId": "x", "title": "Read", "status": "completed"})
	a.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": nil}) // the stable docs' null result
	s := <-ch
	if s == nil {
		t.FailNow()
	}
	st := s.State()
	// Order interleaves the lists as the replay went: user, agent, tool.
	want := TurnState{
		Messages:     []Message{{Text: "hello", Order: 1}},
		UserMessages: []Message{{Text: "hi", Order: 0}},
		ToolCalls:    []ToolCallState{{ToolCallID: "x", Title: "Read", Kind: schema.ToolKindOther, Status: schema.ToolCallStatusCompleted, Order: 2}},
	}
	if diff := cmp.Diff(want, st.History); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	for _, o := range st.Outside {
		if !o.Replay {
			t.Errorf("replayed update not marked: %+v", o)
		}
	}
}

type readOnlyFS struct{}

func (readOnlyFS) ReadTextFile(context.Context, *schema.ReadTextFileRequest) (*schema.ReadTextFileResponse, error) {
	return &schema.ReadTextFileResponse{Content: "x"}, nil
}

// A prompt may mix every content type the agent advertises; each block goes
// on the wire in order and in the schema's shape.
func TestPromptMixedContent(t *testing.T) {
	c, a := connectRaw(t, nil, nil) // defaultInit advertises image, audio, embeddedContext
	s := newSessionRaw(t, c, a)
	turn, err := s.Prompt(context.Background(),
		schema.Text("look at these"),
		schema.Image("aGk=", "image/png"),
		&schema.AudioContent{Data: "UklG", MimeType: "audio/wav"},
		schema.Link("file:///w/main.go", "main.go"),
		&schema.EmbeddedResource{Resource: &schema.TextResourceContents{URI: "file:///w/a.txt", Text: "alpha", MimeType: "text/plain"}},
		&schema.EmbeddedResource{Resource: &schema.BlobResourceContents{URI: "file:///w/b.bin", Blob: "AAE="}},
	)
	if err != nil {
		t.Fatal(err)
	}
	p := a.expect("session/prompt")
	want := `{"sessionId":"s1","prompt":[
		{"type":"text","text":"look at these"},
		{"type":"image","data":"aGk=","mimeType":"image/png"},
		{"type":"audio","data":"UklG","mimeType":"audio/wav"},
		{"type":"resource_link","uri":"file:///w/main.go","name":"main.go"},
		{"type":"resource","resource":{"uri":"file:///w/a.txt","text":"alpha","mimeType":"text/plain"}},
		{"type":"resource","resource":{"uri":"file:///w/b.bin","blob":"AAE="}}]}`
	compareJSON(t, "prompt params", []byte(want), p.Params)
	a.reply(p, map[string]any{"stopReason": "end_turn"})
	turn.Wait()
}

// The prompt response's _meta is kept on the turn's state and carried by its
// end event, so folding the feed reproduces it.
func TestPromptResponseMeta(t *testing.T) {
	_, a, _, turn, p := startTurn(t, nil)
	a.reply(p, map[string]any{"stopReason": "end_turn", "_meta": map[string]any{"traceId": "abc"}})
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	st := turn.State()
	if string(st.Meta) != `{"traceId":"abc"}` {
		t.Errorf("state meta = %s", st.Meta)
	}
	var tf TurnFold
	for ev := range turn.Events(context.Background(), 0) {
		tf.Apply(ev)
	}
	if diff := cmp.Diff(st, tf.State()); diff != "" {
		t.Errorf("folded feed differs from State (-state +fold):\n%s", diff)
	}
}

// The session/update notification's own _meta (beside sessionId and update)
// reaches the update's events in the turn's and the session's feeds; a
// _meta that is not an object is dropped.
func TestUpdateNotificationMeta(t *testing.T) {
	_, a, s, turn, p := startTurn(t, nil)
	a.send(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{
		"sessionId": "s1", "update": chunk("hi"), "_meta": map[string]any{"trace": "t1"}}})
	a.send(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{
		"sessionId": "s1", "update": chunk(" there"), "_meta": "not an object"}})
	a.send(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{
		"sessionId": "s1", "update": map[string]any{"sessionUpdate": "available_commands_update", "availableCommands": []any{}}, "_meta": map[string]any{"n": 2}}})
	a.reply(p, map[string]any{"stopReason": "end_turn"})
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	var metas []string
	for ev := range turn.Events(context.Background(), 0) {
		if ev.Kind == EventUpdate {
			metas = append(metas, string(ev.Meta))
		}
	}
	if want := []string{`{"trace":"t1"}`, ``, `{"n":2}`}; !slices.Equal(metas, want) {
		t.Errorf("turn events' _meta = %q, want %q", metas, want)
	}
	var sessionMeta string
	for ev := range s.Events(context.Background(), 0) {
		if _, ok := ev.Update.(*schema.AvailableCommandsUpdate); ok {
			sessionMeta = string(ev.Meta)
		}
		if ev.Kind == EventUpdate && ev.Turn == turn {
			break
		}
	}
	if sessionMeta != `{"n":2}` {
		t.Errorf("session event _meta = %q", sessionMeta)
	}
}
