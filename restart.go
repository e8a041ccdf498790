package acp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/acpclient/acp/schema"
)

// RestartPolicy turns on supervision (ClientOptions.Restart): when the
// agent exits or its connection drops without [Client.Close], the client
// opens its [Transport] again (a new process for a CommandTransport, a new
// connection for a remote one), initializes with the same options and
// offered version, authenticates again and restores every open session,
// then carries on. The zero value selects the defaults of every field.
// See docs/SUPERVISION.md for what a restart guarantees and what it
// cannot.
type RestartPolicy struct {
	// MaxRestarts is how many restarts (attempts to start the agent again,
	// successful or not) the client makes within Window; one more death
	// ends the client with an error wrapping ErrTooManyRestarts,
	// ErrConnClosed and the last death's cause. Zero means 5.
	MaxRestarts int
	// Window is the period MaxRestarts counts in. Zero means one minute.
	Window time.Duration

	// MinBackoff and MaxBackoff bound the wait before a restart: the
	// first restart within Window starts at once, the k-th (k ≥ 2) after
	// MinBackoff·2^(k-2), at most MaxBackoff. Zero means 500ms and 30s.
	MinBackoff time.Duration
	MaxBackoff time.Duration

	// Reauthenticate, if set, authenticates the restarted agent; it is
	// called after initialize and before the sessions are restored. Calls
	// it makes on c with ctx (c.Authenticate(ctx, ...)) go to the new
	// connection; InitializeResponse is already the new agent's. Nil
	// repeats the last successful Client.Authenticate request, if there
	// was one. An error ends the client (retrying the same credentials
	// would fail again), with an error wrapping ErrConnClosed and it.
	Reauthenticate func(ctx context.Context, c *Client) error

	// OnRestart, if set, is told of each step of a restart, in order, on
	// the client's callback goroutine (as OnDiagnostic). It may call the
	// client; calls wait until the restart is over.
	OnRestart func(RestartEvent)

	// after is the timer the backoff waits on, now the clock the budget
	// counts by (tests replace them).
	after func(time.Duration) <-chan time.Time
	now   func() time.Time
}

// RestartPhase names a step of a restart, in [RestartEvent].
type RestartPhase string

const (
	// RestartDied: the agent's connection ended; Err says why (an
	// *ExitError for a process). A restart follows.
	RestartDied RestartPhase = "died"
	// RestartWaiting: the client waits Delay before attempt Attempt.
	RestartWaiting RestartPhase = "waiting"
	// RestartFailed: attempt Attempt failed (Err); another may follow. A
	// failed attempt counts in the budget, not in SessionState.Restarts.
	RestartFailed RestartPhase = "failed"
	// RestartRestored: the agent is back and the sessions restored,
	// except those in Lost. Calls go through again.
	RestartRestored RestartPhase = "restored"
	// RestartGaveUp: the client ended (Err is Client.Err): the budget was
	// spent, re-authentication failed, or Close was called.
	RestartGaveUp RestartPhase = "gave_up"
)

// RestartEvent is one step of a restart, for RestartPolicy.OnRestart.
type RestartEvent struct {
	Phase RestartPhase
	// Attempt counts the attempts of this restart from 1 (0 for
	// RestartDied).
	Attempt int
	// Connection is the number of the connection involved: 1 is the one
	// Connect opened, 2 the first restart's, and so on.
	Connection int
	// Delay is the backoff before the attempt, for RestartWaiting.
	Delay time.Duration
	// Err is why the agent died (RestartDied), why the attempt failed
	// (RestartFailed), or why the client ended (RestartGaveUp).
	Err error
	// Restored and Lost list the sessions brought back and those that
	// ended with ErrSessionLost, for RestartRestored: Lost those of every
	// attempt of the restart, one that failed included.
	Restored []string
	Lost     []string
}

// CodeNotDelivered is the JSON-RPC error code of an answer that says the
// request never reached the agent: a draining gateway refused it (package
// gateway's Drain), or the connection it was sent on had already closed
// (package remote answers so for a prompt whose POST got 404). Under
// supervision (ClientOptions.Restart) a prompt answered with it is sent
// again, once the restart that follows has restored its session, as the
// same Turn (with a new request id): the agent never saw the first one.
// Without supervision the turn fails with the error.
//
// Unstable: the code is this module's (the JSON-RPC range of
// implementation-defined server errors), not the protocol's, and may move
// with the RFD "Streamable HTTP & WebSocket transport".
const CodeNotDelivered = -32050

// ErrDrained is what a transport's connection ends with (wrapped) when the
// server drained it: it answered every request it received before it
// closed (package gateway's Drain), so a request still unanswered was
// never delivered to the agent. Package remote reports it for a gateway's
// drained connection. Under supervision the prompts in flight are then
// sent again after the restart, as for CodeNotDelivered, instead of
// failing with ErrAgentRestarted.
//
// Unstable: as CodeNotDelivered.
var ErrDrained = errors.New("acp: the server drained the connection")

// supervisor runs a client's restarts, one at a time.
type supervisor struct {
	p      RestartPolicy
	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	running bool
	stopped bool        // stop was called: no restart starts any more
	times   []time.Time // the restarts within the window, oldest first
}

func newSupervisor(p *RestartPolicy) *supervisor {
	s := &supervisor{p: *p}
	if s.p.MaxRestarts <= 0 {
		s.p.MaxRestarts = 5
	}
	s.p.Window = orDefault(s.p.Window, time.Minute)
	s.p.MinBackoff = orDefault(s.p.MinBackoff, 500*time.Millisecond)
	s.p.MaxBackoff = orDefault(s.p.MaxBackoff, 30*time.Second)
	if s.p.after == nil {
		s.p.after = time.After
	}
	if s.p.now == nil {
		s.p.now = time.Now
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// died starts a restart for the dead connection g, unless one runs (it
// sees g's death itself: g is its connection).
func (s *supervisor) died(c *Client, g *agentConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running || s.stopped {
		return
	}
	s.running = true
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		c.restart(g)
	}()
}

// stop makes a restart under way give up, and waits for it.
func (s *supervisor) stop() {
	s.mu.Lock()
	s.stopped = true // after this, no wg.Add: Wait below sees them all
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
}

// budget records a restart now and returns the backoff before it, or
// false when the restart would go over the budget.
func (s *supervisor) budget(now time.Time) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keep := s.times[:0]
	for _, t := range s.times {
		if now.Sub(t) < s.p.Window {
			keep = append(keep, t)
		}
	}
	s.times = keep
	if len(s.times) >= s.p.MaxRestarts {
		return 0, false
	}
	s.times = append(s.times, now)
	k := len(s.times)
	if k == 1 {
		return 0, true
	}
	d := s.p.MinBackoff
	for i := 2; i < k && d < s.p.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, s.p.MaxBackoff), true
}

// settled ends the run of the restart that made cur the connection,
// unless cur has died meanwhile: then the run goes on (connEnded's call to
// died saw it running, or will).
func (s *supervisor) settled(cur *agentConn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-cur.done:
		return false
	default:
	}
	s.running = false
	return true
}

// observe tells Observer.Restart, then RestartPolicy.OnRestart, of ev, on
// the callback goroutine (the Observer first, so that when OnRestart hears
// of a step its metrics are already recorded).
func (c *Client) observe(ev RestartEvent) {
	h := c.sup.p.OnRestart
	var o func(RestartEvent)
	if c.opts.Observer != nil {
		o = c.opts.Observer.Restart
	}
	if h == nil && o == nil {
		return
	}
	c.events.Push(eventRestart, 64, func() {
		if o != nil {
			failed := false
			func() {
				defer c.guard("Restart", &failed)
				o(ev)
			}()
		}
		if h != nil {
			h(ev)
		}
	})
}

// restart brings the agent back after dead ended, and the sessions with
// it; it runs on a goroutine of the supervisor's, one at a time.
func (c *Client) restart(dead *agentConn) {
	sup := c.sup
	c.observe(RestartEvent{Phase: RestartDied, Connection: dead.n, Err: dead.cause})
	cause := dead.cause
	last := dead
	n := dead.n
	attempt := 0
	// lostSoFar are the sessions this restart lost, on whichever attempt:
	// a session lost on an attempt that then failed is released, so the
	// next attempt does not try it, and would not report it.
	var lostSoFar []string
	for {
		last.kill() // what is left of the dead one (its process group, pipes)
		delay, ok := sup.budget(sup.p.now())
		if !ok {
			c.giveUp(fmt.Errorf("%w: %w: %d restarts within %v (RestartPolicy.MaxRestarts); the last death: %w", ErrConnClosed, ErrTooManyRestarts, sup.p.MaxRestarts, sup.p.Window, cause))
			return
		}
		attempt++
		n++
		if delay > 0 {
			c.observe(RestartEvent{Phase: RestartWaiting, Attempt: attempt, Connection: n, Delay: delay})
			select {
			case <-sup.p.after(delay):
			case <-sup.ctx.Done():
				c.giveUp(nil)
				return
			}
		}
		g, err := c.reconnect(sup.ctx, n)
		if sup.ctx.Err() != nil {
			if g != nil {
				g.kill()
			}
			c.giveUp(nil)
			return
		}
		if err != nil {
			var fatal *fatalRestartError
			if errors.As(err, &fatal) {
				if g != nil {
					g.kill()
				}
				c.giveUp(fmt.Errorf("%w: %w", ErrConnClosed, fatal.err))
				return
			}
			c.observe(RestartEvent{Phase: RestartFailed, Attempt: attempt, Connection: n, Err: err})
			cause = err
			if g != nil {
				last = g
				// An attempt whose agent died under its initialize failed
				// with ErrAgentRestarted (what a call on a dying supervised
				// connection gets); the death itself is the cause worth
				// keeping: an ExitError with the exit status and stderr,
				// and no ErrAgentRestarted in a given-up client's Err.
				select {
				case <-g.done:
					if g.cause != nil {
						cause = g.cause
					}
				default:
				}
			} else {
				last = dead
			}
			continue
		}
		restored, lost := c.restoreSessions(withConn(sup.ctx, g), g)
		lostSoFar = append(lostSoFar, lost...)
		if sup.ctx.Err() != nil {
			c.giveUp(nil)
			return
		}
		select {
		case <-g.done:
			// It died while restoring: try again (the sessions not restored
			// yet are still there; those restored are restored again).
			c.observe(RestartEvent{Phase: RestartFailed, Attempt: attempt, Connection: n, Err: g.cause})
			cause, last = g.cause, g
			continue
		default:
		}
		// The attempt succeeded: only now does each session restored hear
		// of it, once, before any call goes through again.
		ids := make([]string, len(restored))
		for i, s := range restored {
			s.restored()
			ids[i] = s.id
		}
		c.mu.Lock()
		close(c.ready)
		c.mu.Unlock()
		c.observe(RestartEvent{Phase: RestartRestored, Attempt: attempt, Connection: n, Restored: ids, Lost: lostSoFar})
		lostSoFar = nil // a death of g starts another restart, with its own
		if sup.settled(g) {
			return
		}
		// The new connection died already: its death is this run's.
		c.mu.Lock()
		select {
		case <-c.ready:
			c.ready = make(chan struct{})
		default:
		}
		c.mu.Unlock()
		cause, last = g.cause, g
		c.observe(RestartEvent{Phase: RestartDied, Connection: g.n, Err: g.cause})
	}
}

// giveUp ends the client after a restart failed for good (err), or was
// stopped by Close (err nil: Close ends the client itself).
func (c *Client) giveUp(err error) {
	if err != nil {
		c.end(err)
	}
	c.observe(RestartEvent{Phase: RestartGaveUp, Err: c.Err()})
}

// fatalRestartError is a restart failure that no further attempt can mend.
type fatalRestartError struct{ err error }

func (e *fatalRestartError) Error() string { return e.err.Error() }

// reconnect opens connection n, initializes it as Connect did,
// authenticates and makes it the client's current connection (calls still
// wait: c.ready stays open until the sessions are restored).
func (c *Client) reconnect(ctx context.Context, n int) (*agentConn, error) {
	offered, _ := c.opts.offeredVersion() // Connect checked it
	g, err := c.dial(ctx, n, offered)
	if errors.Is(err, schema.ErrUnsupportedVersion) {
		return g, &fatalRestartError{err} // another attempt gets the same answer
	}
	if err != nil {
		return g, err
	}
	if g.version != c.version {
		return g, &fatalRestartError{fmt.Errorf("%w: the restarted agent answered protocol version %d; the client speaks %d", schema.ErrUnsupportedVersion, max(1, g.version), max(1, c.version))}
	}
	c.mu.Lock()
	if c.life.ended {
		c.mu.Unlock()
		return g, &fatalRestartError{c.life.endErr}
	}
	c.conn.Store(g)
	c.mu.Unlock()
	if err := c.reauthenticate(withConn(ctx, g)); err != nil {
		select {
		case <-g.done: // it died meanwhile: an ordinary failed attempt
			return g, err
		default:
		}
		return g, &fatalRestartError{fmt.Errorf("re-authenticating the restarted agent: %w", err)}
	}
	return g, nil
}

// reauthenticate runs RestartPolicy.Reauthenticate, or repeats the last
// successful Authenticate.
func (c *Client) reauthenticate(ctx context.Context) error {
	if h := c.sup.p.Reauthenticate; h != nil {
		return h(ctx, c)
	}
	c.mu.Lock()
	req := c.lastAuth
	c.mu.Unlock()
	if req == nil {
		return nil
	}
	_, err := c.Authenticate(ctx, req)
	return err
}
