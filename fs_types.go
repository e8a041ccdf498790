package acp

import (
	"context"
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

// ReadTextFileHandler serves fs/read_text_file.
type ReadTextFileHandler func(ctx context.Context, req *ReadTextFileRequest) (*ReadTextFileResponse, error)

// WriteTextFileHandler serves fs/write_text_file.
type WriteTextFileHandler func(ctx context.Context, req *WriteTextFileRequest) (*WriteTextFileResponse, error)

// CreateTerminalHandler serves terminal/create.
type CreateTerminalHandler func(ctx context.Context, req *CreateTerminalRequest) (*CreateTerminalResponse, error)

// TerminalOutputHandler serves terminal/output.
type TerminalOutputHandler func(ctx context.Context, req *TerminalOutputRequest) (*TerminalOutputResponse, error)

// WaitForTerminalExitHandler serves terminal/wait_for_exit.
type WaitForTerminalExitHandler func(ctx context.Context, req *WaitForTerminalExitRequest) (*WaitForTerminalExitResponse, error)

// KillTerminalHandler serves terminal/kill.
type KillTerminalHandler func(ctx context.Context, req *KillTerminalRequest) (*KillTerminalResponse, error)

// ReleaseTerminalHandler serves terminal/release.
type ReleaseTerminalHandler func(ctx context.Context, req *ReleaseTerminalRequest) (*ReleaseTerminalResponse, error)

// FileSystemHandlers serve the agent's fs/* requests. Each method is
// advertised (fs.readTextFile, fs.writeTextFile) exactly when its handler is
// set; the agent's call to an unset one is answered -32601. The zero value
// serves nothing. workspace.FS's Handlers method returns a ready set.
//
// The client calls a handler on a goroutine of its own per request, so calls
// run concurrently with each other and with every other handler. ctx is
// cancelled when the agent withdraws the request or the connection closes,
// and carries the session's roots (see [RootsFromContext]).
type FileSystemHandlers struct {
	ReadTextFile  ReadTextFileHandler
	WriteTextFile WriteTextFileHandler
}

// TerminalHandlers serve the agent's terminal/* requests, with hooks for the
// ends of sessions and of the client. The terminal capability is advertised
// when all five request handlers are set, and [Connect] refuses a set with
// only some of them (the protocol has one capability for all five). The zero
// value serves nothing. workspace.Terminals's Handlers method returns a
// ready set.
//
// Each request is served on its own goroutine, so handlers run concurrently:
// in particular Output and Kill are called while a WaitForExit for the same
// terminal is still blocked (that is how agents build timeouts), and
// implementations must allow it. ctx is as for [FileSystemHandlers].
type TerminalHandlers struct {
	Create      CreateTerminalHandler
	Output      TerminalOutputHandler
	WaitForExit WaitForTerminalExitHandler
	Kill        KillTerminalHandler
	Release     ReleaseTerminalHandler

	// CloseSession, if set, is called by [Session.Close] once session/close
	// has been answered (or has failed), on the goroutine that called
	// Session.Close, which waits for it: it should end the session's
	// terminals. Calls for different sessions may run at once, and
	// concurrently with request handlers and Close. It may call back into
	// the client.
	CloseSession func(sessionID string)

	// Close, if set, is called once by the first [Client.Close], on its
	// goroutine, after the connection has ended and the agent process is
	// gone; Client.Close returns its error. It should end every terminal
	// that is left. Request handlers the client stopped waiting for may
	// still be running. It may call the client's methods (they fail with
	// [ErrConnClosed]) but not Client.Close, which is waiting for it.
	Close func() error
}

// complete reports whether all five request handlers are set, and whether
// any is.
func (h *TerminalHandlers) complete() (all, some bool) {
	all = h.Create != nil && h.Output != nil && h.WaitForExit != nil && h.Kill != nil && h.Release != nil
	some = h.Create != nil || h.Output != nil || h.WaitForExit != nil || h.Kill != nil || h.Release != nil
	return all, some
}
