package schema

import (
	"encoding/json"
)

// Wire types of the agent→client fs/* and terminal/* methods, shaped after
// the v1 schema. Optional scalars are pointers so that an absent field stays
// distinguishable from a zero one (line 0, exit code 0).

// ReadTextFileRequest is the params of fs/read_text_file.
type ReadTextFileRequest struct {
	SessionID string `json:"sessionId"`
	// Path is absolute, in the agent's view of the file system.
	Path string `json:"path"`
	// Line is the 1-based line to start at; nil means the first line.
	Line *uint32 `json:"line,omitempty"`
	// Limit is the maximum number of lines to return; nil means all.
	Limit *uint32         `json:"limit,omitempty"`
	Meta  json.RawMessage `json:"_meta,omitempty"`
}

// ReadTextFileResponse is the result of fs/read_text_file.
type ReadTextFileResponse struct {
	Content string          `json:"content"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// WriteTextFileRequest is the params of fs/write_text_file.
type WriteTextFileRequest struct {
	SessionID string          `json:"sessionId"`
	Path      string          `json:"path"`
	Content   string          `json:"content"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// WriteTextFileResponse is the (empty) result of fs/write_text_file; it
// marshals as {} rather than null, as the schema types it as an object.
type WriteTextFileResponse struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// CreateTerminalRequest is the params of terminal/create.
type CreateTerminalRequest struct {
	SessionID string `json:"sessionId"`
	// Command is run directly, without a shell.
	Command string        `json:"command"`
	Args    []string      `json:"args,omitempty"`
	Env     []EnvVariable `json:"env,omitempty"`
	// Cwd is absolute; empty means the client's choice.
	Cwd string `json:"cwd,omitempty"`
	// OutputByteLimit caps the retained output; nil means the client's
	// default.
	OutputByteLimit *uint64         `json:"outputByteLimit,omitempty"`
	Meta            json.RawMessage `json:"_meta,omitempty"`
}

// CreateTerminalResponse is the result of terminal/create.
type CreateTerminalResponse struct {
	TerminalID string          `json:"terminalId"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// TerminalOutputRequest is the params of terminal/output.
type TerminalOutputRequest struct {
	SessionID  string          `json:"sessionId"`
	TerminalID string          `json:"terminalId"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// TerminalOutputResponse is the result of terminal/output.
type TerminalOutputResponse struct {
	Output string `json:"output"`
	// Truncated reports that output was dropped from the beginning to stay
	// within the byte limit.
	Truncated bool `json:"truncated"`
	// ExitStatus is nil while the command runs.
	ExitStatus *TerminalExitStatus `json:"exitStatus,omitempty"`
	Meta       json.RawMessage     `json:"_meta,omitempty"`
}

// TerminalExitStatus tells how a terminal's command ended: ExitCode for a
// normal exit, Signal (e.g. "SIGKILL") when a signal ended it.
type TerminalExitStatus struct {
	ExitCode *uint32         `json:"exitCode,omitempty"`
	Signal   *string         `json:"signal,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// WaitForTerminalExitRequest is the params of terminal/wait_for_exit.
type WaitForTerminalExitRequest struct {
	SessionID  string          `json:"sessionId"`
	TerminalID string          `json:"terminalId"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// WaitForTerminalExitResponse is the result of terminal/wait_for_exit. Unlike
// [TerminalOutputResponse] it carries the exit status flat, not nested.
type WaitForTerminalExitResponse struct {
	ExitCode *uint32         `json:"exitCode,omitempty"`
	Signal   *string         `json:"signal,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// KillTerminalRequest is the params of terminal/kill.
type KillTerminalRequest struct {
	SessionID  string          `json:"sessionId"`
	TerminalID string          `json:"terminalId"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// KillTerminalResponse is the (empty) result of terminal/kill.
type KillTerminalResponse struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ReleaseTerminalRequest is the params of terminal/release.
type ReleaseTerminalRequest struct {
	SessionID  string          `json:"sessionId"`
	TerminalID string          `json:"terminalId"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// ReleaseTerminalResponse is the (empty) result of terminal/release.
type ReleaseTerminalResponse struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}
