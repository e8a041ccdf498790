package acp

import (
	"context"
)

type rootsKey struct{}

// ContextWithRoots returns a copy of ctx carrying roots as the workspace
// roots of the session a request belongs to, as the client does for every
// fs/* and terminal/* handler call. It exists for calling handlers outside a
// client, as tests do.
func ContextWithRoots(ctx context.Context, roots []string) context.Context {
	return context.WithValue(ctx, rootsKey{}, roots)
}

// withRoots attaches the session's roots (cwd first, then its additional
// directories) to the context given to fs and terminal handlers.
func withRoots(ctx context.Context, roots []string) context.Context {
	return ContextWithRoots(ctx, roots)
}

// RootsFromContext returns the workspace roots of the session an agent request
// belongs to: the session's cwd, then its additional directories. The client
// attaches them to the context of every fs/* and terminal/* handler call; it
// returns nil elsewhere. The ready handlers of package workspace confine the
// agent to these roots when they are not given roots of their own.
func RootsFromContext(ctx context.Context) []string {
	r, _ := ctx.Value(rootsKey{}).([]string)
	return r
}
