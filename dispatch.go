package acp

import (
	"context"
	"encoding/json"
	"github.com/acpclient/acp/schema"
	"strings"
)

// onRequest runs on the reader goroutine for every agent request, before
// jrpc2 sees it. It sets up the request's context — cancelled by the
// agent's $/cancel_request, by a cancelled turn (permission requests) and by
// the end of the connection — and does the request's wire-order work.
func (c *Client) onRequest(g *agentConn, id []byte, method string, params []byte) *inbound {
	ctx, cancel := context.WithCancelCause(g.ctx)
	in := &inbound{id: string(id), method: method, ctx: ctx, cancel: cancel}
	switch {
	case method == schema.MethodSessionRequestPermission:
		if c.version == 2 {
			params = permissionParamsV1(params)
		}
		c.onPermissionRequest(in, params)
	case method == schema.MethodElicitationCreate:
		c.placeElicitation(in, params)
	case strings.HasPrefix(method, "fs/"), strings.HasPrefix(method, "terminal/"):
		var p struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(params, &p) == nil {
			if s := c.lookup(p.SessionID); s != nil {
				in.ctx = withRoots(ctx, s.roots)
			}
		}
	}
	return in
}

// dispatch serves one agent request on its own goroutine.
func (c *Client) dispatch(ctx context.Context, in *inbound, method string, params json.RawMessage) (result any, err error) {
	if o := c.opts.Observer; o != nil && o.Serve != nil {
		var end func(any, error)
		if ctx, end = c.observeServe(ctx, in, method, params); end != nil {
			defer func() { end(result, err) }()
		}
	}
	switch method {
	case schema.MethodSessionRequestPermission:
		if c.version == 2 {
			params = permissionParamsV1(params)
		}
		return c.servePermission(ctx, in, params)
	case schema.MethodFSReadTextFile:
		return serve(ctx, method, params, c.opts.FS.ReadTextFile)
	case schema.MethodFSWriteTextFile:
		return serve(ctx, method, params, c.opts.FS.WriteTextFile)
	case schema.MethodTerminalCreate:
		return serve(ctx, method, params, c.opts.Terminal.Create)
	case schema.MethodTerminalOutput:
		return serve(ctx, method, params, c.opts.Terminal.Output)
	case schema.MethodTerminalWaitForExit:
		return serve(ctx, method, params, c.opts.Terminal.WaitForExit)
	case schema.MethodTerminalKill:
		return serve(ctx, method, params, c.opts.Terminal.Kill)
	case schema.MethodTerminalRelease:
		return serve(ctx, method, params, c.opts.Terminal.Release)
	case schema.MethodElicitationCreate:
		return c.serveElicitation(ctx, in, params)
	case schema.MethodMCPMessage:
		return c.serveMCPMessage(ctx, params)
	}
	if strings.HasPrefix(method, "_") && c.opts.ExtMethod != nil {
		h := c.opts.ExtMethod
		return runHandler(ctx, method, func(ctx context.Context) (any, error) {
			return h(ctx, method, params)
		})
	}
	return nil, methodNotFound(method)
}

// serve decodes params into Req and runs f; a nil f is a method the client
// does not serve (and did not advertise). A nil result is sent as {}: the
// spec's empty results are objects.
func serve[Req, Res any, H ~func(context.Context, *Req) (*Res, error)](ctx context.Context, method string, params json.RawMessage, f H) (any, error) {
	if f == nil {
		return nil, methodNotFound(method)
	}
	var req Req
	if err := decodeParams(params, &req); err != nil {
		return nil, err
	}
	return serveDecoded(ctx, method, &req, f)
}

// serveDecoded runs f on req, which the caller decoded (and checked).
func serveDecoded[Req, Res any, H ~func(context.Context, *Req) (*Res, error)](ctx context.Context, method string, req *Req, f H) (any, error) {
	res, err := runHandler(ctx, method, func(ctx context.Context) (*Res, error) {
		return f(ctx, req)
	})
	if err != nil {
		return nil, err
	}
	if res == nil {
		return struct{}{}, nil
	}
	return res, nil
}

func decodeParams(params json.RawMessage, v any) error {
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return invalidParams(err)
	}
	return nil
}

// ExtMethodHandler serves the agent's extension requests (methods whose
// names start with "_"). Its result is sent as the reply's result; return an
// [*schema.Error] to choose the error code.
type ExtMethodHandler func(ctx context.Context, method string, params json.RawMessage) (any, error)

// ExtNotificationHandler receives the agent's extension notifications.
type ExtNotificationHandler func(method string, params json.RawMessage)
