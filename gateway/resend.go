package gateway

// A reverse proxy may send one of the client's POSTs to the gateway twice.
// HAProxy's retry-on empty-response and nginx's proxy_next_upstream
// non_idempotent (docs/deploy: both needed so that a rolling restart
// loses no turn) resend a request when the backend closed the connection
// without answering it; and the backend can have read it first: Go's
// http.Server closes an idle keep-alive connection (IdleTimeout,
// SetKeepAlivesEnabled(false), Shutdown) even when the next request has
// arrived in its buffer, and then serves that request on a connection
// it can no longer answer on. (acp serve no longer closes them at a
// drain's start, and after Drain nothing is forwarded; nginx sends its
// copy to the next backend, which this cannot help.) The second copy,
// forwarded, would run a prompt twice; refused by a draining gateway, it
// would answer the client "not delivered" for a prompt the agent is
// running, and a supervised client would send it again (a turn answered
// twice, seen behind HAProxy in TestRollingRestart).
//
// So a request whose id is that of a request of the same connection still
// awaiting the agent's answer, or answered within resentWindow (one of the
// last answeredKept), is taken for such a copy: answered 202 and not
// forwarded. The answer the first copy gets reaches the client as usual.
// JSON-RPC ids identify a request among those in flight, and ACP clients
// number theirs (the TypeScript SDK, package remote): a client that reused
// an id within seconds of its answer would see that request dropped.
// Only Streamable HTTP: a WebSocket is one connection, never resent.

import (
	"hash/maphash"
	"time"
)

// answeredKept and resentWindow bound what a connection keeps of the
// requests it answered: a proxy resends at once, within milliseconds of
// its first try's failure.
const (
	answeredKept = 16
	resentWindow = 10 * time.Second
)

// idSeed hashes the answered ids (a connection keeps 32 bytes per id, a
// hash and a time, whatever the id's length: 512 bytes in all).
var idSeed = maphash.MakeSeed()

// answeredIDs is a ring of the last answeredKept request ids a connection
// answered, by hash, guarded by conn.mu.
type answeredIDs struct {
	ring [answeredKept]struct {
		h  uint64
		at time.Time
	}
	next int
}

// add records that the request of id key was answered now.
func (a *answeredIDs) add(key string, now time.Time) {
	a.ring[a.next].h = maphash.String(idSeed, key)
	a.ring[a.next].at = now
	a.next = (a.next + 1) % answeredKept
}

// has reports whether the request of id key was answered within
// resentWindow of now.
func (a *answeredIDs) has(key string, now time.Time) bool {
	h := maphash.String(idSeed, key)
	for _, e := range a.ring {
		if e.h == h && !e.at.IsZero() && now.Sub(e.at) < resentWindow {
			return true
		}
	}
	return false
}

// resentLocked reports whether the client request of id key is a copy of
// one the connection has already forwarded (the rule above). c.mu is
// held.
func (c *conn) resentLocked(key string) bool {
	if _, inFlight := c.pending[key]; inFlight {
		return true
	}
	return c.answered.has(key, time.Now())
}
