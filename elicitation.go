package acp

import "context"

// CreateElicitationHandler serves elicitation/create.
type CreateElicitationHandler func(ctx context.Context, req *CreateElicitationRequest) (*CreateElicitationResponse, error)

// ElicitationHandler is the old name of [ElicitationHandlers].
//
// Deprecated: Use ElicitationHandlers.
type ElicitationHandler = ElicitationHandlers

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
	// the request (RequestedSchema).
	Create CreateElicitationHandler

	// Complete, if set, receives elicitation/complete notifications (URL
	// mode), in order, on a goroutine of the client's. Unknown ids are the
	// handler's to ignore.
	Complete func(elicitationID string)
}

func (c *Client) serveElicitation(ctx context.Context, params []byte) (any, error) {
	h := c.opts.Elicitation
	if h == nil || h.Create == nil {
		return nil, methodNotFound("elicitation/create")
	}
	var req CreateElicitationRequest
	if err := decodeParams(params, &req); err != nil {
		return nil, err
	}
	if (req.Mode == "form" && !h.Form) || (req.Mode == "url" && !h.URL) || (req.Mode != "form" && req.Mode != "url") {
		return nil, &Error{Code: CodeInvalidParams, Message: "acp: elicitation mode " + string(req.Mode) + " is not supported by this client"}
	}
	return runHandler(ctx, "elicitation/create", func(ctx context.Context) (*CreateElicitationResponse, error) {
		return h.Create(ctx, &req)
	})
}
