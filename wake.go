package acp

// wake.go holds the reader goroutine's owed wake-ups: the notifiers it held
// while it logged plain text chunks (see notifier), fired once it has
// dispatched every line of a read.

import "sync"

// readerWakes lists the notifiers owed a fire. Its own lock guards it,
// taken with no session's lock held.
type readerWakes struct {
	mu   sync.Mutex
	owed []owedWake
}

// owedWake is a notifier owed a fire and the session whose lock guards it.
type owedWake struct {
	s *Session
	n *notifier
}

// add lists n, which unhold reported owed; once per flush at most.
func (w *readerWakes) add(s *Session, n *notifier) {
	w.mu.Lock()
	w.owed = append(w.owed, owedWake{s, n})
	w.mu.Unlock()
}

// onDrained is the wire's Drained hook, on the reader goroutine: every line
// read so far is dispatched, and the reader is about to read again (it may
// wait for the agent there) or to hand jrpc2 a line. It fires what the
// lines' chunks owe, so a consumer that caught up sees them now.
func (c *Client) onDrained() {
	w := &c.wakes
	w.mu.Lock()
	owed := w.owed
	w.owed = nil
	w.mu.Unlock()
	for _, o := range owed {
		o.s.mu.Lock()
		o.n.flush()
		o.s.mu.Unlock()
	}
}
