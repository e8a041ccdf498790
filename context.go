package acp

import "context"

type rootsKey struct{}

// withRoots attaches the session's roots (cwd first, then its additional
// directories) to the context given to fs and terminal handlers.
func withRoots(ctx context.Context, roots []string) context.Context {
	return context.WithValue(ctx, rootsKey{}, roots)
}

// RootsFromContext returns the workspace roots of the session an agent request
// belongs to: the session's cwd, then its additional directories. The client
// attaches them to the context of every fs/* and terminal/* handler call; it
// returns nil elsewhere. The ready [WorkspaceFS] and [TerminalManager] confine
// the agent to these roots when they are not given roots of their own.
func RootsFromContext(ctx context.Context) []string {
	r, _ := ctx.Value(rootsKey{}).([]string)
	return r
}
