package acp

import (
	"fmt"
	"slices"
	"strings"

	"github.com/acpclient/acp/internal/agenttext"
	"github.com/acpclient/acp/schema"
)

// AuthRequiredError is the error of a call the agent refused with -32000
// (authentication required). It carries the agent's auth methods, so a
// caller can pick one (see [UsableAuthMethods]) and retry after
// [Client.Authenticate]. errors.Is(err, ErrAuthRequired) is true for it.
type AuthRequiredError struct {
	Err     *schema.Error       // the agent's reply
	Methods []schema.AuthMethod // the methods the agent offered in initialize
}

func (e *AuthRequiredError) Error() string {
	var b strings.Builder
	b.WriteString(e.Err.Error())
	if len(e.Methods) == 0 {
		b.WriteString(" (the agent offers no auth method)")
		return b.String()
	}
	b.WriteString("; the agent offers:")
	// The agent chose how many methods it offers and what they say: the
	// message names a few, each cut short (Methods keeps them all).
	shown := min(len(e.Methods), agenttext.MaxListItems)
	for _, m := range e.Methods[:shown] {
		b.WriteString("\n  - ")
		b.WriteString(agenttext.Text(schema.DescribeAuthMethod(m)))
	}
	if rest := len(e.Methods) - shown; rest > 0 {
		fmt.Fprintf(&b, "\n  - and %d more", rest)
	}
	return b.String()
}

func (e *AuthRequiredError) Unwrap() error { return e.Err }

// authError turns a -32000 reply into an *AuthRequiredError.
func (c *Client) authError(e *schema.Error) error {
	if e.Code != schema.CodeAuthRequired {
		return e
	}
	return &AuthRequiredError{Err: e, Methods: c.agent().AuthMethods}
}

// UsableAuthMethods returns the agent's methods that [schema.AuthMethodUsable]
// accepts, env_var methods first (they need no user interaction), then
// agent methods, then terminal methods. An agent method that announces a
// terminal login in its _meta is returned as the *TerminalAuthMethod that
// [schema.AsTerminalAuthMethod] makes of it, so a type switch never mistakes it
// for one to pass to [Client.Authenticate].
func (c *Client) UsableAuthMethods(lookup func(string) (string, bool)) []schema.AuthMethod {
	var out []schema.AuthMethod
	for _, m := range c.agent().AuthMethods {
		if t, ok := schema.AsTerminalAuthMethod(m); ok {
			m = t
		}
		if schema.AuthMethodUsable(m, c.opts.TerminalAuth, lookup) {
			out = append(out, m)
		}
	}
	rank := func(m schema.AuthMethod) int {
		switch m.(type) {
		case *schema.EnvVarAuthMethod:
			return 0
		case *schema.AgentAuthMethod:
			return 1
		}
		return 2
	}
	slices.SortStableFunc(out, func(a, b schema.AuthMethod) int { return rank(a) - rank(b) })
	return out
}
