// Package climbs is the fixture of TestClimbs: three owners and the calls
// between them that the walk must count, or must not.
package climbs

type Client struct {
	routing routing
	s       *Session
}

type routing struct{ c *Client }

type Session struct {
	c    *Client
	turn *Turn
}

type Turn struct {
	s    *Session
	life life
}

type life struct{}

type observer interface{ seen() }

func (c *Client) onUpdate() {
	c.routing.route() // the client's part: same layer
	c.s.apply()       // down
}

func (r routing) route() {}

func (s *Session) apply() {
	s.turn.fold()   // down
	helper(s.c)     // a plain function runs in its caller's layer
	go s.c.report() // another goroutine: not followed
	var o observer
	o.seen() // an interface: not followed
	f := s.c.report
	f()                     // a function value: not followed
	func() { s.c.diag() }() // a literal is its function's: counted, once
	s.c.diag()
}

func (t *Turn) fold() {
	t.life.step()
	t.s.notify() // a climb: turn → session
	t.s.c.diag() // a climb: turn → client
}

func (l life) step() {}

func helper(c *Client) { c.diag() } // a climb from the session's layer

func (s *Session) notify() {}
func (c *Client) diag()    {}
func (c *Client) report()  {}
