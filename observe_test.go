package acp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

type ctxKey struct{}

// recorder is an Observer that records what it sees; its Inject sends the
// value the context carries under ctxKey as the traceparent.
type recorder struct {
	mu      sync.Mutex
	calls   []string // "method session"
	ended   []string // "method error"
	serves  []acp.ServeInfo
	results []any
	updates []string
	end     *acp.TurnEnd
	late    bool // an Update came after End
}

func (r *recorder) observer() *acp.Observer {
	return &acp.Observer{
		Call: func(ctx context.Context, ci acp.CallInfo) (context.Context, func(error)) {
			r.mu.Lock()
			r.calls = append(r.calls, ci.Method+" "+ci.SessionID)
			r.mu.Unlock()
			return context.WithValue(ctx, ctxKey{}, "00-"+strings.ReplaceAll(ci.Method, "/", "_")), func(err error) {
				r.mu.Lock()
				defer r.mu.Unlock()
				r.ended = append(r.ended, ci.Method+" "+errText(err))
			}
		},
		Inject: func(ctx context.Context, set func(string, string)) {
			if v, ok := ctx.Value(ctxKey{}).(string); ok {
				set("traceparent", v)
				set("tracestate", "acp=1")
			}
		},
		Serve: func(ctx context.Context, si acp.ServeInfo) (context.Context, func(any, error)) {
			si.Params = nil // not to be kept
			r.mu.Lock()
			r.serves = append(r.serves, si)
			r.mu.Unlock()
			return ctx, func(res any, err error) {
				r.mu.Lock()
				defer r.mu.Unlock()
				r.results = append(r.results, res)
			}
		},
		Turn: func(ctx context.Context, ti acp.TurnInfo) (context.Context, *acp.TurnObserver) {
			return ctx, &acp.TurnObserver{
				Update: func(u schema.Update) {
					r.mu.Lock()
					defer r.mu.Unlock()
					r.late = r.late || r.end != nil
					r.updates = append(r.updates, u.UpdateKind())
				},
				End: func(e acp.TurnEnd) {
					r.mu.Lock()
					defer r.mu.Unlock()
					r.end = &e
				},
			}
		},
	}
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

func metaOf(t *testing.T, params json.RawMessage) map[string]any {
	t.Helper()
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		t.Fatal(err)
	}
	return p.Meta
}

// The Observer's Inject puts the trace context into params._meta of every
// request and notification, the prompt's included; the caller's own _meta
// keys win, and the params keep their key order.
func TestObserverInjectsMeta(t *testing.T) {
	rec := &recorder{}
	c, a := acptest.Connect(t, &acptest.Options{
		OnExtMethod: func(context.Context, *acptest.Conn, string, json.RawMessage) (any, error) {
			return map[string]any{}, nil
		},
	}, &acp.ClientOptions{Observer: rec.observer()})
	ctx := context.Background()
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(ctx, schema.Text("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, "_x/y", json.RawMessage(`{"a":1,"_meta":{"traceparent":"mine","k":true}}`), nil); err != nil {
		t.Fatal(err)
	}

	if m := metaOf(t, a.Received(schema.MethodSessionNew)[0]); m["traceparent"] != "00-session_new" || m["tracestate"] != "acp=1" {
		t.Errorf("session/new _meta %v", m)
	}
	prompt := a.Received(schema.MethodSessionPrompt)[0]
	if m := metaOf(t, prompt); m["traceparent"] != "00-session_prompt" {
		t.Errorf("session/prompt _meta %v", m)
	}
	if !strings.HasPrefix(string(prompt), `{"sessionId":`) {
		t.Errorf("session/prompt params reordered: %s", prompt)
	}
	if m := metaOf(t, a.Received("_x/y")[0]); m["traceparent"] != "mine" || m["k"] != true || m["tracestate"] != "acp=1" {
		t.Errorf("the caller's _meta was not kept: %v", m)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	sid := s.ID()
	want := []string{"initialize ", "session/new ", "session/prompt " + sid, "_x/y "}
	// initialize, sent by Connect, is observed like any call.
	if !reflect.DeepEqual(rec.calls, want) {
		t.Errorf("calls %q, want %q", rec.calls, want)
	}
}

// Without an Observer the params go out exactly as encoded, _meta-free.
func TestObserverUnsetSendsNoMeta(t *testing.T) {
	c, a := acptest.Connect(t, nil, nil)
	s, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	turn, _ := s.Prompt(context.Background(), schema.Text("hi"))
	turn.Wait()
	if m := metaOf(t, a.Received(schema.MethodSessionPrompt)[0]); m != nil {
		t.Errorf("_meta sent without an Observer: %v", m)
	}
}

// A turn's observer sees every update in wire order, then its end; the
// agent's requests are served through Serve with their _meta, and end
// sees the reply.
func TestObserverTurnAndServe(t *testing.T) {
	rec := &recorder{}
	c, _ := acptest.Connect(t, &acptest.Options{OnPrompt: func(tt *acptest.Turn) (schema.StopReason, error) {
		tt.Say("plain text") // the reader's fast path for text, observed too
		tt.ToolCall(acptest.ToolCallSpec{ID: "t1", Title: "Edit a", Kind: schema.ToolKindEdit, Status: schema.ToolCallStatusPending})
		_, err := tt.Call(context.Background(), schema.MethodSessionRequestPermission, map[string]any{
			"sessionId": tt.SessionID(), "toolCall": map[string]any{"toolCallId": "t1"},
			"options": acptest.DefaultPermissionOptions,
			"_meta":   map[string]any{"traceparent": "00-agent-01", "n": 1},
		})
		if err != nil {
			return "", err
		}
		tt.UpdateToolCall(acptest.ToolCallSpec{ID: "t1", Status: schema.ToolCallStatusCompleted})
		tt.Usage(10, 100)
		tt.SetResult("usage", map[string]any{"totalTokens": 7, "inputTokens": 5, "outputTokens": 2})
		return schema.StopReasonEndTurn, nil
	}}, &acp.ClientOptions{Observer: rec.observer(), Permission: acp.AllowAll})
	s, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: "/w"})
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
	c.Close() // every observer call has returned once Close has
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if want := []string{"agent_message_chunk", "tool_call", "tool_call_update", "usage_update"}; !reflect.DeepEqual(rec.updates, want) {
		t.Errorf("updates %q, want %q", rec.updates, want)
	}
	if rec.end == nil || rec.end.StopReason != schema.StopReasonEndTurn || rec.end.Usage == nil || rec.end.Usage.OutputTokens != 2 {
		t.Errorf("end %+v", rec.end)
	}
	if rec.late {
		t.Error("an Update came after End")
	}
	if len(rec.serves) != 1 {
		t.Fatalf("serves %+v", rec.serves)
	}
	si := rec.serves[0]
	if si.Method != schema.MethodSessionRequestPermission || si.SessionID != s.ID() || si.RequestID == "" ||
		!reflect.DeepEqual(si.Meta, map[string]string{"traceparent": "00-agent-01"}) {
		t.Errorf("serve %+v", si)
	}
	if r, ok := rec.results[0].(*schema.RequestPermissionResponse); !ok || r.Outcome.Kind != schema.OutcomeSelected {
		t.Errorf("serve end saw %#v", rec.results[0])
	}
	found := false
	for _, e := range rec.ended {
		found = found || e == "session/prompt ok"
	}
	if !found {
		t.Errorf("the prompt call's end was not observed: %q", rec.ended)
	}
}

// A Prompt refused because a turn runs still ends the turn it observed.
func TestObserverRefusedTurnEnds(t *testing.T) {
	var ends []acp.TurnEnd
	var mu sync.Mutex
	release := make(chan struct{})
	ended := make(chan struct{}, 2)
	obs := &acp.Observer{Turn: func(ctx context.Context, _ acp.TurnInfo) (context.Context, *acp.TurnObserver) {
		return ctx, &acp.TurnObserver{End: func(e acp.TurnEnd) {
			mu.Lock()
			ends = append(ends, e)
			mu.Unlock()
			ended <- struct{}{}
		}}
	}}
	c, _ := acptest.Connect(t, &acptest.Options{OnPrompt: func(*acptest.Turn) (schema.StopReason, error) {
		<-release
		return "", nil
	}}, &acp.ClientOptions{Observer: obs})
	s, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.Prompt(context.Background(), schema.Text("a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(context.Background(), schema.Text("b")); err == nil {
		t.Fatal("a second turn started")
	}
	close(release)
	first.Wait()
	// End runs just after the turn's end, which Wait sees: wait for both.
	<-ended
	<-ended
	mu.Lock()
	defer mu.Unlock()
	if len(ends) != 2 || ends[0].Err == nil || ends[1].StopReason != schema.StopReasonEndTurn {
		t.Errorf("ends %+v", ends)
	}
}

// session/cancel, sent by Turn.Cancel on the urgent lane, is observed
// like any notification, in the context Observer.Turn returned: the agent
// gets the turn's trace with it.
func TestObserverCancelCarriesTurnContext(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	obs := &acp.Observer{
		Turn: func(ctx context.Context, _ acp.TurnInfo) (context.Context, *acp.TurnObserver) {
			return context.WithValue(ctx, ctxKey{}, "00-turn"), nil
		},
		Call: func(ctx context.Context, ci acp.CallInfo) (context.Context, func(error)) {
			return ctx, func(err error) {
				mu.Lock()
				defer mu.Unlock()
				calls = append(calls, fmt.Sprint(ci.Method, " ", ci.SessionID, " ", ci.Notification, " ", errText(err)))
			}
		},
		Inject: func(ctx context.Context, set func(string, string)) {
			if v, ok := ctx.Value(ctxKey{}).(string); ok {
				set("traceparent", v)
			}
		},
	}
	c, a := acptest.Connect(t, &acptest.Options{OnPrompt: func(tt *acptest.Turn) (schema.StopReason, error) {
		<-tt.Cancelled()
		return "", nil
	}}, &acp.ClientOptions{Observer: obs})
	s, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	turn.Cancel()
	if stop, _ := turn.Wait(); stop != schema.StopReasonCancelled {
		t.Fatalf("stop %v", stop)
	}
	c.Close()
	got := a.Received(schema.MethodSessionCancel)
	if len(got) != 1 {
		t.Fatalf("%d session/cancel received", len(got))
	}
	if m := metaOf(t, got[0]); m["traceparent"] != "00-turn" {
		t.Errorf("session/cancel _meta %v, want the turn's trace", m)
	}
	if !strings.HasPrefix(string(got[0]), `{"sessionId":`) {
		t.Errorf("session/cancel params %s", got[0])
	}
	mu.Lock()
	defer mu.Unlock()
	want := "session/cancel " + s.ID() + " true ok"
	found := false
	for _, c := range calls {
		found = found || c == want
	}
	if !found {
		t.Errorf("calls %q, want one %q", calls, want)
	}
}

// The acp module does not depend on OpenTelemetry: the Observer carries
// the data and the otelacp module, with a go.mod of its own, maps it.
func TestNoOpenTelemetryDependency(t *testing.T) {
	b, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "go.opentelemetry.io") {
		t.Error("go.mod requires OpenTelemetry; only otelacp/go.mod may")
	}
	if _, err := os.Stat("otelacp/go.mod"); err != nil {
		t.Errorf("otelacp is not a module of its own: %v", err)
	}
}
