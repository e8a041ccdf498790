package acp

import (
	"fmt"
	"strings"

	"github.com/acpclient/acp/internal/agenttext"
	"github.com/acpclient/acp/schema"
)

// AuthRequiredError is the error of a call the agent refused with -32000
// (authentication required). It carries the agent's auth methods, so a
// caller can pick one (see [schema.UsableAuthMethods]) and retry after
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
