package acp

import (
	"sync"
	"testing"
)

// route's cache of the last lookup is never used once the sessions
// changed: each step here would read the earlier session (or a deleted
// one) if setLocked or deleteLocked did not count the change.
func TestRouteSeesEveryChange(t *testing.T) {
	c := &Client{routing: clientRouting{sessions: map[string]*Session{}}}
	set := func(s *Session) { c.mu.Lock(); c.routing.setLocked(s.id, s); c.mu.Unlock() }
	del := func(id string) { c.mu.Lock(); c.routing.deleteLocked(id); c.mu.Unlock() }
	a1, a2, b := &Session{id: "a"}, &Session{id: "a"}, &Session{id: "b"}

	if got := c.route([]byte("a")); got != nil {
		t.Fatalf("route(a) before any session = %p, want nil", got)
	}
	set(a1)
	for range 2 { // a miss, then a hit
		if got := c.route([]byte("a")); got != a1 {
			t.Fatalf("route(a) = %p, want a1 %p", got, a1)
		}
	}
	set(a2) // loaded again: the new handle gets the traffic
	if got := c.route([]byte("a")); got != a2 {
		t.Fatalf("route(a) after a load again = %p, want a2 %p", got, a2)
	}
	set(b)
	if got := c.route([]byte("b")); got != b {
		t.Fatalf("route(b) = %p, want b", got)
	}
	if got := c.route([]byte("a")); got != a2 {
		t.Fatalf("route(a) after b = %p, want a2", got)
	}
	del("a")
	if got := c.route([]byte("a")); got != nil {
		t.Fatalf("route(a) after its delete = %p, want nil", got)
	}
	if got := c.routing.last.Load(); got == a2 {
		t.Error("the deleted session is still held by route's cache")
	}
	if got := c.route([]byte("b")); got != b {
		t.Fatalf("route(b) after a's delete = %p, want b", got)
	}
}

// A lookup that starts after a change returns is never answered from
// before it, with readers and writers side by side (run under -race).
func TestRouteConcurrentChanges(t *testing.T) {
	c := &Client{routing: clientRouting{sessions: map[string]*Session{}}}
	const rounds = 2000
	sessions := make([]*Session, rounds)
	for i := range sessions {
		sessions[i] = &Session{id: "s"}
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 2 { // readers that keep the cache busy
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					c.route([]byte("s"))
				}
			}
		})
	}
	for i, s := range sessions {
		c.mu.Lock()
		c.routing.setLocked("s", s)
		c.mu.Unlock()
		if got := c.route([]byte("s")); got != s {
			close(stop)
			wg.Wait()
			t.Fatalf("round %d: route = %p, want the session just set, %p", i, got, s)
		}
	}
	close(stop)
	wg.Wait()
}
