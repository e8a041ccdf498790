package acp

import (
	"context"
	"github.com/acpclient/acp/schema"
)

// The handlers of the agent's fs/* and terminal/* requests (v1 only):
// what a client serves them with. The wire types are in fs_types.go.

// ReadTextFileHandler serves fs/read_text_file.
type ReadTextFileHandler func(ctx context.Context, req *schema.ReadTextFileRequest) (*schema.ReadTextFileResponse, error)

// WriteTextFileHandler serves fs/write_text_file.
type WriteTextFileHandler func(ctx context.Context, req *schema.WriteTextFileRequest) (*schema.WriteTextFileResponse, error)

// CreateTerminalHandler serves terminal/create.
type CreateTerminalHandler func(ctx context.Context, req *schema.CreateTerminalRequest) (*schema.CreateTerminalResponse, error)

// TerminalOutputHandler serves terminal/output.
type TerminalOutputHandler func(ctx context.Context, req *schema.TerminalOutputRequest) (*schema.TerminalOutputResponse, error)

// WaitForTerminalExitHandler serves terminal/wait_for_exit.
type WaitForTerminalExitHandler func(ctx context.Context, req *schema.WaitForTerminalExitRequest) (*schema.WaitForTerminalExitResponse, error)

// KillTerminalHandler serves terminal/kill.
type KillTerminalHandler func(ctx context.Context, req *schema.KillTerminalRequest) (*schema.KillTerminalResponse, error)

// ReleaseTerminalHandler serves terminal/release.
type ReleaseTerminalHandler func(ctx context.Context, req *schema.ReleaseTerminalRequest) (*schema.ReleaseTerminalResponse, error)

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
