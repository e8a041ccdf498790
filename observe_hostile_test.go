package acp_test

import (
	"context"
	"encoding/json"
	"reflect"
	"sync"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// An agent's _meta that is not an object, or holds values that are not
// strings, reaches Serve as what is usable of it (string values only), and
// the request is served as without an Observer.
func TestHostileObserverAgentMeta(t *testing.T) {
	var mu sync.Mutex
	var metas []map[string]string
	obs := &acp.Observer{Serve: func(ctx context.Context, si acp.ServeInfo) (context.Context, func(any, error)) {
		mu.Lock()
		metas = append(metas, si.Meta)
		mu.Unlock()
		return ctx, nil
	}}
	answers := make(chan error, 8)
	c, _ := acptest.Connect(t, &acptest.Options{OnPrompt: func(tt *acptest.Turn) (schema.StopReason, error) {
		for _, meta := range []string{`"a string"`, `null`, `[1,2]`, `{"traceparent":5,"tracestate":"ok","x":{"y":1}}`} {
			_, err := tt.Call(context.Background(), "_x/meta", json.RawMessage(`{"sessionId":"`+tt.SessionID()+`","_meta":`+meta+`}`))
			answers <- err
		}
		_, err := tt.Call(context.Background(), "_x/meta", json.RawMessage(`[1]`)) // params not an object
		answers <- err
		return "", nil
	}}, &acp.ClientOptions{Observer: obs, ExtMethod: func(context.Context, string, json.RawMessage) (any, error) {
		return map[string]any{"ok": true}, nil
	}})
	s, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	turn.Wait()
	for range 5 {
		if err := <-answers; err != nil {
			t.Errorf("an agent request failed: %v", err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	want := []map[string]string{nil, nil, nil, {"tracestate": "ok"}, nil}
	if !reflect.DeepEqual(metas, want) {
		t.Errorf("Serve saw metas %v, want %v", metas, want)
	}
}

// Params Inject cannot extend (not an object, or a _meta that is not one)
// go out unchanged.
func TestHostileObserverCallerParams(t *testing.T) {
	obs := &acp.Observer{Inject: func(_ context.Context, set func(string, string)) { set("traceparent", "00-x") }}
	c, a := acptest.Connect(t, &acptest.Options{
		OnExtMethod: func(context.Context, *acptest.Conn, string, json.RawMessage) (any, error) {
			return map[string]any{}, nil
		},
	}, &acp.ClientOptions{Observer: obs})
	for _, params := range []string{`[1,2]`, `{"_meta":"mine"}`, `{"_meta":[1]}`, `{"a":1,"_meta":null}`, `{}`} {
		if err := c.Call(context.Background(), "_p", json.RawMessage(params), nil); err != nil {
			t.Fatal(err)
		}
	}
	got := a.Received("_p")
	want := []string{`[1,2]`, `{"_meta":"mine"}`, `{"_meta":[1]}`, `{"_meta":{"traceparent":"00-x"},"a":1}`, `{"_meta":{"traceparent":"00-x"}}`}
	for i := range want {
		if i >= len(got) || string(got[i]) != want[i] {
			t.Errorf("params %d sent as %s, want %s", i, got[i], want[i])
		}
	}
}
