package acp

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/acpclient/acp/internal/wirejson"
	"github.com/acpclient/acp/schema"
)

// ElicitationRequest is an elicitation/create as a handler sees it: the
// request as received, placed in its session's stream, with the form the
// client decoded from it (see [ElicitationRequest.Schema]).
type ElicitationRequest struct {
	// CreateElicitationRequest is the request as received; its fields
	// (Message, Mode, RequestedSchema, URL...) read through.
	*schema.CreateElicitationRequest
	// Turn is the turn the request belongs to: the session's running turn
	// when the request arrived, nil if none was running (or the request
	// names no session this connection knows).
	Turn *Turn
	// Seq is the sequence number, in Turn's events, of the last event
	// applied before the request: a UI that has rendered Turn's events up
	// to Seq shows what the question is about before the form. Zero when
	// Turn is nil.
	Seq uint64

	// form is the form the client decoded from a form-mode request before
	// the handler ran, with its serving state (elicitation_served.go); nil
	// in URL mode, when the schema did not decode, or on a request made by
	// hand.
	form *servedForm
}

// Schema returns the request's form: in the Create handler of a client,
// a copy of the schema the client decoded once, when the request arrived,
// with the client's Limits (and, for a v2 agent, AnyValue set); the caller
// may change the copy. On a request the client did not serve, Schema
// decodes RequestedSchema as [CreateElicitationRequest.Schema] does.
func (r *ElicitationRequest) Schema() (*schema.ElicitationSchema, error) {
	if r.form != nil && r.Mode == schema.ElicitationModeForm {
		return cloneSchema(r.form.schema), nil
	}
	return r.CreateElicitationRequest.Schema()
}

// Accept is [ElicitationSchema.Accept] against the form the client
// serves: its patterns were compiled once, when the request arrived, and
// the answer it builds is not checked again before it is sent. A handler
// that changed a copy of the schema calls the copy's Accept instead; the
// client then checks that answer against the form the agent sent.
func (r *ElicitationRequest) Accept(values map[string]any) (*schema.CreateElicitationResponse, error) {
	f, err := r.served()
	if err != nil {
		return nil, err
	}
	return f.accept(values)
}

// Validate is [ElicitationSchema.Validate] against the form the client
// serves, with its patterns compiled once per request: a form may check
// the user's values as they type.
func (r *ElicitationRequest) Validate(values map[string]any) error {
	f, err := r.served()
	if err != nil {
		return err
	}
	return f.check.Validate(values)
}

// served returns the form the client serves, or, on a request it did not
// serve, one decoded now.
func (r *ElicitationRequest) served() (*servedForm, error) {
	if r.form != nil && r.Mode == schema.ElicitationModeForm {
		return r.form, nil
	}
	s, err := r.CreateElicitationRequest.Schema()
	if err != nil {
		return nil, err
	}
	return newServedForm(s), nil
}

// CreateElicitationHandler serves elicitation/create.
type CreateElicitationHandler func(ctx context.Context, req *ElicitationRequest) (*schema.CreateElicitationResponse, error)

// ElicitationHandlers serve the agent's elicitation requests: structured
// questions (form mode) and out-of-band interactions such as an OAuth page
// (URL mode). Only the modes with Form or URL set are advertised; a request
// in another mode is answered -32602.
type ElicitationHandlers struct {
	Form bool // advertise and serve mode "form"
	URL  bool // advertise and serve mode "url"

	// Create answers elicitation/create. It runs on its own goroutine and may
	// block while the user answers; its ctx ends when the agent withdraws the
	// request or the connection closes. The requested schema is kept raw in
	// the request (RequestedSchema); req.Schema() hands out a copy of the
	// form the client decoded, to show, and req.Accept builds a checked
	// answer. A request with a session is placed in its stream: req.Turn
	// and req.Seq say after which event it came.
	//
	// An accept answer to a form is checked against the requested schema
	// (see [ElicitationSchema.Validate]) before it is sent: content that
	// does not match is never sent; the agent is answered -32603 and a
	// [Diagnostic] of kind [DiagInvalidElicitationAnswer] names the fields
	// at fault (not their values). Content built by req.Accept was checked
	// there and is not checked again.
	//
	// A form whose patterns are over Limits.MaxElicitationPatternBytes is
	// refused before Create runs (an error naming the limit, and a
	// "limit_exceeded" diagnostic).
	Create CreateElicitationHandler

	// Complete, if set, receives elicitation/complete notifications (URL
	// mode), in order, on a goroutine of the client's. Unknown ids are the
	// handler's to ignore.
	Complete func(elicitationID string)
}

// placeElicitation runs on the reader goroutine: it notes which turn was
// running, and how far its events went, when the request arrived.
func (c *Client) placeElicitation(in *inbound, params []byte) {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(params, &p) != nil || p.SessionID == "" {
		return
	}
	s := c.lookup(p.SessionID)
	if s == nil {
		return
	}
	s.mu.Lock()
	if t := s.turn; t != nil {
		in.turn, in.seq = t, t.log.seq
	}
	s.mu.Unlock()
}

func (c *Client) serveElicitation(ctx context.Context, in *inbound, params []byte) (any, error) {
	h := c.opts.Elicitation
	if h == nil || h.Create == nil {
		return nil, methodNotFound(schema.MethodElicitationCreate)
	}
	var wire schema.CreateElicitationRequest
	if err := decodeParams(params, &wire); err != nil {
		return nil, err
	}
	req := &ElicitationRequest{CreateElicitationRequest: &wire}
	if in != nil {
		req.Turn, req.Seq = in.turn, in.seq
	}
	if (req.Mode == "form" && !h.Form) || (req.Mode == "url" && !h.URL) || (req.Mode != "form" && req.Mode != "url") {
		return nil, &schema.Error{Code: schema.CodeInvalidParams, Message: "acp: elicitation mode " + string(req.Mode) + " is not supported by this client"}
	}
	if c.version == 2 {
		if err := checkElicitationV2(&wire); err != nil {
			return nil, err
		}
	}
	// A form is decoded, and its patterns compiled, once: here, before the
	// handler runs, so that one over the limits is refused without it;
	// req.Schema() hands the handler copies, req.Accept checks against it
	// (see elicitation_served.go).
	var schemaErr error
	if req.Mode == schema.ElicitationModeForm {
		var sch *schema.ElicitationSchema
		sch, schemaErr = schema.ParseElicitationSchemaLimit(req.RequestedSchema, c.opts.Limits.MaxElicitationPatternBytes)
		if errors.Is(schemaErr, schema.ErrLimitExceeded) {
			return nil, schemaErr
		}
		if sch != nil {
			sch.AnyValue = c.version == 2
			req.form = newServedForm(sch)
		}
	}
	resp, err := runHandler(ctx, schema.MethodElicitationCreate, func(ctx context.Context) (*schema.CreateElicitationResponse, error) {
		return h.Create(ctx, req)
	})
	if err != nil {
		return nil, err
	}
	if resp == nil {
		return nil, &schema.Error{Code: schema.CodeInternalError, Message: "acp: the elicitation handler returned no answer"}
	}
	if req.Mode == schema.ElicitationModeForm && resp.Action == schema.ElicitationAccept {
		// An answer req.Accept built was checked there; any other is
		// checked now.
		serr := schemaErr
		if serr == nil {
			serr = req.form.checkAnswer(resp.Content)
		}
		if serr != nil {
			c.diag(DiagInvalidElicitationAnswer, serr.Error(), nil)
			return nil, &schema.Error{Code: schema.CodeInternalError, Message: serr.Error()}
		}
	}
	return resp, nil
}

// checkElicitationV2 holds a v2 agent's elicitation/create to what v2
// makes stricter than v1 (same method, same handlers, same answer): the
// scope is a session (sessionId, optionally toolCallId) or a request
// (requestId), exactly one (v2's oneOf; v1's anyOf allows both), and a
// form's requestedSchema names its type and properties (v2 requires them;
// v1 defaults them). Either is answered -32602 before Create runs.
func checkElicitationV2(req *schema.CreateElicitationRequest) error {
	invalid := func(why string) error {
		return &schema.Error{Code: schema.CodeInvalidParams, Message: "acp: v2 elicitation/create: " + why}
	}
	hasReq := len(req.RequestID) > 0 && !wirejson.IsNull(req.RequestID)
	if (req.SessionID != "") == hasReq {
		return invalid("it must be scoped to exactly one of a session (sessionId) or a request (requestId)")
	}
	if req.Mode == schema.ElicitationModeForm {
		var w struct {
			Type       json.RawMessage `json:"type"`
			Properties json.RawMessage `json:"properties"`
		}
		if json.Unmarshal(req.RequestedSchema, &w) != nil || len(w.Type) == 0 || len(w.Properties) == 0 {
			return invalid("requestedSchema must name its type and properties")
		}
	}
	return nil
}
