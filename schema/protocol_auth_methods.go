package schema

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// What an auth method means, read from the method alone: whether the user
// can use it here, the command a terminal login runs, a one-line
// description, and the legacy _meta forms of a terminal login. Pure
// functions of protocol values; the client's side (which methods this
// client can use, the authenticate call) is in auth.go.

// AuthMethodUsable reports whether m can be used with the environment that
// lookup describes (os.LookupEnv when nil): an agent method always; an
// env_var method when every variable it needs is set (the agent inherits the
// environment and reads them itself); a terminal method — including an agent
// method that [AsTerminalAuthMethod] recognises as one — when the client
// advertised terminal auth: the caller then runs [TerminalLoginCommand].
// Unknown method types are never usable.
func AuthMethodUsable(m AuthMethod, terminalAuth bool, lookup func(string) (string, bool)) bool {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	if t, ok := AsTerminalAuthMethod(m); ok {
		m = t
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

// TerminalLoginCommand returns the interactive login command of a terminal
// auth method: the agent's own program and arguments (from agent, the
// command the connection was started with) with the method's args appended
// and its env applied over the agent's environment (spec: authentication,
// terminal methods). The caller runs it in a terminal, waits for exit 0,
// then reconnects and initializes again.
//
// A method that [AsTerminalAuthMethod] made from a legacy
// _meta["terminal-auth"] block is different: the block names a program and
// its whole argument list. The agent must not choose what the client runs,
// so the block's program is used only when it is the agent's own program
// (the same file as agent.Path): the login command is then that program
// with the block's args in place of the agent's. Otherwise the block's args
// are appended to the agent's command line like a terminal method's, which
// may not be what the agent meant; show the command before running it.
func TerminalLoginCommand(m *TerminalAuthMethod, agent *exec.Cmd) *exec.Cmd {
	args := append(slices.Clone(agent.Args[1:]), m.Args...)
	if b, ok := legacyTerminalBlock(m.Meta); ok && b.Command != "" &&
		slices.Equal(b.Args, m.Args) && maps.Equal(b.Env, m.Env) && sameProgram(b.Command, agent) {
		args = slices.Clone(m.Args)
	}
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
// An agent method that announces a terminal login in its _meta is described
// as the terminal method it is (see [AsTerminalAuthMethod]).
func DescribeAuthMethod(m AuthMethod) string {
	s := fmt.Sprintf("%s (%s)", m.MethodID(), m.MethodName())
	if t, ok := AsTerminalAuthMethod(m); ok {
		m = t
	}
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
		if b, ok := legacyTerminalBlock(m.Meta); ok && b.Command != "" && slices.Equal(b.Args, m.Args) {
			s += " (the agent suggests " + strings.Join(append([]string{b.Command}, b.Args...), " ") + ")"
		} else if len(m.Args) > 0 {
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

// AsTerminalAuthMethod returns m as a terminal method, or false if it is
// not one. A *TerminalAuthMethod is returned as it is. An agent method (one
// sent without "type") is a terminal method too when its _meta carries one
// of the conventions real agents used before terminal methods were
// standardised:
//
//   - _meta["terminal-auth"], an object {command, args, env, label}
//     (GitHub Copilot CLI, older claude-agent-acp, Mistral Vibe): a
//     program and its whole argument list (see [TerminalLoginCommand] for
//     how the program is used);
//   - _meta.type == "terminal" with _meta.args and _meta.env (Qwen Code):
//     the same meaning as a terminal method's args and env.
//
// The method returned then has the agent method's ID, Name and
// Description, the block's args and env (malformed ones read as empty) and
// the whole _meta in Meta. Such a method must never be passed to
// authenticate: the login happens in the terminal, then the client
// reconnects.
func AsTerminalAuthMethod(m AuthMethod) (*TerminalAuthMethod, bool) {
	switch m := m.(type) {
	case *TerminalAuthMethod:
		return m, m != nil
	case *AgentAuthMethod:
		if m == nil {
			return nil, false
		}
		if b, ok := legacyTerminalBlock(m.Meta); ok {
			return &TerminalAuthMethod{ID: m.ID, Name: m.Name, Description: m.Description,
				Args: b.Args, Env: b.Env, Meta: m.Meta}, true
		}
		var meta struct {
			Type json.RawMessage `json:"type"`
		}
		if json.Unmarshal(m.Meta, &meta) == nil {
			if typ, ok := jsonString(meta.Type); ok && typ == "terminal" {
				b := decodeTerminalBlock(m.Meta)
				return &TerminalAuthMethod{ID: m.ID, Name: m.Name, Description: m.Description,
					Args: b.Args, Env: b.Env, Meta: m.Meta}, true
			}
		}
	}
	return nil, false
}

// terminalBlock is the legacy description of a terminal login.
type terminalBlock struct {
	Command string
	Args    []string
	Env     map[string]string
}

// legacyTerminalBlock reads _meta["terminal-auth"]; ok is false when meta
// has no such object.
func legacyTerminalBlock(meta json.RawMessage) (terminalBlock, bool) {
	var w struct {
		Block json.RawMessage `json:"terminal-auth"`
	}
	if json.Unmarshal(meta, &w) != nil || len(w.Block) == 0 || w.Block[0] != '{' {
		return terminalBlock{}, false
	}
	return decodeTerminalBlock(w.Block), true
}

// decodeTerminalBlock reads command, args and env leniently: a field of
// the wrong shape reads as empty, an args entry that is not a string drops
// the whole list (a partial argument list could mean something else).
func decodeTerminalBlock(obj json.RawMessage) terminalBlock {
	var w struct {
		Command json.RawMessage `json:"command"`
		Args    json.RawMessage `json:"args"`
		Env     json.RawMessage `json:"env"`
	}
	var b terminalBlock
	if json.Unmarshal(obj, &w) != nil {
		return b
	}
	b.Command, _ = jsonString(w.Command)
	if json.Unmarshal(w.Args, &b.Args) != nil {
		b.Args = nil
	}
	if json.Unmarshal(w.Env, &b.Env) != nil {
		b.Env = nil
	}
	return b
}

// sameProgram reports whether command names the same file as the agent's
// program. A command without a path separator is looked up in PATH, as
// exec.Command would.
func sameProgram(command string, agent *exec.Cmd) bool {
	if !strings.ContainsAny(command, `/\`) {
		p, err := exec.LookPath(command)
		if err != nil {
			return false
		}
		command = p
	}
	agentPath := agent.Path
	if !filepath.IsAbs(agentPath) && agent.Dir != "" {
		agentPath = filepath.Join(agent.Dir, agentPath)
	}
	a, err := os.Stat(agentPath)
	if err != nil {
		return false
	}
	c, err := os.Stat(command)
	return err == nil && os.SameFile(a, c)
}

// UsableAuthMethods returns the methods (an initialize answer's
// AuthMethods) that [AuthMethodUsable] accepts, env_var methods first
// (they need no user interaction), then agent methods, then terminal
// methods. terminalAuth says whether the client offered terminal logins
// (its ClientCapabilities.Auth.Terminal). An agent method that announces
// a terminal login in its _meta is returned as the *TerminalAuthMethod
// that [AsTerminalAuthMethod] makes of it, so a type switch never mistakes
// it for one to pass to authenticate.
func UsableAuthMethods(methods []AuthMethod, terminalAuth bool, lookup func(string) (string, bool)) []AuthMethod {
	var out []AuthMethod
	for _, m := range methods {
		if t, ok := AsTerminalAuthMethod(m); ok {
			m = t
		}
		if AuthMethodUsable(m, terminalAuth, lookup) {
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
