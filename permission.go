package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/acpclient/acp/internal/agenttext"
	"github.com/acpclient/acp/schema"
)

// PermissionRequest is a session/request_permission as a handler sees it.
type PermissionRequest struct {
	// Session is the session asking, or nil if the agent named a session
	// this connection does not know.
	Session   *Session
	SessionID string
	// Turn is the turn the request belongs to: the session's running turn
	// when the request arrived, nil if none was running.
	Turn *Turn
	// Seq is the sequence number, in Turn's events, of the event that
	// applied this request's toolCall: every event up to and including it
	// was applied before the handler was called, so a UI that has rendered
	// Turn's events up to Seq shows the tool call's card before the dialog.
	// Zero when Turn is nil.
	Seq uint64
	// ToolCall is the tool call the request is about, as folded when the
	// request arrived, this request's toolCall included — except its title
	// when the tool call already had one (see Title). Every update the agent
	// wrote before the request is in it.
	ToolCall ToolCallState
	// Title is the request's own toolCall.title, if it sent one: agents
	// word the question there ("Allow editing a.go?"), so it is kept here
	// rather than replacing the tool call's title.
	Title string
	// Options are the choices offered; the answer must name one of them.
	Options []schema.PermissionOption
	// Raw is the request as received.
	Raw *schema.RequestPermissionRequest
}

// Option returns the first offered option of the given kind, or nil.
func (r *PermissionRequest) Option(kind schema.PermissionOptionKind) *schema.PermissionOption {
	for i := range r.Options {
		if r.Options[i].Kind == kind {
			return &r.Options[i]
		}
	}
	return nil
}

// PermissionHandler decides a permission request. It runs on its own
// goroutine, may block for as long as a user takes (several may be pending
// at once, from several sessions; wrap it with [OneAtATime] for one dialog
// per session), and may call back into the client. Its ctx is cancelled
// when the turn is cancelled (the agent then gets the cancelled outcome and
// whatever the handler returns later is dropped), when the agent withdraws
// the request, and when the connection closes. A request whose turn is
// already cancelled when it arrives (by [Turn.Cancel], or by the end of the
// Prompt context, before the agent's answer) is answered
// {"outcome":"cancelled"} at once and the handler is not called.
//
// The answer must select one of the offered option ids, or be
// [CancelledOutcome]; anything else is answered to the agent as an error
// (-32603), never as a silent allow, and reported as a [Diagnostic] of kind
// [DiagInvalidPermissionAnswer]. A handler error is sent as an error reply.
type PermissionHandler func(ctx context.Context, req *PermissionRequest) (schema.PermissionOutcome, error)

// SelectedOutcome returns the outcome that picks optionID.
func SelectedOutcome(optionID string) schema.PermissionOutcome {
	return schema.PermissionOutcome{Kind: schema.OutcomeSelected, OptionID: optionID}
}

// CancelledOutcome is the outcome that answers "cancelled".
func CancelledOutcome() schema.PermissionOutcome {
	return schema.PermissionOutcome{Kind: schema.OutcomeCancelled}
}

// pick selects the first offered option whose kind is in kinds, in the
// order of kinds, else the cancelled outcome.
func pick(req *PermissionRequest, kinds ...schema.PermissionOptionKind) schema.PermissionOutcome {
	for _, k := range kinds {
		if o := req.Option(k); o != nil {
			return SelectedOutcome(o.OptionID)
		}
	}
	return CancelledOutcome()
}

// RejectAll answers every request with a reject option (reject_once
// preferred over reject_always), or cancelled when none is offered. It is
// what a client with no Permission handler does: never an allow.
func RejectAll(_ context.Context, req *PermissionRequest) (schema.PermissionOutcome, error) {
	return pick(req, schema.PermissionRejectOnce, schema.PermissionRejectAlways), nil
}

// AllowAll answers every request with allow_once, or, when the agent offers
// no allow_once, with allow_always; if neither is offered, it rejects.
func AllowAll(_ context.Context, req *PermissionRequest) (schema.PermissionOutcome, error) {
	return pick(req, schema.PermissionAllowOnce, schema.PermissionAllowAlways, schema.PermissionRejectOnce, schema.PermissionRejectAlways), nil
}

// CancelAll answers every request with the cancelled outcome.
func CancelAll(context.Context, *PermissionRequest) (schema.PermissionOutcome, error) {
	return CancelledOutcome(), nil
}

// RememberAlways wraps ask so that an allow_always or reject_always choice
// answers later requests for tool calls of the same kind in the same session
// without asking again. The remembered choice picks the offered option of
// the same kind (or its _once sibling when the agent offers no _always one).
func RememberAlways(ask PermissionHandler) PermissionHandler {
	type key struct {
		session string
		kind    schema.ToolKind
	}
	var mu sync.Mutex
	remembered := map[key]schema.PermissionOptionKind{}
	return func(ctx context.Context, req *PermissionRequest) (schema.PermissionOutcome, error) {
		k := key{req.SessionID, req.ToolCall.Kind}
		mu.Lock()
		choice, ok := remembered[k]
		mu.Unlock()
		if ok {
			if choice == schema.PermissionAllowAlways {
				if out := pick(req, schema.PermissionAllowAlways, schema.PermissionAllowOnce); out.Kind == schema.OutcomeSelected {
					return out, nil
				}
			} else if out := pick(req, schema.PermissionRejectAlways, schema.PermissionRejectOnce); out.Kind == schema.OutcomeSelected {
				return out, nil
			}
		}
		out, err := ask(ctx, req)
		if err != nil || out.Kind != schema.OutcomeSelected {
			return out, err
		}
		for _, o := range req.Options {
			if o.OptionID == out.OptionID && (o.Kind == schema.PermissionAllowAlways || o.Kind == schema.PermissionRejectAlways) {
				mu.Lock()
				remembered[k] = o.Kind
				mu.Unlock()
			}
		}
		return out, nil
	}
}

// OneAtATime wraps h so that requests of one session are decided one after
// the other, in arrival order — a UI shows one dialog at a time. Requests
// of different sessions still run concurrently. A request whose turn is
// cancelled while it waits its turn is answered at once.
func OneAtATime(h PermissionHandler) PermissionHandler {
	var mu sync.Mutex
	slots := map[string]chan struct{}{}
	return func(ctx context.Context, req *PermissionRequest) (schema.PermissionOutcome, error) {
		mu.Lock()
		slot, ok := slots[req.SessionID]
		if !ok {
			slot = make(chan struct{}, 1)
			slots[req.SessionID] = slot
		}
		mu.Unlock()
		select {
		case slot <- struct{}{}:
		case <-ctx.Done():
			return schema.PermissionOutcome{}, context.Cause(ctx)
		}
		defer func() { <-slot }()
		return h(ctx, req)
	}
}

// onPermissionRequest runs on the reader goroutine when a permission request
// arrives: it folds the request's toolCall (so the handler, and State, see
// it), places the request in its turn's events, and registers it so that
// cancelling the turn can answer it.
func (c *Client) onPermissionRequest(in *inbound, params []byte) {
	var p schema.RequestPermissionRequest
	if err := json.Unmarshal(params, &p); err != nil {
		return // answered -32602 by the dispatcher
	}
	req := &PermissionRequest{SessionID: p.SessionID, Options: p.Options, Raw: &p}
	if p.ToolCall.Title != nil {
		req.Title = *p.ToolCall.Title
	}
	in.perm = req
	s := c.lookup(p.SessionID)
	if s == nil {
		var tt toolTable
		req.ToolCall = *tt.update(&p.ToolCall)
		return
	}
	in.session = s
	req.Session = s
	s.mu.Lock()
	cancelled := false
	// The toolCall grows the state like an update does, so it counts
	// against Limits.MaxTurnBytes too; past the budget it is not folded
	// (the handler sees it as if it were the tool call's first news).
	t := s.turn
	charge := max(int64(len(params)), s.patchCostLocked(t, &p.ToolCall))
	past, over := s.chargeLocked(t, charge)
	if !past {
		keptLocked(t, charge)
	}
	switch {
	case past:
		if m := s.droppedLocked(t); m != "" {
			over.msgs = append(over.msgs, m)
		}
		if t != nil {
			cancelled = t.life.cancelled
			req.Turn, req.Seq = t, t.log.seq
		}
		var tt toolTable
		req.ToolCall = *tt.update(&p.ToolCall)
	case t != nil:
		cancelled = t.life.cancelled
		req.Turn = t
		req.Seq = t.patchLocked(&p.ToolCall)
		tc, _ := t.fold.tools.get(p.ToolCall.ToolCallID)
		req.ToolCall = *tc
	default:
		patch := keepTitle(&s.history.tools, &p.ToolCall)
		tc := s.history.tools.update(patch)
		s.logLocked(sentry{kind: entPermission, u: patch, tc: tc, cost: charge})
		req.ToolCall = *tc
	}
	s.perms[in.id] = in
	s.notifyLocked()
	s.mu.Unlock()
	c.act(over)
	if cancelled {
		// The agent asked after the cancel; the answer is the same.
		in.cancel(errTurnCancelled)
	}
}

// keepTitle returns the request's toolCall without its title when the tool
// call already has one: agents word the question there ("Allow editing
// a.go?"), which is not the tool's name.
func keepTitle(tt *toolTable, p *schema.ToolCallUpdate) *schema.ToolCallUpdate {
	patch := *p
	if patch.Title != nil {
		if old, ok := tt.get(patch.ToolCallID); ok && old.Title != "" {
			patch.Title = nil
		}
	}
	return &patch
}

func (c *Client) servePermission(ctx context.Context, in *inbound, params json.RawMessage) (any, error) {
	var p schema.RequestPermissionRequest
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(err)
	}
	req := in.perm
	if req == nil {
		// Not seen by the reader (a test calling dispatch directly).
		req = &PermissionRequest{SessionID: p.SessionID, Options: p.Options, Raw: &p}
		var tt toolTable
		req.ToolCall = *tt.update(&p.ToolCall)
	}
	if s := in.session; s != nil {
		defer func() {
			s.mu.Lock()
			delete(s.perms, in.id)
			s.mu.Unlock()
		}()
	}
	if errors.Is(context.Cause(ctx), errTurnCancelled) {
		// The turn was cancelled before the handler could start (the
		// request came after the cancel, or waited for a goroutine): the
		// answer is decided, so nobody is asked a question that no longer
		// matters.
		return &schema.RequestPermissionResponse{Outcome: CancelledOutcome()}, nil
	}
	h := c.opts.Permission
	if h == nil {
		h = RejectAll
	}
	out, err := runHandler(ctx, schema.MethodSessionRequestPermission, func(ctx context.Context) (schema.PermissionOutcome, error) {
		return h(ctx, req)
	})
	if err != nil {
		if errors.Is(context.Cause(ctx), errTurnCancelled) {
			return &schema.RequestPermissionResponse{Outcome: CancelledOutcome()}, nil
		}
		return nil, err
	}
	switch out.Kind {
	case schema.OutcomeCancelled:
		return &schema.RequestPermissionResponse{Outcome: CancelledOutcome()}, nil
	case schema.OutcomeSelected:
		for _, o := range p.Options {
			if o.OptionID == out.OptionID {
				return &schema.RequestPermissionResponse{Outcome: out}, nil
			}
		}
		return nil, c.invalidPermissionAnswer(fmt.Sprintf("the permission handler chose %s, which is not an offered option", agenttext.Quote(out.OptionID)))
	default:
		return nil, c.invalidPermissionAnswer(fmt.Sprintf("the permission handler returned outcome %s", agenttext.Quote(string(out.Kind))))
	}
}

// invalidPermissionAnswer is the -32603 sent to the agent for a handler's
// answer that is not an offered option. The integrator's bug would be
// visible only to the agent, so it is reported locally too.
func (c *Client) invalidPermissionAnswer(msg string) error {
	c.diag(DiagInvalidPermissionAnswer, msg, nil)
	return &schema.Error{Code: schema.CodeInternalError, Message: "acp: " + msg}
}

func invalidParams(err error) error {
	return &schema.Error{Code: schema.CodeInvalidParams, Message: "invalid params: " + agenttext.Text(err.Error())}
}
