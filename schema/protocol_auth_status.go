package schema

import "encoding/json"

// Wire types of the agent's auth status (schema 1.29.0, unstable):
// auth/status asks for it, auth/status_update tells of a change. The
// client's side of it is in auth_status.go.
//
// Unstable: follows schema.unstable.json; may change.

// AuthStatus is the result of auth/status and the params of
// auth/status_update: whether the agent can start sessions without the user
// signing in (State, the only field to act on) and, for display, the
// accounts it has configured.
//
// Unstable: follows schema.unstable.json; may change.
type AuthStatus struct {
	State    AuthState       `json:"state"`
	Accounts []AuthAccount   `json:"accounts,omitzero"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// AuthState is the agent's overall authentication state. A value the
// schema does not list is kept, and means [AuthStateUnknown].
//
// Unstable: follows schema.unstable.json; may change.
type AuthState string

// Unstable: follows schema.unstable.json; may change.
const (
	// AuthAuthenticated: credentials are configured (not necessarily
	// valid).
	AuthAuthenticated AuthState = "authenticated"
	// AuthUnauthenticated: the user needs to sign in.
	AuthUnauthenticated AuthState = "unauthenticated"
	// AuthNotRequired: no sign-in is needed (a local model, say).
	AuthNotRequired AuthState = "not_required"
	// AuthStateUnknown: the agent cannot tell now.
	AuthStateUnknown AuthState = "unknown"
)

// AuthAccount is an account or credential the agent has configured, for
// display only.
//
// Unstable: follows schema.unstable.json; may change.
type AuthAccount struct {
	Label        string          `json:"label"`
	Active       *bool           `json:"active,omitempty"`
	Name         *string         `json:"name,omitempty"`
	Email        *string         `json:"email,omitempty"`
	Organization *string         `json:"organization,omitempty"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
}
