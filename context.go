package acp

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
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

// cleanRoot validates a workspace root (absolute, no NUL byte) and cleans
// it lexically, as filepath.Abs does for a session's cwd, so that the agent
// is told the directory the handlers confine it to: "/ws/a/../.." is "/",
// never something under /ws/a. Package workspace cleans the roots it is
// given by the same rule.
func cleanRoot(dir string) (string, error) {
	switch {
	case strings.IndexByte(dir, 0) >= 0:
		return "", fmt.Errorf("%q contains a NUL byte", dir)
	case !filepath.IsAbs(dir):
		return "", fmt.Errorf("%q is not absolute", dir)
	}
	return filepath.Clean(dir), nil
}
