// Package workspace has ready handlers for the requests an ACP agent makes
// of its client's machine: [FS] serves fs/read_text_file and
// fs/write_text_file confined to workspace roots, and [Terminals] serves
// terminal/* by running commands with bounded output and ending their
// whole process tree on kill and release.
//
// Both are configured by their struct fields (the zero values are usable
// and confine the agent to the roots of the session a request belongs to,
// [acp.RootsFromContext]) and plug into a client through their Handlers
// methods:
//
//	fsys := &workspace.FS{}
//	tm := &workspace.Terminals{MaxTerminals: 16}
//	c, err := acp.Connect(ctx, transport, &acp.ClientOptions{
//		FS:       fsys.Handlers(),
//		Terminal: tm.Handlers(), // also ends terminals with their session and the client
//	})
//
// Every limit an agent could push (file size, scan length, output per
// terminal, terminals at once) has a default; a request over one is refused
// with an error that names it and wraps [schema.ErrLimitExceeded].
package workspace
