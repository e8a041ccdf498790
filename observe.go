package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/acpclient/acp/schema"
	"sync"
)

// Observer watches a client's traffic for tracing and metrics, without this
// package knowing any tracing library: the module
// github.com/acpclient/acp/otelacp maps it onto OpenTelemetry. Set it as
// [ClientOptions.Observer]. Every field is optional; a nil Observer, or a
// nil field, costs nothing (no encoding, no allocation, no lock).
//
// Concurrency and ordering: Call, Inject and Turn run on the caller's
// goroutine, before anything is sent; Serve runs on the goroutine that
// serves the agent's request, before its handler. A TurnObserver's Update
// calls come from the client's reader goroutine in wire order, and End
// comes once, after the turn's last Update. Several calls and turns run at
// once, so the fields must be safe for concurrent use. None of them may
// block: Update and End hold up the reading of every later line. A callback
// that panics is recovered and reported as a DiagObserverPanic diagnostic;
// what it observed goes on without it (a turn whose Update or End panicked
// is observed no further).
type Observer struct {
	// Call is called before the client sends a request or a notification
	// to the agent (every typed helper, Call, Notify, session/prompt). The
	// context it returns is the one Inject sees: typically ctx with the
	// call's span. end, if not nil, is called once with the call's
	// outcome: nil, the agent's *Error, or why it failed; a notification's
	// end is called once it has been handed to the writer.
	Call func(ctx context.Context, call CallInfo) (_ context.Context, end func(error))

	// Inject adds propagation fields (the ACP meta-propagation convention
	// reserves the root keys traceparent, tracestate and baggage of
	// params._meta for W3C trace context) to an outgoing request or
	// notification: every set(key, value) becomes params._meta[key]. A key
	// the caller's params already have in _meta is kept as the caller
	// sent it. With no set call the params are sent as they were.
	Inject func(ctx context.Context, set func(key, value string))

	// Serve is called when an agent request is about to be served, with
	// the context its handler would get; the handler gets the context
	// Serve returns (so its spans are children of the agent's trace when
	// the request's _meta carried one). end, if not nil, is called once
	// with the handler's result (the value sent to the agent, such as a
	// *RequestPermissionResponse) or its error.
	Serve func(ctx context.Context, req ServeInfo) (_ context.Context, end func(result any, err error))

	// Turn is called when Session.Prompt starts a turn, before
	// session/prompt is sent. The context it returns is the one the
	// request is sent with (Call and Inject see it: put the turn's span
	// there). The TurnObserver, if not nil, watches the turn. Turns an
	// agent starts on a child session are not observed.
	Turn func(ctx context.Context, turn TurnInfo) (context.Context, *TurnObserver)

	// Restart is told of each step of a restart of the agent, in order, on
	// the client's callback goroutine, as RestartPolicy.OnRestart (which,
	// when set too, is called right after it). Only a client with
	// ClientOptions.Restart restarts; see docs/SUPERVISION.md.
	Restart func(RestartEvent)
}

// CallInfo describes a request or notification the client is about to send.
type CallInfo struct {
	Method string
	// SessionID is params.sessionId, when the params have one.
	SessionID string
	// Notification: no answer is expected.
	Notification bool
}

// ServeInfo describes a request of the agent's about to be served.
type ServeInfo struct {
	Method string
	// RequestID is the request's JSON-RPC id, as JSON text.
	RequestID string
	// SessionID is params.sessionId, when the params have one.
	SessionID string
	// Meta holds the string values at the root of params._meta (the
	// agent's traceparent, tracestate and baggage, among others); nil when
	// there are none.
	Meta map[string]string
	// Params is the request's params as received. Read it, do not keep it.
	Params json.RawMessage
}

// TurnInfo describes a turn Session.Prompt is starting.
type TurnInfo struct {
	SessionID string
	Turn      *Turn
}

// TurnObserver watches one turn. Both fields are optional.
type TurnObserver struct {
	// Update receives each update folded into the turn, in wire order, on
	// the reader goroutine. The update is the folded value: read it, never
	// change it.
	Update func(u schema.Update)
	// End is called once when the turn ends, with its outcome; no Update
	// follows it. It runs just after the turn has ended, outside the
	// session's lock, so Turn.Wait may return before it has.
	End func(end TurnEnd)
}

// turnObs serializes a turn's observer calls, so End is last even when the
// turn ends on another goroutine (the cancel grace, a failed write) while
// the reader is delivering an update.
type turnObs struct {
	c     *Client
	mu    sync.Mutex
	ended bool // End was called, or a callback panicked
	o     *TurnObserver
}

func (to *turnObs) update(u schema.Update) {
	if to == nil || to.o.Update == nil {
		return
	}
	to.mu.Lock()
	defer to.mu.Unlock()
	if !to.ended {
		defer to.recover("Turn's Update")
		to.o.Update(u)
	}
}

func (to *turnObs) end(e TurnEnd) {
	if to == nil {
		return
	}
	to.mu.Lock()
	defer to.mu.Unlock()
	if to.ended {
		return
	}
	to.ended = true
	if to.o.End != nil {
		defer to.recover("Turn's End")
		to.o.End(e)
	}
}

// recover, deferred around a TurnObserver callback, ends the observation
// of a turn whose callback panicked (to.mu is held).
func (to *turnObs) recover(where string) {
	if p := recover(); p != nil {
		to.ended = true
		to.c.observerPanicked(where, p)
	}
}

// observerPanicked reports a recovered Observer panic.
func (c *Client) observerPanicked(where string, p any) {
	c.diag(DiagObserverPanic, fmt.Sprintf("Observer.%s panicked: %v", where, p), nil)
}

// guard, deferred around an Observer callback, recovers its panic,
// reports it and sets *failed.
func (c *Client) guard(where string, failed *bool) {
	if p := recover(); p != nil {
		*failed = true
		c.observerPanicked(where, p)
	}
}

// guardEnd wraps an Observer's end function so that its panic is
// recovered and reported too.
func guardEnd[F any](c *Client, where string, end F, call func(F)) {
	failed := false
	defer c.guard(where, &failed)
	call(end)
}

// observeTurn runs Observer.Turn for a turn Prompt starts; it returns the
// context its request is to be sent with.
func (c *Client) observeTurn(ctx context.Context, t *Turn) context.Context {
	o := c.opts.Observer
	if o == nil {
		return ctx
	}
	if o.Turn != nil {
		octx, to, ok := c.callTurn(o, ctx, t)
		if ok && octx != nil {
			ctx = octx
			if to != nil {
				t.obs = &turnObs{c: c, o: to}
			}
		}
	}
	t.octx = ctx
	return ctx
}

// callTurn runs Observer.Turn; ok is false if it panicked.
func (c *Client) callTurn(o *Observer, ctx context.Context, t *Turn) (_ context.Context, _ *TurnObserver, ok bool) {
	failed := false
	defer func() { ok = !failed }()
	defer c.guard("Turn", &failed)
	octx, to := o.Turn(ctx, TurnInfo{SessionID: t.s.id, Turn: t})
	return octx, to, true
}

// observeCall runs Observer.Call and Observer.Inject for an outgoing call:
// it returns the params to send (with the injected _meta) and the function
// to call with the outcome. Without an Observer it returns params as they
// are and a nil end.
func (c *Client) observeCall(ctx context.Context, method string, params any, notification bool) (any, func(error)) {
	o := c.opts.Observer
	if o == nil || (o.Call == nil && o.Inject == nil) {
		return params, nil
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return params, nil // jrpc2 reports the encoding error
	}
	var end func(error)
	if o.Call != nil {
		func() {
			failed := false
			defer c.guard("Call", &failed)
			octx, e := o.Call(ctx, CallInfo{Method: method, SessionID: sessionIDOf(raw), Notification: notification})
			if octx != nil {
				ctx = octx
			}
			end = e
		}()
	}
	if end != nil {
		e := end
		end = func(err error) { guardEnd(c, "Call's end", e, func(f func(error)) { f(err) }) }
	}
	if o.Inject != nil {
		var keys []string
		var values []string
		failed := false
		func() {
			defer c.guard("Inject", &failed)
			o.Inject(ctx, func(k, v string) { keys, values = append(keys, k), append(values, v) })
		}()
		if len(keys) > 0 && !failed {
			if m, ok := withMeta(raw, keys, values); ok {
				return json.RawMessage(m), end
			}
		}
	}
	return json.RawMessage(raw), end
}

// observeServe runs Observer.Serve for an agent request.
func (c *Client) observeServe(ctx context.Context, in *inbound, method string, params json.RawMessage) (sctx context.Context, send func(any, error)) {
	o := c.opts.Observer
	if o == nil || o.Serve == nil {
		return ctx, nil
	}
	info := ServeInfo{Method: method, SessionID: sessionIDOf(params), Params: params}
	if in != nil {
		info.RequestID = in.id
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) == nil {
		for k, v := range p.Meta {
			var s string
			if json.Unmarshal(v, &s) == nil {
				if info.Meta == nil {
					info.Meta = map[string]string{}
				}
				info.Meta[k] = s
			}
		}
	}
	// A panicking Serve leaves the handler its own context (the named
	// results, set before the call).
	sctx = ctx
	failed := false
	defer c.guard("Serve", &failed)
	octx, end := o.Serve(ctx, info)
	if octx == nil { // a careless Serve: the handler keeps its own context
		octx = ctx
	}
	if end == nil {
		return octx, nil
	}
	return octx, func(result any, err error) {
		guardEnd(c, "Serve's end", end, func(f func(any, error)) { f(result, err) })
	}
}

// sessionIDOf returns params.sessionId, or "".
func sessionIDOf(params []byte) string {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(params, &p)
	return p.SessionID
}

// withMeta adds keys to the _meta object of the params object raw, keeping
// the keys it already has. ok is false when raw is not an object or its
// _meta is not one (the params are then sent unchanged). Without a _meta the
// object is extended in place, so its keys keep their order.
func withMeta(raw []byte, keys, values []string) ([]byte, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return nil, false
	}
	meta := map[string]json.RawMessage{}
	m, had := obj["_meta"]
	if had && !bytes.Equal(bytes.TrimSpace(m), []byte("null")) {
		if json.Unmarshal(m, &meta) != nil || meta == nil {
			return nil, false
		}
	}
	for i, k := range keys {
		if _, ok := meta[k]; ok {
			continue
		}
		v, _ := json.Marshal(values[i])
		meta[k] = v
	}
	enc, _ := json.Marshal(meta)
	if had {
		obj["_meta"] = enc
		out, err := json.Marshal(obj)
		return out, err == nil
	}
	body := bytes.TrimSpace(raw)
	out := make([]byte, 0, len(body)+len(enc)+10)
	out = append(out, body[:len(body)-1]...) // without the closing brace
	if len(obj) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"_meta":`...)
	out = append(out, enc...)
	return append(out, '}'), true
}
