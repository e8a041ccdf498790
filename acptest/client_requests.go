package acptest

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/acpclient/acp/schema"
)

// This file holds the agent→client requests a script makes through a
// Session. Each blocks until the client answers or the connection ends
// (not when the turn is cancelled: the client must still answer, e.g. a
// permission request with the "cancelled" outcome). An error reply is
// returned as *Error.

// DefaultPermissionOptions are offered when RequestPermission gets nil
// options: "allow" (allow_once) and "reject" (reject_once).
var DefaultPermissionOptions = []schema.PermissionOption{
	{OptionID: "allow", Name: "Allow", Kind: "allow_once"},
	{OptionID: "reject", Name: "Reject", Kind: "reject_once"},
}

// RequestPermission sends session/request_permission and returns the
// client's outcome object, e.g. {"outcome":"selected","optionId":"allow"}
// or {"outcome":"cancelled"} (see [ParseOutcome], or [Session.AskPermission]
// for the typed form). toolCall is a
// [ToolCallSpec] (sent as a ToolCallUpdate with its set fields), a string
// (just the toolCallId) or any raw object; options is a
// []schema.PermissionOption, any raw list, or nil for
// [DefaultPermissionOptions].
func (s *Session) RequestPermission(toolCall any, options any) (outcome json.RawMessage, err error) {
	switch tc := toolCall.(type) {
	case ToolCallSpec:
		toolCall = tc.object("")
	case *ToolCallSpec:
		toolCall = tc.object("")
	case string:
		toolCall = map[string]any{"toolCallId": tc}
	}
	if options == nil {
		options = DefaultPermissionOptions
	}
	if s.isV2() {
		return s.requestPermissionV2(toolCall, options)
	}
	res, err := s.Call(s.ctx, schema.MethodSessionRequestPermission, map[string]any{
		"sessionId": s.st.id, "toolCall": toolCall, "options": options,
	})
	if err != nil {
		return nil, err
	}
	var r struct {
		Outcome json.RawMessage `json:"outcome"`
	}
	if err := json.Unmarshal(res, &r); err != nil || r.Outcome == nil {
		return nil, errors.New("acptest: permission reply without outcome: " + string(res))
	}
	return r.Outcome, nil
}

// AskPermission is the typed form of [Session.RequestPermission]: it sends
// session/request_permission about tc, offering options (none means
// [DefaultPermissionOptions]), and returns the client's outcome decoded as
// the acp package decodes it, so that an outcome without "outcome", or
// "selected" without an optionId, is an error. Use RequestPermission to
// send malformed requests.
func (s *Session) AskPermission(tc ToolCallSpec, options ...schema.PermissionOption) (schema.PermissionOutcome, error) {
	var opts any = DefaultPermissionOptions
	if len(options) > 0 {
		opts = options
	}
	raw, err := s.RequestPermission(tc, opts)
	if err != nil {
		return schema.PermissionOutcome{}, err
	}
	var out schema.PermissionOutcome
	if err := json.Unmarshal(raw, &out); err != nil {
		return schema.PermissionOutcome{}, fmt.Errorf("acptest: the client's permission outcome %s: %w", raw, err)
	}
	return out, nil
}

// ParseOutcome reads a permission outcome: the selected option id, or
// cancelled. Any other outcome is an error.
func ParseOutcome(outcome json.RawMessage) (optionID string, cancelled bool, err error) {
	var o struct {
		Outcome  string `json:"outcome"`
		OptionID string `json:"optionId"`
	}
	if err := json.Unmarshal(outcome, &o); err != nil {
		return "", false, err
	}
	switch o.Outcome {
	case "selected":
		return o.OptionID, false, nil
	case "cancelled":
		return "", true, nil
	}
	return "", false, errors.New("acptest: unknown permission outcome " + string(outcome))
}

// ReadTextFile calls fs/read_text_file; line and limit 0 are omitted.
func (s *Session) ReadTextFile(path string, line, limit int) (string, error) {
	p := map[string]any{"sessionId": s.st.id, "path": path}
	if line > 0 {
		p["line"] = line
	}
	if limit > 0 {
		p["limit"] = limit
	}
	res, err := s.Call(s.ctx, schema.MethodFSReadTextFile, p)
	if err != nil {
		return "", err
	}
	var r struct {
		Content string `json:"content"`
	}
	err = json.Unmarshal(res, &r)
	return r.Content, err
}

// WriteTextFile calls fs/write_text_file.
func (s *Session) WriteTextFile(path, content string) error {
	_, err := s.Call(s.ctx, schema.MethodFSWriteTextFile, map[string]any{
		"sessionId": s.st.id, "path": path, "content": content,
	})
	return err
}

// Terminal describes the command of [Session.CreateTerminal]. Empty fields
// are omitted.
type Terminal struct {
	Command         string
	Args            []string
	Env             map[string]string // sent as [{name, value}]
	Cwd             string
	OutputByteLimit int64
}

// CreateTerminal calls terminal/create and returns the terminal id.
func (s *Session) CreateTerminal(t Terminal) (terminalID string, err error) {
	p := map[string]any{"sessionId": s.st.id, "command": t.Command}
	if t.Args != nil {
		p["args"] = t.Args
	}
	if t.Env != nil {
		env := []map[string]string{}
		for _, k := range slices.Sorted(maps.Keys(t.Env)) {
			env = append(env, map[string]string{"name": k, "value": t.Env[k]})
		}
		p["env"] = env
	}
	if t.Cwd != "" {
		p["cwd"] = t.Cwd
	}
	if t.OutputByteLimit > 0 {
		p["outputByteLimit"] = t.OutputByteLimit
	}
	res, err := s.Call(s.ctx, schema.MethodTerminalCreate, p)
	if err != nil {
		return "", err
	}
	var r struct {
		TerminalID string `json:"terminalId"`
	}
	err = json.Unmarshal(res, &r)
	return r.TerminalID, err
}

// TerminalOutput calls terminal/output and returns the raw result
// ({output, truncated, exitStatus?}).
func (s *Session) TerminalOutput(terminalID string) (json.RawMessage, error) {
	return s.terminalCall(schema.MethodTerminalOutput, terminalID)
}

// WaitForTerminalExit calls terminal/wait_for_exit and returns the raw
// result ({exitCode?, signal?}).
func (s *Session) WaitForTerminalExit(terminalID string) (json.RawMessage, error) {
	return s.terminalCall(schema.MethodTerminalWaitForExit, terminalID)
}

// KillTerminal calls terminal/kill.
func (s *Session) KillTerminal(terminalID string) error {
	_, err := s.terminalCall(schema.MethodTerminalKill, terminalID)
	return err
}

// ReleaseTerminal calls terminal/release.
func (s *Session) ReleaseTerminal(terminalID string) error {
	_, err := s.terminalCall(schema.MethodTerminalRelease, terminalID)
	return err
}

func (s *Session) terminalCall(method, terminalID string) (json.RawMessage, error) {
	return s.Call(s.ctx, method, map[string]any{"sessionId": s.st.id, "terminalId": terminalID})
}
