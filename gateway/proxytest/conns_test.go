//go:build unix

package proxytest

import (
	"context"
	"net"
	"net/http"
	"sync"
)

// connCounter counts the TCP connections a backend served /acp requests
// on: the connections a proxy opened for clients' requests, not those of
// its health checks (/healthz). A proxy that keeps its upstream
// connections alive opens none per turn; one that does not opens one per
// POST.
type connCounter struct {
	mu   sync.Mutex
	seen map[net.Conn]bool
}

type connKey struct{}

// withConn is an http.Server's ConnContext: it puts the connection in
// each request's context, for connCounter.
func withConn(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// wrap counts the connection of each request h serves.
func (cc *connCounter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, ok := r.Context().Value(connKey{}).(net.Conn); ok {
			cc.mu.Lock()
			if cc.seen == nil {
				cc.seen = map[net.Conn]bool{}
			}
			cc.seen[c] = true
			cc.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

// count is how many connections carried /acp requests so far.
func (cc *connCounter) count() int {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return len(cc.seen)
}
