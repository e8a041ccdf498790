package acp

import (
	"context"
	"encoding/json"
	"github.com/acpclient/acp/schema"
)

// The agent's auth status (schema 1.29.0, unstable): auth/status asks for
// it, auth/status_update tells of a change. The client keeps the latest it
// heard of either way (Client.AuthStatus), and hands every update to
// ClientOptions.OnAuthStatus. The wire types are in protocol_auth_status.go.
//
// Unstable: follows schema.unstable.json; may change.

// authStatus implements [Client.AuthStatus].
func (c *Client) authStatus(ctx context.Context) (*schema.AuthStatus, error) {
	if c.agent().AgentCapabilities.Auth.Status == nil {
		return nil, notSupported(schema.MethodAuthStatus, "auth.status")
	}
	var res schema.AuthStatus
	if err := c.call(ctx, schema.MethodAuthStatus, struct{}{}, &res); err != nil {
		return nil, err
	}
	c.keepAuthStatus(&res, false)
	return &res, nil
}

// keepAuthStatus queues a notified auth status for OnAuthStatus.
func (c *Client) keepAuthStatus(st *schema.AuthStatus, notified bool) {
	if h := c.opts.OnAuthStatus; h != nil && notified {
		v := *st
		c.events.Push(eventAuthStatus, int64(len(st.State))+int64(len(st.Accounts))*64, func() { h(v) })
	}
}

// onAuthStatusUpdate reads an auth/status_update notification. A
// malformed one is reported and changes nothing.
func (c *Client) onAuthStatusUpdate(method string, params []byte) {
	var st schema.AuthStatus
	if err := json.Unmarshal(params, &st); err != nil {
		c.diag(DiagBadNotification, "ignored a malformed "+method+": "+err.Error(), params)
		return
	}
	c.keepAuthStatus(&st, true)
}

// decodeAuthStatus reads params as the schema's AuthStatus, for the
// extension form _auth/status_update, whose shape is the agent's to choose.
func decodeAuthStatus(params []byte) (schema.AuthStatus, bool) {
	var st schema.AuthStatus
	if err := json.Unmarshal(params, &st); err != nil {
		return schema.AuthStatus{}, false
	}
	return st, true
}
