package acp

// failRunningTurns ends, with reason, every session's own turn that is
// still running when the connection ends. In v2 a turn outlives the answer
// to its session/prompt (that answer only accepts it; the turn ends at the
// agent's idle), so it is in no pending call that the end fails, and would
// otherwise wait for ever — or, after a restart, end "successfully" at the
// idle the restored session reports. In v1 such a turn's prompt was
// pending and has ended already (fail is then a no-op). Children's turns
// are failChildTurns'.
func (c *Client) failRunningTurns(reason error) {
	c.mu.Lock()
	var turns []*Turn
	for _, s := range c.sessions {
		s.mu.Lock()
		if t := s.turn; t != nil && !t.life.ended && !t.byAgent {
			turns = append(turns, t)
		}
		s.mu.Unlock()
	}
	c.mu.Unlock()
	for _, t := range turns {
		t.fail(callError(MethodSessionPrompt, reason))
	}
}
