package acp

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// AuthRequiredError is the error of a call the agent refused with -32000
// (authentication required). It carries the agent's auth methods, so a
// caller can pick one (see [UsableAuthMethods]) and retry after
// [Client.Authenticate]. errors.Is(err, ErrAuthRequired) is true for it.
type AuthRequiredError struct {
	Err     *Error       // the agent's reply
	Methods []AuthMethod // the methods the agent offered in initialize
}

func (e *AuthRequiredError) Error() string {
	var b strings.Builder
	b.WriteString(e.Err.Error())
	if len(e.Methods) == 0 {
		b.WriteString(" (the agent offers no auth method)")
		return b.String()
	}
	b.WriteString("; the agent offers:")
	for _, m := range e.Methods {
		b.WriteString("\n  - ")
		b.WriteString(DescribeAuthMethod(m))
	}
	return b.String()
}

func (e *AuthRequiredError) Unwrap() error { return e.Err }

// authError turns a -32000 reply into an *AuthRequiredError.
func (c *Client) authError(e *Error) error {
	if e.Code != CodeAuthRequired {
		return e
	}
	return &AuthRequiredError{Err: e, Methods: c.init.AuthMethods}
}

// AuthMethodUsable reports whether m can be used with the environment that
// lookup describes (os.LookupEnv when nil): an agent method always; an
// env_var method when every variable it needs is set (the agent inherits the
// environment and reads them itself); a terminal method when the client
// advertised terminal auth — the caller then runs [TerminalLoginCommand].
// Unknown method types are never usable.
func AuthMethodUsable(m AuthMethod, terminalAuth bool, lookup func(string) (string, bool)) bool {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	switch m := m.(type) {
	case *AgentAuthMethod:
		return true
	case *EnvVarAuthMethod:
		for _, v := range m.Vars {
			if v.Optional != nil && *v.Optional {
				continue
			}
			if val, ok := lookup(v.Name); !ok || val == "" {
				return false
			}
		}
		return true
	case *TerminalAuthMethod:
		return terminalAuth
	}
	return false
}

// UsableAuthMethods returns the agent's methods that [AuthMethodUsable]
// accepts, env_var methods first (they need no user interaction), then
// agent methods, then terminal methods.
func (c *Client) UsableAuthMethods(lookup func(string) (string, bool)) []AuthMethod {
	var out []AuthMethod
	for _, m := range c.init.AuthMethods {
		if AuthMethodUsable(m, c.opts.TerminalAuth, lookup) {
			out = append(out, m)
		}
	}
	rank := func(m AuthMethod) int {
		switch m.(type) {
		case *EnvVarAuthMethod:
			return 0
		case *AgentAuthMethod:
			return 1
		}
		return 2
	}
	slices.SortStableFunc(out, func(a, b AuthMethod) int { return rank(a) - rank(b) })
	return out
}

// TerminalLoginCommand returns the interactive login command of a terminal
// auth method: the agent's own program and arguments (from agent, the
// command the connection was started with) with the method's args appended
// and its env applied over the agent's environment (spec: authentication,
// terminal methods). The caller runs it in a terminal, waits for exit 0,
// then reconnects and initializes again.
func TerminalLoginCommand(m *TerminalAuthMethod, agent *exec.Cmd) *exec.Cmd {
	args := append(slices.Clone(agent.Args[1:]), m.Args...)
	cmd := exec.Command(agent.Path, args...)
	cmd.Args[0] = agent.Args[0]
	cmd.Dir = agent.Dir
	env := agent.Env
	if env == nil {
		env = os.Environ()
	}
	env = slices.Clone(env)
	keys := make([]string, 0, len(m.Env))
	for k := range m.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, k+"=") })
		env = append(env, k+"="+m.Env[k])
	}
	cmd.Env = env
	return cmd
}

// DescribeAuthMethod says in one line what a method is and what it needs.
func DescribeAuthMethod(m AuthMethod) string {
	s := fmt.Sprintf("%s (%s)", m.MethodID(), m.MethodName())
	switch m := m.(type) {
	case *AgentAuthMethod:
		s += ": handled by the agent"
	case *EnvVarAuthMethod:
		var names []string
		for _, v := range m.Vars {
			names = append(names, v.Name)
		}
		s += ": set " + strings.Join(names, ", ")
	case *TerminalAuthMethod:
		s += ": run the agent's login command in a terminal"
		if len(m.Args) > 0 {
			s += " (agent args " + strings.Join(m.Args, " ") + ")"
		}
	case *UnknownAuthMethod:
		s += ": unsupported method type " + m.Type
	}
	if d := authDescription(m); d != "" {
		s += " — " + d
	}
	return s
}

func authDescription(m AuthMethod) string {
	switch m := m.(type) {
	case *AgentAuthMethod:
		return m.Description
	case *EnvVarAuthMethod:
		return m.Description
	case *TerminalAuthMethod:
		return m.Description
	}
	return ""
}
